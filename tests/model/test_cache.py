"""The on-disk cache of loaded models (:mod:`bridge.model.cache`): a cached load equals a parse
field by field and issues the same warnings; what is corrupt, truncated, foreign or unreadable is
ignored (parsed again, and replaced); failures are not cached; strict and non-strict loads, and
loads with other options, never share an entry; the folder is private; ``BRIDGE_CACHE=0`` turns it
off."""

from __future__ import annotations

import dataclasses
import os
import pickle
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bridge
import bridge.model.urdf as urdf_module
from bridge.model import cache
from bridge.model.urdf import load_urdf
from bridge.spatial import SpatialInertia, Transform

MODELS = Path(__file__).resolve().parents[2] / "models"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache on, in a fresh folder (the test suite runs with it off: tests/conftest.py)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("BRIDGE_CACHE_DIR", str(folder))
    monkeypatch.delenv("BRIDGE_CACHE", raising=False)
    return folder / "models"


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.model")) if folder.is_dir() else []


def assert_same(a: object, b: object, where: str = "model") -> None:
    """``a`` and ``b`` equal field by field, bit for bit (arrays, transforms, inertias, floats)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, np.ndarray):
        assert a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), where
    elif isinstance(a, (Transform, SpatialInertia)):
        assert_same(a.as_matrix(), b.as_matrix(), where)
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert a == b or (np.isnan(a) and np.isnan(b)), f"{where}: {a!r} != {b!r}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _caught(load) -> tuple[object, list[tuple[type, str, str, int]]]:
    """(what ``load()`` returns, the warnings it issued: category, message, file, line)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = load()
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in record]


def _parsed_and_cached(path_or_xml: object, **options) -> tuple[bridge.Model, bridge.Model, list, list]:
    """The model parsed (cache off), then loaded twice with the cache on (written, then read)."""

    def load() -> bridge.Model:  # (one line for every warning to point at)
        return load_urdf(path_or_xml, **options)

    mp = pytest.MonkeyPatch()
    try:
        mp.setenv("BRIDGE_CACHE", "0")
        parsed, w_parsed = _caught(load)
        mp.delenv("BRIDGE_CACHE")
        first, w_first = _caught(load)
        mp.setattr(urdf_module, "_parse", None)  # (a parse would fail: the next load is a hit)
        cached, w_cached = _caught(load)
    finally:
        mp.undo()
    assert w_parsed == w_first
    assert_same(first, parsed)
    return parsed, cached, w_parsed, w_cached


