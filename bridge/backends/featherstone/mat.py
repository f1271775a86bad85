"""spatial_v2 models in MATLAB ``.mat`` files: :func:`save_mat` writes a struct spatial_v2 uses
directly (plus bridge's metadata in extra ``bridge_*`` fields), :func:`load_mat` reads it back or
reads a struct written by MATLAB / Octave."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bridge.errors import ModelError, ModelFileNotFoundError
from bridge.spatial import Transform

from .model import DEFAULT_GRAVITY, FeatherstoneModel

__all__ = ["load_mat", "save_mat"]


def _cell(items: Sequence[object]) -> np.ndarray:
    out = np.empty((1, len(items)), dtype=object)
    for i, x in enumerate(items):
        out[0, i] = x
    return out


def save_mat(fmodel: FeatherstoneModel, path: str | Path, variable: str = "model") -> None:
    """Write ``fmodel`` to a MATLAB ``.mat`` file as a struct spatial_v2 can use directly.

    The struct has NB (double), parent (1xNB double), jtype (1xNB cell of char), Xtree and I (1xNB
    cells of 6x6 double) and gravity (3x1 double); bridge's metadata is stored in extra fields
    named ``bridge_*`` (spatial_v2 ignores them), so :func:`load_mat` restores the same model.
    """
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
    scipy.io.savemat(str(path), {variable: struct}, do_compression=True)


def _flat_cells(x: object) -> list:
    """Elements of a MATLAB cell array / numeric row as loaded by scipy (any shape) in order."""
    if isinstance(x, np.ndarray) and x.dtype == object:
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


def load_mat(path: str | Path, variable: str | None = None) -> FeatherstoneModel:
    """Read a spatial_v2 model struct from a ``.mat`` file (written by :func:`save_mat` or MATLAB).

    ``variable`` is the struct's name (default: "model", else the only struct in the file). Missing
    ``gravity`` means spatial_v2's default [0; 0; -9.81]. The bridge metadata fields are used when
    present.
    """
    import scipy.io

    p = Path(path)
    if not p.is_file():
        raise ModelFileNotFoundError(f"model file not found: {str(path)!r}")
    try:
        data = scipy.io.loadmat(str(p))
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
    fields = s.dtype.names

    def get(name: str, default=None):
        return s[name] if name in fields else default

    for req in ("NB", "parent", "jtype", "Xtree", "I"):
        if req not in fields:
            raise ModelError(f"{p}: struct {variable!r} has no field {req!r}")
    NB = round(float(_numeric(get("NB")).reshape(-1)[0]))
    parent = [round(float(v)) for v in _numeric(get("parent")).reshape(-1)]
    jtype_raw = get("jtype")
    jtype = (
        [_as_str(e) for e in _flat_cells(jtype_raw)] if jtype_raw.dtype == object else [_as_str(jtype_raw)]
    )
    if NB == 1 and len(jtype) != 1:
        jtype = ["".join(jtype)]
    Xtree = [_numeric(e).reshape(6, 6) for e in _flat_cells(get("Xtree"))]
    inertias = [_numeric(e).reshape(6, 6) for e in _flat_cells(get("I"))]
    gravity = get("gravity")
    g = _numeric(gravity).reshape(-1) if gravity is not None else np.array(DEFAULT_GRAVITY)
    if g.shape == (6,):  # spatial_v2 also accepts a 6D spatial gravity (angular first)
        g = g[3:]
    kw: dict[str, object] = {}
    if "bridge_name" in fields:
        kw["name"] = _as_str(get("bridge_name"))
        kw["base"] = _as_str(get("bridge_base"))
        kw["floating"] = bool(_numeric(get("bridge_floating")).reshape(-1)[0])
        for key in ("body_names", "joint_names", "joint_kinds", "dof_names"):
            raw = get(f"bridge_{key}")
            kw[key] = tuple(_as_str(e) for e in _flat_cells(raw)) if raw is not None and raw.size else ()
        perm = _numeric(get("bridge_dof_perm")).reshape(-1)
        kw["dof_perm"] = np.round(perm).astype(np.intp)
        names_raw = get("bridge_frame_names")
        fnames = (
            [_as_str(e) for e in _flat_cells(names_raw)] if names_raw is not None and names_raw.size else []
        )
        bodies = [round(float(b)) for b in _numeric(get("bridge_frame_bodies")).reshape(-1)] if fnames else []
        poses_raw = get("bridge_frame_poses")
        poses = [_numeric(e).reshape(4, 4) for e in _flat_cells(poses_raw)] if fnames else []
        kw["placements"] = {n: (b, Transform(H)) for n, b, H in zip(fnames, bodies, poses, strict=True)}
        kw["base_inertia"] = _numeric(get("bridge_base_inertia")).reshape(6, 6)
    else:
        kw["name"] = p.stem
    return FeatherstoneModel(
        NB=NB,
        parent=tuple(parent),
        jtype=tuple(jtype),
        Xtree=np.array(Xtree),
        I=np.array(inertias),
        gravity=g,
        **kw,
    )
