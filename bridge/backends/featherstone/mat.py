"""spatial_v2 models in MATLAB ``.mat`` files: :func:`save_mat` writes a struct spatial_v2 uses
directly (plus bridge's metadata in extra ``bridge_*`` fields), :func:`load_mat` reads it back or
reads a struct written by MATLAB / Octave."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bridge._files import file_status, open_model_file, write_atomic
from bridge.errors import ModelError, ModelFileNotFoundError, UnsupportedError
from bridge.spatial import Transform

from .model import DEFAULT_GRAVITY, FeatherstoneModel, normalise_jtype

__all__ = ["load_mat", "save_mat"]


def _cell(items: Sequence[object]) -> np.ndarray:
    out = np.empty((1, len(items)), dtype=object)
    for i, x in enumerate(items):
        out[0, i] = x
    return out


def save_mat(
    fmodel: FeatherstoneModel, path: str | Path, variable: str = "model", *, replace: bool = True
) -> None:
    """Write ``fmodel`` to a MATLAB ``.mat`` file as a struct spatial_v2 can use directly.

    The struct has NB (double), parent (1xNB double), jtype (1xNB cell of char), Xtree and I (1xNB
    cells of 6x6 double) and gravity (3x1 double); bridge's metadata is stored in extra fields
    named ``bridge_*`` (spatial_v2 ignores them), so :func:`load_mat` restores the same model.

    The file is written atomically (:func:`bridge._files.write_atomic`: a temporary file renamed
    over ``path``, nothing half-written on any failure); an existing file is replaced unless
    ``replace=False`` (then a :class:`bridge.FileAccessError`, as for a directory or a FIFO).
    """
    import io

    import scipy.io

    placements = list(fmodel.placements.items())
    struct = {
        "NB": float(fmodel.NB),
        "parent": np.array([fmodel.parent], dtype=np.float64).reshape(1, fmodel.NB),
        "jtype": _cell(list(fmodel.jtype)),
        "Xtree": _cell([np.array(x) for x in fmodel.Xtree]),
        "I": _cell([np.array(x) for x in fmodel.I]),
        "gravity": fmodel.gravity.reshape(3, 1).copy(),
        "bridge_name": fmodel.name,
        "bridge_base": fmodel.base,
        "bridge_floating": float(bool(fmodel.floating)),
        "bridge_body_names": _cell(list(fmodel.body_names)),
        "bridge_joint_names": _cell(list(fmodel.joint_names)),
        "bridge_joint_kinds": _cell(list(fmodel.joint_kinds)),
        "bridge_dof_names": _cell(list(fmodel.dof_names)),
        "bridge_dof_perm": np.array(fmodel.dof_perm, dtype=np.float64).reshape(1, -1),
        "bridge_frame_names": _cell([n for n, _ in placements]),
        "bridge_frame_bodies": np.array([float(b) for _, (b, _) in placements]).reshape(1, -1),
        "bridge_frame_poses": _cell([np.array(H.matrix) for _, (_, H) in placements]),
        "bridge_base_inertia": np.array(fmodel.base_inertia),
    }
    buffer = io.BytesIO()
    scipy.io.savemat(buffer, {variable: struct}, do_compression=True)
    write_atomic(path, buffer.getvalue(), replace=replace, what="MATLAB file")


def _flat_cells(x: object) -> list:
    """Elements of a MATLAB cell array / numeric row as loaded by scipy (any shape) in order."""
    if isinstance(x, np.ndarray) and (x.dtype == object or x.dtype.names):  # a cell or a struct array
        return [e for e in x.reshape(-1, order="F")]
    return [x]


def _as_str(x: object) -> str:
    if isinstance(x, str):
        return x
    a = np.asarray(x)
    if a.size == 0:
        return ""
    if a.dtype.kind in "US":
        return "".join(str(s) for s in a.reshape(-1))
    if a.dtype == object:
        return _as_str(a.reshape(-1)[0])
    raise ModelError(f"expected a string, got {a!r}")


def _numeric(x: object) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype == object:
        a = np.asarray(a.reshape(-1)[0])
    return np.asarray(a, dtype=np.float64)


def _joint_code(x: object, path: Path) -> str:
    """One jtype entry: a string, or a struct whose string field ``code`` is the joint code (as
    spatial_v2's ``jcalc`` accepts; a helical joint's ``pars`` are not read: it is unsupported)."""
    a = x
    if isinstance(a, np.ndarray) and a.dtype == object and a.size == 1:
        a = a.reshape(-1)[0]
    if isinstance(a, np.ndarray | np.void) and a.dtype.names:  # a struct (or one of a struct array)
        if "code" not in a.dtype.names:
            raise ModelError(f"{path}: a jtype entry is a struct without a 'code' field {a.dtype.names}")
        return _as_str((a.reshape(-1)[0] if isinstance(a, np.ndarray) else a)["code"])
    return _as_str(a)


def _matrices(raw: object, field: str, path: Path) -> list[np.ndarray]:
    """The 6x6 matrices of a cell field (Xtree or I)."""
    out = []
    for i, e in enumerate(_flat_cells(raw), start=1):
        a = _numeric(e)
        if a.size == 9:
            raise UnsupportedError(
                f"{path}: {field}{{{i}}} of body {i} is 3x3: a planar model, which bridge does not model "
                "(spatial 6x6 trees only)"
            )
        if a.size != 36:
            raise ModelError(f"{path}: {field}{{{i}}} of body {i} must be 6x6, got shape {a.shape}")
        out.append(a.reshape(6, 6))
    return out


def _read_struct(path: str | Path, variable: str | None) -> tuple[np.void, Path]:
    """The struct ``variable`` of the ``.mat`` file ``path`` (default: "model", else the only struct
    in the file) and the file's Path."""
    import scipy.io

    p = Path(path)
    if file_status(p, "MATLAB file") == "missing":
        raise ModelFileNotFoundError(f"model file not found: {str(path)!r}")
    with open_model_file(p, "MATLAB file") as f:
        try:
            data = scipy.io.loadmat(f)
        except Exception as exc:
            raise ModelError(f"{p}: not a readable MATLAB file ({exc})") from None
    structs = {k: v for k, v in data.items() if not k.startswith("__")}
    if variable is None:
        variable = "model" if "model" in structs else (next(iter(structs)) if len(structs) == 1 else None)
    if variable is None or variable not in structs:
        raise ModelError(f"{p}: no struct {variable or 'model'!r} (variables: {sorted(structs)})")
    s = structs[variable]
    if not (isinstance(s, np.ndarray) and s.dtype.names):
        raise ModelError(f"{p}: variable {variable!r} is not a struct")
    s = s.reshape(-1)[0]
    for req in ("NB", "parent", "jtype", "Xtree", "I"):
        if req not in s.dtype.names:
            raise ModelError(f"{p}: struct {variable!r} has no field {req!r}")
    return s, p