# --------------------------------------------------------------------------- a hit equals a parse
@pytest.mark.parametrize("name", ["iCubGazeboV2_5", "panda", "talos_reduced", "solo12", "ur5_robot"])
def test_a_cached_robot_equals_its_parse_and_warns_the_same(cache_dir: Path, name: str) -> None:
    parsed, cached, w_parsed, w_cached = _parsed_and_cached(name)
    assert_same(cached, parsed)
    assert w_cached == w_parsed  # category, message, and the caller's file and line
    assert len(_entries(cache_dir)) == 1


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 2**16),
    n_links=st.integers(1, 9),
    floating=st.booleans(),
    how=st.sampled_from(["path", "text", "bytes"]),
)
def test_a_cached_random_model_equals_its_parse(
    cache_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    n_links: int,
    floating: bool,
    how: str,
) -> None:
    model = bridge.random_model(
        n_links, seed=seed, joint_kinds=("revolute", "continuous", "prismatic", "fixed"), floating=floating
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = model.to_urdf()
    source: object = text if how == "text" else text.encode()
    if how == "path":
        source = tmp_path_factory.mktemp("urdf") / "robot.urdf"
        source.write_text(text)
    dofs = model.dof_names[::-1]
    for options in (
        {},
        {"floating": floating},
        {"joints": dofs[: len(dofs) // 2]},
        {"base": model.links[-1].name},
    ):
        parsed, cached, w_parsed, w_cached = _parsed_and_cached(source, **options)
        assert_same(cached, parsed)
        assert w_cached == w_parsed


def test_coupled_mimic_and_locked_joints_are_cached_exactly(cache_dir: Path) -> None:
    path = MODELS / "mimic_offsets.urdf"
    parsed, cached, _, _ = _parsed_and_cached(path, mimic="coupled")
    assert isinstance(cached, type(parsed)) and type(parsed).__name__ == "CoupledModel"
    assert_same(cached, parsed)
    icub = bridge.robot_path("iCubGazeboV2_5")
    locked = {"torso_pitch": 0.25, "l_elbow": -0.5}
    parsed, cached, _, _ = _parsed_and_cached(icub, locked=locked, base="l_sole", floating=False)
    assert_same(cached, parsed)
    assert cached.locked_joints == {"torso_pitch": 0.25, "l_elbow": -0.5}


# --------------------------------------------------------------------------- warnings
@pytest.mark.parametrize(
    ("file", "category"),
    [
        ("triangle_inertia.urdf", bridge.NonPhysicalInertiaWarning),
        ("not_positive_inertia.urdf", bridge.NonPhysicalInertiaWarning),
        ("mimic.urdf", bridge.MimicJointWarning),
    ],
)
def test_warnings_are_replayed_identically(cache_dir: Path, file: str, category: type) -> None:
    _, _, w_parsed, w_cached = _parsed_and_cached(MODELS / "bad" / file)
    assert w_parsed and any(c is category for c, *_ in w_parsed)
    assert w_cached == w_parsed
    assert all(f == __file__ for _, _, f, _ in w_cached)  # at the caller's line, as a parse issues them


def test_a_bogus_declaration_warning_is_replayed(cache_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "dog.urdf"
    path.write_text('<?xml version="0.0" ?>\n<robot name="dog"><link name="a"/></robot>\n')
    _, _, w_parsed, w_cached = _parsed_and_cached(path)
    assert [c for c, *_ in w_parsed] == [bridge.URDFWarning] and w_cached == w_parsed


def test_replayed_warnings_can_be_errors(cache_dir: Path) -> None:
    path = MODELS / "bad" / "triangle_inertia.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load_urdf(path)
    assert _entries(cache_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bridge.BridgeWarning)
        with pytest.raises(bridge.NonPhysicalInertiaWarning, match="link 'bad_link'"):
            load_urdf(path)


# --------------------------------------------------------------------------- what is not shared
def test_strict_and_non_strict_never_share_an_entry(cache_dir: Path) -> None:
    path = MODELS / "bad" / "triangle_inertia.urdf"
    with pytest.warns(bridge.NonPhysicalInertiaWarning):
        load_urdf(path)
    with pytest.raises(bridge.InertiaError):
        load_urdf(path, strict=True)  # not the non-strict entry
    with pytest.warns(bridge.NonPhysicalInertiaWarning):
        load_urdf(path)
    assert len(_entries(cache_dir)) == 1  # the failure was not stored
    ok = MODELS / "offsets.urdf"
    load_urdf(ok, strict=True)
    load_urdf(ok)
    assert len(_entries(cache_dir)) == 3


def test_failures_are_not_cached(cache_dir: Path) -> None:
    """Every file of models/bad, twice: each failure fails again the same way (not served from an
    entry), and only the loads that succeeded are stored."""
    loaded = 0
    for name in sorted(p.name for p in (MODELS / "bad").glob("*.urdf")):
        outcomes = []
        for _ in range(2):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    load_urdf(MODELS / "bad" / name, mimic="error")
                    outcomes.append("loaded")
                except bridge.BridgeError as exc:
                    outcomes.append(f"{type(exc).__name__}: {exc}")
        assert outcomes[0] == outcomes[1], name
        loaded += outcomes[0] == "loaded"
    assert 0 < loaded < len(list((MODELS / "bad").glob("*.urdf")))
    assert len(_entries(cache_dir)) == loaded
    with pytest.raises(bridge.UnknownNameError):
        load_urdf(MODELS / "offsets.urdf", base="no_such_link")
    with pytest.raises(bridge.UnknownNameError):
        load_urdf(MODELS / "offsets.urdf", joints=["nope"])
    assert len(_entries(cache_dir)) == loaded


def test_each_option_and_each_file_has_its_entry(cache_dir: Path, tmp_path: Path) -> None:
    icub = bridge.robot_path("iCubGazeboV2_5")
    full = load_urdf(icub)
    dofs = full.dof_names
    variants = [
        {},
        {"floating": False},
        {"base": "l_sole"},
        {"joints": dofs[::-1]},
        {"joints": dofs[:5]},
        {"locked": {"l_knee": 0.1}},
        {"locked": {"l_knee": 0.2}},
        {"check_inertia": False},
        {"mimic": "independent"},
        {"strict": True},
    ]
    models = [load_urdf(icub, **v) for v in variants]
    assert len(_entries(cache_dir)) == len(variants)
    mp = pytest.MonkeyPatch()
    mp.setattr(urdf_module, "_parse", None)
    try:
        for v, m in zip(variants, models, strict=True):
            assert_same(load_urdf(icub, **v), m)
    finally:
        mp.undo()
    # the same file elsewhere (the warnings name the path) and an edited file are other entries
    copy = tmp_path / "icub.urdf"
    copy.write_bytes(icub.read_bytes())
    load_urdf(copy)
    copy.write_bytes(re.sub(rb'<robot\s+name="[^"]*"', b'<robot name="edited"', icub.read_bytes(), count=1))
    assert load_urdf(copy).name == "edited"
    assert len(_entries(cache_dir)) == len(variants) + 2


# --------------------------------------------------------------------------- damaged entries
def _one_entry(cache_dir: Path) -> Path:
    (entry,) = _entries(cache_dir)
    return entry


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_entries_fall_back_to_the_parse_and_are_replaced(
    cache_dir: Path, data: st.DataObject
) -> None:
    def load() -> bridge.Model:
        return load_urdf(MODELS / "bad" / "triangle_inertia.urdf")

    parsed, w_parsed = _caught(load)
    entry = _one_entry(cache_dir)
    good = entry.read_bytes()
    damage = data.draw(st.sampled_from(["flip", "truncate", "insert"]))
    at = data.draw(st.integers(0, 2**20)) % len(good)  # (an entry's length varies by a few bytes)
    if damage == "flip":
        bad = good[:at] + bytes([good[at] ^ data.draw(st.integers(1, 255))]) + good[at + 1 :]
    elif damage == "truncate":
        bad = good[:at]
    else:
        bad = good[:at] + data.draw(st.binary(min_size=1, max_size=8)) + good[at:]
    entry.write_bytes(bad)
    loaded, w_loaded = _caught(load)
    assert_same(loaded, parsed)
    assert w_loaded == w_parsed
    mp = pytest.MonkeyPatch()
    mp.setattr(urdf_module, "_parse", None)
    try:  # replaced by the parse's entry: the next load is a hit
        again, w_again = _caught(load)
    finally:
        mp.undo()
    assert_same(again, parsed)
    assert w_again == w_parsed


def test_a_foreign_or_unreadable_entry_is_ignored(cache_dir: Path) -> None:
    path = MODELS / "offsets.urdf"
    parsed = load_urdf(path)
    entry = _one_entry(cache_dir)
    other = load_urdf(MODELS / "defaults.urdf")
    (other_entry,) = set(_entries(cache_dir)) - {entry}
    entry.write_bytes(other_entry.read_bytes())  # another model's entry under this key
    assert_same(load_urdf(path), parsed)
    assert entry.read_bytes() != other_entry.read_bytes()  # replaced
    entry.write_bytes(b"")
    assert_same(load_urdf(path), parsed)
    if hasattr(os, "getuid") and os.getuid() != 0:  # (root reads whatever the mode says)
        entry.chmod(0)
        assert_same(load_urdf(path), parsed)
    entry.unlink()
    entry.mkdir()  # a folder where the entry should be: parsed, not stored, no error
    assert_same(load_urdf(path), parsed)
    assert_same(other, load_urdf(MODELS / "defaults.urdf"))


def test_an_entry_cannot_run_code(cache_dir: Path, tmp_path: Path) -> None:
    """An entry whose payload names anything but a model's classes is refused before it runs (a
    valid header, a matching digest: what a forger could write)."""
    path = MODELS / "offsets.urdf"
    parsed = load_urdf(path)
    entry = _one_entry(cache_dir)
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    import hashlib
    import json

    raw = entry.read_bytes()
    magic, header, body = raw.split(b"\n", 2)
    issued, payload = body.split(b"\n", 1)

    def write(issued: bytes, payload: bytes) -> None:
        body = issued + b"\n" + payload
        head = {**json.loads(header), "sha256": hashlib.sha256(body).hexdigest()}
        entry.write_bytes(magic + b"\n" + json.dumps(head).encode() + b"\n" + body)

    write(issued, pickle.dumps(Evil()))
    assert_same(load_urdf(path), parsed)
    assert not marker.exists()
    # and a warning category that is not bridge's is not replayed
    write(json.dumps([["RuntimeWarning", "boo"]]).encode(), payload)
    assert _caught(lambda: load_urdf(path))[1] == []
    write(json.dumps([["URDFWarning", "boo"]]).encode(), payload)  # (what a valid entry replays)
    assert [(c, m) for c, m, *_ in _caught(lambda: load_urdf(path))[1]] == [(bridge.URDFWarning, "boo")]


# --------------------------------------------------------------------------- the folder
def test_the_folder_is_private_and_an_open_one_is_not_used(cache_dir: Path) -> None:
    path = MODELS / "offsets.urdf"
    load_urdf(path)
    for folder in (cache_dir, cache_dir.parent):
        assert folder.stat().st_mode & 0o777 == 0o700
    if not hasattr(os, "getuid"):  # pragma: no cover - Windows: no modes
        return
    entry = _one_entry(cache_dir)
    cache_dir.chmod(0o777)  # writable by others: neither read nor written
    mp = pytest.MonkeyPatch()
    mp.setattr(urdf_module, "_parse", None)
    try:
        with pytest.raises(TypeError):  # (the load parses: the entry was not read)
            load_urdf(path)
    finally:
        mp.undo()
    entry.unlink()
    load_urdf(path)
    assert not entry.exists()


def test_bridge_cache_0_turns_it_off(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for off in ("0", "off", "False", "no"):
        monkeypatch.setenv("BRIDGE_CACHE", off)
        assert not cache.enabled()
        load_urdf(MODELS / "offsets.urdf")
        assert not cache_dir.exists()
    monkeypatch.setenv("BRIDGE_CACHE", "1")
    load_urdf(MODELS / "offsets.urdf")
    assert len(_entries(cache_dir)) == 1
    assert cache.clear() == 1 and _entries(cache_dir) == []


def test_the_least_recently_used_entries_go_past_the_limit(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    files = [
        MODELS / n for n in ("offsets.urdf", "defaults.urdf", "fixed_branches.urdf", "missing_mesh.urdf")
    ]
    keys = []
    for i, path in enumerate(files[:3]):
        load_urdf(path)
        (new,) = set(_entries(cache_dir)) - set(keys)
        os.utime(new, ns=(i * 10**9, i * 10**9))  # (stored one second apart)
        keys.append(new)
    with monkeypatch.context() as mp:
        mp.setattr(urdf_module, "_parse", None)
        load_urdf(files[0])  # a hit: now the most recently used
    load_urdf(files[3])
    assert len(_entries(cache_dir)) == 3
    assert keys[0].exists() and not keys[1].exists() and keys[2].exists()


def test_the_default_folder_is_the_users_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("BRIDGE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform != "win32":
        assert cache.folder() == tmp_path / "xdg" / "bridge" / "models"
        monkeypatch.delenv("XDG_CACHE_HOME")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        assert cache.folder() == tmp_path / "home" / ".cache" / "bridge" / "models"
    monkeypatch.setenv("BRIDGE_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.folder() == tmp_path / "mine" / "models"


def test_no_home_folder_is_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("BRIDGE_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("BRIDGE_CACHE", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert load_urdf(MODELS / "offsets.urdf").name


def test_an_unwritable_folder_is_no_error(cache_dir: Path) -> None:
    cache_dir.parent.write_text("a file where the folder should be")
    model = load_urdf(MODELS / "offsets.urdf")
    assert model.name and cache_dir.parent.is_file()


# --------------------------------------------------------------------------- what a hit costs
def test_a_hit_imports_no_urdf_parser(tmp_path: Path) -> None:
    """A fresh process loading a cached model imports neither yourdfpy nor what it imports, nor the
    full robot registry's importlib.metadata."""
    code = (
        "import sys, bridge\n"
        "m = bridge.load_urdf('iCubGazeboV2_5')\n"
        "heavy = {'yourdfpy', 'trimesh', 'scipy', 'networkx', 'importlib.metadata'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    env = {**os.environ, "BRIDGE_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("BRIDGE_CACHE", None)
    runs = [
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert "yourdfpy" in runs[0].stdout  # the first one parsed
    assert runs[1].stdout.strip() == "[]", runs[1].stdout
    assert runs[1].stderr == ""
