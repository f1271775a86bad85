"""Files of states: NPZ, CSV and Parquet converted block by block, exactly, in any column order, other
columns carried through; bad files named by file, row and column, with nothing written."""

from __future__ import annotations

import itertools
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pcsv = pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")

import bridge  # noqa: E402
from bridge.datasets.convert import state_columns  # noqa: E402
from bridge.errors import DatasetError  # noqa: E402
from tests.datasets.helpers import close, native_states  # noqa: E402

_FORMATS = ("npz", "csv", "parquet")
_MODEL = bridge.load_urdf("solo12")


def _table(
    model: bridge.Model, conv: str, n: int, seed: int = 0, fields=("q", "v", "a")
) -> dict[str, np.ndarray]:
    """Column name -> values of ``n`` states in ``conv`` (and a time column)."""
    q, v, a, tau = native_states(model, n, conv, seed)
    arrays = {"q": q, "v": v, "a": a, "tau": tau}
    out = {"time": np.arange(n) * 0.002}
    for f in fields:
        out.update(zip(state_columns(model, conv, (f,)), arrays[f].T, strict=True))
    return out


def _write(path: Path, columns: dict[str, np.ndarray], order: list[str] | None = None) -> None:
    names = order or list(columns)
    if path.suffix == ".npz":
        groups: dict[str, list[str]] = {}
        for name in names:
            f = name.rpartition("/")[2].rstrip("0123456789") if "/" in name else None
            groups.setdefault(f or name, []).append(name)
        arrays = {}
        for key, cols in groups.items():
            if key in ("q", "v", "a", "tau"):
                arrays[key] = np.stack([columns[c] for c in cols], -1)
                arrays[f"{key}_columns"] = np.array(cols)
            else:
                arrays[key] = columns[key]
        np.savez(path, **arrays)
        return
    table = pa.table({n: columns[n] for n in names})
    if path.suffix == ".csv":
        pcsv.write_csv(table, path)
    else:
        pq.write_table(table, path)


def _read(path: Path) -> dict[str, np.ndarray]:
    """Column name -> values of an output file (NPZ arrays split into their named columns)."""
    if path.suffix == ".npz":
        z = np.load(path)
        out = {}
        for key in z.files:
            if key.endswith("_columns"):
                continue
            if f"{key}_columns" in z.files:
                out.update(zip(z[f"{key}_columns"].tolist(), z[key].T, strict=True))
            else:
                out[key] = z[key]
        return out
    table = pcsv.read_csv(path) if path.suffix == ".csv" else pq.read_table(path)
    return {n: table[n].to_numpy() for n in table.column_names}


@pytest.mark.parametrize(("fin", "fout"), list(itertools.product(_FORMATS, _FORMATS)))
def test_every_format_to_every_format_round_trips_exactly(tmp_path: Path, fin: str, fout: str) -> None:
    columns = _table(_MODEL, "mujoco", 2_500, 1)
    src = tmp_path / f"in.{fin}"
    _write(src, columns)
    there, back = tmp_path / f"there.{fout}", tmp_path / f"back.{fin}"
    s1 = bridge.convert_dataset(_MODEL, src, there, "mujoco", "drake", rows=700)
    s2 = bridge.convert_dataset(_MODEL, there, back, "drake", "mujoco", rows=1_000)
    assert s1.rows == s2.rows == 2_500
    got = _read(back)
    for name, values in columns.items():
        if name.endswith(tuple(f"/q{k}" for k in range(7))) or name == "time":
            assert np.array_equal(got[name], values), name  # bit for bit (quaternion signs too)
        else:
            close(got[name], values, 1e-12, name)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_output_holds_what_convert_states_and_compute_give(tmp_path: Path) -> None:
    model = bridge.load_urdf("iCubGazeboV2_5")
    columns = _table(model, "mujoco", 600, 2)
    names = list(columns)
    order = [names[i] for i in np.random.default_rng(0).permutation(len(names))]  # any column order
    src = tmp_path / "in.parquet"
    _write(src, columns, order)
    out = tmp_path / "out.npz"
    quantities = ["inverse_dynamics", "frame_jacobian:l_sole"]
    bridge.convert_dataset(model, src, out, "mujoco", "pinocchio", quantities=quantities, rows=128)
    z = np.load(out)
    q = np.stack([columns[n] for n in state_columns(model, "mujoco", ("q",))], -1)
    v = np.stack([columns[n] for n in state_columns(model, "mujoco", ("v",))], -1)
    a = np.stack([columns[n] for n in state_columns(model, "mujoco", ("a",))], -1)
    ref = bridge.convert_states(model, q, v, "mujoco", "pinocchio", acceleration=a)
    labels = bridge.compute(model, (q, v), quantities, convention="mujoco", acceleration=a)
    assert (
        np.array_equal(z["q"], ref.q)
        and np.array_equal(z["v"], ref.v)
        and np.array_equal(z["a"], ref.acceleration)
    )
    assert tuple(z["q_columns"].tolist()) == state_columns(model, "pinocchio", ("q",))
    for key, value in labels.items():
        assert np.array_equal(z[key], value), key
    assert np.array_equal(z["time"], columns["time"])