def _field(s: np.void, name: str, default: object = None) -> object:
    """Field ``name`` of the struct ``s``, or ``default`` when it has none."""
    return s[name] if name in s.dtype.names else default


def _joint_codes(s: np.void, NB: int, p: Path) -> list[str]:
    """The joint code of each body (NB,), each checked (an unsupported one raises naming the body)."""
    jtype_raw = _field(s, "jtype")
    if jtype_raw.dtype == object or jtype_raw.dtype.names:  # a cell, or a struct array of codes
        jtype = [_joint_code(e, p) for e in _flat_cells(jtype_raw)]
    else:
        jtype = [_as_str(jtype_raw)]
    if NB == 1 and len(jtype) != 1:
        jtype = ["".join(jtype)]
    for i, code in enumerate(jtype, start=1):  # before the matrices: a planar model has 3x3 ones
        normalise_jtype(code, i, str(p))
    return jtype


def _gravity(s: np.void) -> np.ndarray:
    """The gravity (3,) as spatial_v2's ``get_gravity`` reads it: the default without the field, else
    its first three entries."""
    gravity = _field(s, "gravity")
    g = _numeric(gravity).reshape(-1) if gravity is not None else np.array(DEFAULT_GRAVITY)
    if g.size > 3:  # spatial_v2's get_gravity reads g(1:3) whatever the length
        g = g[:3]
    return g


def _strings(raw: object) -> tuple[str, ...]:
    """The strings of a cell field (empty for a missing or empty one)."""
    return tuple(_as_str(e) for e in _flat_cells(raw)) if raw is not None and raw.size else ()


def _bridge_metadata(s: np.void) -> dict[str, object]:
    """The keyword arguments of :class:`FeatherstoneModel` that :func:`save_mat` writes as
    ``bridge_*`` fields: names, base, floating, DOF names and permutation, frame placements (body,
    4x4 pose in the body) and the base inertia (6, 6)."""
    kw: dict[str, object] = {
        "name": _as_str(_field(s, "bridge_name")),
        "base": _as_str(_field(s, "bridge_base")),
        "floating": bool(_numeric(_field(s, "bridge_floating")).reshape(-1)[0]),
    }
    for key in ("body_names", "joint_names", "joint_kinds", "dof_names"):
        kw[key] = _strings(_field(s, f"bridge_{key}"))
    kw["dof_perm"] = np.round(_numeric(_field(s, "bridge_dof_perm")).reshape(-1)).astype(np.intp)
    fnames = list(_strings(_field(s, "bridge_frame_names")))
    bodies = (
        [round(float(b)) for b in _numeric(_field(s, "bridge_frame_bodies")).reshape(-1)] if fnames else []
    )
    poses = (
        [_numeric(e).reshape(4, 4) for e in _flat_cells(_field(s, "bridge_frame_poses"))] if fnames else []
    )
    kw["placements"] = {n: (b, Transform(H)) for n, b, H in zip(fnames, bodies, poses, strict=True)}
    kw["base_inertia"] = _numeric(_field(s, "bridge_base_inertia")).reshape(6, 6)
    return kw


def load_mat(path: str | Path, variable: str | None = None) -> FeatherstoneModel:
    """Read a spatial_v2 model struct from a ``.mat`` file (written by :func:`save_mat` or MATLAB).

    ``variable`` is the struct's name (default: "model", else the only struct in the file). Missing
    ``gravity`` means spatial_v2's default [0; 0; -9.81]; a longer one is read as spatial_v2's
    ``get_gravity`` reads it: its first three entries (so a 6-element ``[0; 0; 0; 0; 0; -9.81]`` is
    zero gravity, as in spatial_v2). A ``jtype`` entry may be a joint code or a struct with a
    ``code`` field. Joint codes bridge does not model (helical ``'H'``, the planar ``'r'``, ``'px'``,
    ``'py'``) and planar models (3x3 ``Xtree``) raise :class:`bridge.UnsupportedError` naming the body.
    The bridge metadata fields are used when present.
    """
    s, p = _read_struct(path, variable)
    NB = round(float(_numeric(_field(s, "NB")).reshape(-1)[0]))
    parent = [round(float(v)) for v in _numeric(_field(s, "parent")).reshape(-1)]
    jtype = _joint_codes(s, NB, p)
    Xtree = _matrices(_field(s, "Xtree"), "Xtree", p)
    inertias = _matrices(_field(s, "I"), "I", p)
    g = _gravity(s)
    kw = _bridge_metadata(s) if "bridge_name" in s.dtype.names else {"name": p.stem}
    return FeatherstoneModel(
        NB=NB,
        parent=tuple(parent),
        jtype=tuple(jtype),
        Xtree=np.array(Xtree),
        I=np.array(inertias),
        gravity=g,
        **kw,
    )