def test_labels_only_and_csv_label_columns(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    _write(src, _table(_MODEL, "pinocchio", 50))
    out = tmp_path / "labels.csv"
    summary = bridge.convert_dataset(
        _MODEL, src, out, "pinocchio", quantities=["mass_matrix", "com_position"]
    )
    header = out.read_text().splitlines()[0].split(",")
    assert header[0] == "time" and "mass_matrix[0][0]" in header and header[-1] == "com_position[2]"
    assert not any("/q" in h for h in header) and summary.target is None
    assert "labels mass_matrix, com_position" in summary.line()


def test_npz_with_mujoco_names_and_metadata(tmp_path: Path) -> None:
    q, v, a, _ = native_states(_MODEL, 40, "mujoco", 5)
    src = tmp_path / "rollout.npz"
    np.savez(src, qpos=q, qvel=v, qacc=a, ctrl=np.ones((40, 12)), dt=np.float64(0.002))
    out = tmp_path / "pin.npz"
    bridge.convert_dataset(_MODEL, src, out, "mujoco", "pinocchio")
    z = np.load(out)
    ref = bridge.convert_states(_MODEL, q, v, "mujoco", "pinocchio", acceleration=a)
    assert np.array_equal(z["q"], ref.q) and np.array_equal(z["a"], ref.acceleration)
    assert np.array_equal(z["ctrl"], np.ones((40, 12))) and float(z["dt"]) == 0.002
    with pytest.warns(bridge.BridgeWarning, match=r"arrays of no axes \(dt\) are not carried"):
        bridge.convert_dataset(_MODEL, src, tmp_path / "pin.csv", "mujoco", "pinocchio")
    fortran = tmp_path / "fortran.npz"
    np.savez(fortran, qpos=np.asfortranarray(q), qvel=np.asfortranarray(v))
    bridge.convert_dataset(_MODEL, fortran, tmp_path / "f.npz", "mujoco", "pinocchio", rows=7)
    assert np.array_equal(np.load(tmp_path / "f.npz")["v"], ref.v)


def _bad(tmp_path: Path, name: str, columns: dict, edit=None, fmt="csv") -> str:
    src = tmp_path / f"{name}.{fmt}"
    _write(src, columns)
    if edit is not None:
        edit(src)
    out = tmp_path / f"{name}_out.parquet"
    with pytest.raises(DatasetError) as info:
        bridge.convert_dataset(_MODEL, src, out, "mujoco", "pinocchio", rows=16)
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    return str(info.value)


def test_bad_files_are_named_by_file_row_and_column(tmp_path: Path) -> None:
    columns = _table(_MODEL, "mujoco", 60, 3)  # time, 19 q, 18 v, 18 a: 56 columns
    names = list(columns)
    qname = state_columns(_MODEL, "mujoco", ("q",))[9]
    at = names.index(qname)
    msg = _bad(tmp_path, "text", columns, _cell(41, at, "abc"))
    assert msg == f"{tmp_path / 'text.csv'}, row 41 (line 42), column {qname!r}: 'abc' is not a number"
    msg = _bad(tmp_path, "empty", columns, _cell(5, at, ""))
    assert f"empty.csv, row 5, column {qname!r}: empty (a number is expected)" in msg
    msg = _bad(tmp_path, "short", columns, _cell(30, len(names) - 1, None))
    assert msg.endswith("short.csv, row 30 (line 31): 55 fields, but the header has 56 columns")
    nan = {**columns, qname: columns[qname].copy()}
    nan[qname][17] = np.nan
    assert f"nan.csv, row 18, column {qname!r}: nan is not a finite number" in _bad(tmp_path, "nan", nan)
    tilted = {**columns, "base/q3": columns["base/q3"] * 1.5}
    msg = _bad(tmp_path, "quat", tilted, fmt="parquet")
    assert (
        "quat.parquet, row 1, columns 'base/q3', 'base/q4', 'base/q5', 'base/q6': the base's quaternion"
        in msg
    )
    missing = {k: v for k, v in columns.items() if k != qname}
    assert f"missing configuration column {qname!r}" in _bad(tmp_path, "missing", missing, fmt="parquet")
    extra = {**columns, "FL_KFE_2/v0": columns["time"]}
    msg = _bad(tmp_path, "extra", extra, fmt="npz")
    assert "column 'FL_KFE_2/v0' names joint 'FL_KFE_2', which model 'solo' does not have as a DOF" in msg
    words = {**columns, qname: np.where(np.arange(60) == 33, "x1", columns[qname].astype(str))}
    msg = _bad(tmp_path, "words", words, fmt="parquet")
    assert f"words.parquet, row 34, column {qname!r}: 'x1' is not a number" in msg


def test_bad_npz_archives_are_named(tmp_path: Path) -> None:
    q, v, _, _ = native_states(_MODEL, 10, "mujoco", 1)
    cases = {
        "rows": ({"qpos": q, "qvel": v[:9]}, "array 'qvel' has 9 rows, but 'qpos' has 10"),
        "both": ({"q": q, "qpos": q, "v": v}, "arrays 'q' and 'qpos' are both the q field"),
        "width": (
            {"q": q[:, :-1], "v": v},
            "the configuration array has 18 columns, but model 'solo' has 19",
        ),
        "noq": ({"v": v}, "no configuration array (named 'q' or 'qpos')"),
        "text": ({"q": q.astype(str), "v": v}, "array 'q' holds <U"),
        "time": (
            {"q": q, "v": v, "time": np.zeros(3)},
            "array 'time' has shape (3,), but the states have 10 rows",
        ),
        "objects": ({"q": q, "v": v, "meta": np.array([{}, 1], dtype=object)}, "holds Python objects"),
    }
    for name, (arrays, message) in cases.items():
        src = tmp_path / f"{name}.npz"
        np.savez(src, **arrays)
        with pytest.raises(DatasetError) as info:
            bridge.convert_dataset(_MODEL, src, tmp_path / f"{name}_out.npz", "mujoco", "pinocchio")
        assert str(info.value).startswith(str(src)) and message in str(info.value), (name, str(info.value))
        assert not (tmp_path / f"{name}_out.npz").exists()


def test_outputs_are_never_overwritten_unasked(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    _write(src, _table(_MODEL, "mujoco", 20))
    out = tmp_path / "out.csv"
    out.write_text("keep me")
    with pytest.raises(DatasetError, match="exists; add --force"):
        bridge.convert_dataset(_MODEL, src, out, "mujoco", "pinocchio")
    assert out.read_text() == "keep me"
    with pytest.raises(DatasetError, match="is an input of this command"):
        bridge.convert_dataset(_MODEL, src, src, "mujoco", "pinocchio", force=True)
    bridge.convert_dataset(_MODEL, src, out, "mujoco", "pinocchio", force=True)
    assert out.read_text().startswith("time,base/q0,")
    with pytest.raises(DatasetError, match=r"unknown file format '\.txt'"):
        bridge.convert_dataset(_MODEL, src, tmp_path / "out.txt", "mujoco", "pinocchio")
    with pytest.raises(DatasetError, match="no such file"):
        bridge.convert_dataset(_MODEL, tmp_path / "nope.csv", tmp_path / "o.csv", "mujoco", "pinocchio")


@pytest.mark.parametrize("fmt", _FORMATS)
def test_memory_does_not_grow_with_the_number_of_states(tmp_path: Path, fmt: str) -> None:
    """Converting N and 10 N states in blocks of 500 rows: the peak of numpy's allocations
    (tracemalloc) is the same within a few blocks, and pyarrow's allocations (sampled after every
    block) too, below pyarrow's CSV read-ahead window (about 32 blocks of 1 MB): the readers keep no
    block they gave (a Parquet file of row groups of 500 rows)."""
    sizes = (8_000, 80_000) if fmt == "csv" else (4_000, 40_000)
    numpy_peaks, arrow_peaks = [], []
    for n in sizes:
        src = tmp_path / f"in{n}.{fmt}"
        columns = _table(_MODEL, "mujoco", n, n)
        if fmt == "parquet":
            pq.write_table(pa.table(columns), src, row_group_size=500)
        else:
            _write(src, columns)
        arrow: list[int] = []
        tracemalloc.start()
        bridge.convert_dataset(
            _MODEL, src, tmp_path / f"out{n}.{fmt}", "mujoco", "pinocchio", rows=500,
            progress=lambda done, total, arrow=arrow: arrow.append(pa.total_allocated_bytes()),
        )  # fmt: skip
        numpy_peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        arrow_peaks.append(max(arrow))
    block = 500 * 56 * 8
    assert numpy_peaks[1] < numpy_peaks[0] + 4 * block, numpy_peaks
    assert numpy_peaks[1] < sizes[1] * 56 * 8 / 4, numpy_peaks  # far below the data's size
    # CSV: pyarrow's read-ahead window, filled by a file larger than it; the others: no growth
    assert arrow_peaks[1] < (48 << 20 if fmt == "csv" else arrow_peaks[0] + (4 << 20)), arrow_peaks


def test_csv_blocks_stay_small_whatever_the_rows_asked(tmp_path: Path, monkeypatch) -> None:
    """pyarrow's streaming CSV reader decodes about 32 of its blocks ahead: its blocks stay small
    (gathered into the rows asked for), so a large ``rows`` does not read the whole file at once."""
    src = tmp_path / "in.csv"
    _write(src, _table(_MODEL, "mujoco", 3_000))
    sizes: list[int] = []
    real = pcsv.open_csv

    def spy(path, read_options=None, **kw):
        sizes.append(read_options.block_size)
        return real(path, read_options=read_options, **kw)

    monkeypatch.setattr(pcsv, "open_csv", spy)
    from bridge.datasets.csv_files import CsvReader

    blocks = list(CsvReader(src).blocks(1_000_000, [n for n in _table(_MODEL, "mujoco", 1) if n != "time"]))
    assert sizes == [1 << 20] and [b.n for b in blocks] == [3_000]


def _cell(row: int, column: int, value: str | None):
    """An edit of a CSV file: data row ``row`` (from 1), field ``column`` set to ``value`` (None:
    removed)."""

    def edit(path: Path) -> None:
        lines = path.read_text().splitlines()
        cells = lines[row].split(",")
        if value is None:
            del cells[column]
        else:
            cells[column] = value
        lines[row] = ",".join(cells)
        path.write_text("\n".join(lines) + "\n")

    return edit


_BAD_VALUES = {
    "nan": (np.nan, "nan is not a finite number"),
    "inf": (-np.inf, "-inf is not a finite number"),
    "text": ("ab c", "'ab c' is not a number"),
}


@settings(max_examples=20)
@given(
    row=st.integers(0, 39),
    column=st.integers(0, 55),
    bad=st.sampled_from(sorted(_BAD_VALUES)),
    fmt=st.sampled_from(["csv", "parquet"]),
)
def test_any_bad_cell_is_named_by_its_row_and_column(row: int, column: int, bad: str, fmt: str) -> None:
    """One bad cell anywhere in a state column: the error names its row (from 1) and column, and
    nothing is written."""
    import tempfile

    columns = _table(_MODEL, "mujoco", 40, 8)
    names = [n for n in columns if n != "time"]
    name = names[column % len(names)]
    value, problem = _BAD_VALUES[bad]
    cells = columns[name].astype(object) if bad == "text" else columns[name].copy()
    cells[row] = value
    if bad == "text":
        cells = cells.astype(str)
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / f"in.{fmt}", Path(tmp) / "out.npz"
        _write(src, {**columns, name: cells})
        with pytest.raises(DatasetError) as info:
            bridge.convert_dataset(_MODEL, src, out, "mujoco", "pinocchio", rows=16)
        where = f"row {row + 1} (line {row + 2})" if (fmt == "csv" and bad == "text") else f"row {row + 1}"
        assert str(info.value) == f"{src}, {where}, column {name!r}: {problem}"
        assert sorted(p.name for p in Path(tmp).iterdir()) == [src.name]


def test_a_scene_with_free_bodies_round_trips_through_files(tmp_path: Path) -> None:
    """A fixed world with free bodies and continuous joints: MuJoCo -> Pinocchio -> MuJoCo through
    Parquet and CSV, quaternions of both signs kept bit for bit."""
    from tests.helpers import wide_model

    model = wide_model(3, floating=False)
    q, v, a, _ = native_states(model, 300, "mujoco", 6)
    src = tmp_path / "scene.npz"
    np.savez(src, qpos=q, qvel=v, qacc=a)
    bridge.convert_dataset(model, src, tmp_path / "pin.parquet", "mujoco", "pinocchio", rows=64)
    bridge.convert_dataset(model, tmp_path / "pin.parquet", tmp_path / "pin.csv", "pinocchio", "pinocchio")
    bridge.convert_dataset(model, tmp_path / "pin.csv", tmp_path / "back.npz", "pinocchio", "mujoco", rows=50)
    z = np.load(tmp_path / "back.npz")
    close(z["v"], v, 1e-12, "v")
    close(z["a"], a, 1e-12, "a")
    angles = _angles(model)  # (through Pinocchio's (cos, sin): modulo 2 pi, to rounding)
    assert angles and "free" in model.coordinates.describe()
    keep = [i for i in range(q.shape[1]) if i not in angles]
    assert np.array_equal(z["q"][:, keep], q[:, keep])
    wrapped = np.angle(np.exp(1j * (z["q"][:, angles] - q[:, angles])))
    close(wrapped, np.zeros_like(wrapped), 1e-12, "angles")


def _angles(model: bridge.Model) -> list[int]:
    """The entries of MuJoCo's q that are angles (continuous and planar joints)."""
    from bridge.datasets.layout import layout

    lay = layout(model, "mujoco")
    return [lay.q_offsets[at] + o.q.index("angle") for at, o in enumerate(lay.owners) if "angle" in o.q]
