"""The format table (bridge.model.formats): one record per kind of model file, and the only list of
kinds, roots and suffixes in bridge."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge
from bridge.backends import registry
from bridge.model import formats

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"

#: the shipped model files (not quadruped_leg.xml: an MJCF <mujocoinclude> fragment, no model)
SHIPPED = sorted(
    p
    for p in [*MODELS.glob("*.urdf"), *(MODELS / "sdf").glob("*.sdf"), *(MODELS / "mjcf").glob("*.xml")]
    if p.name != "quadruped_leg.xml"
)
KNOWN_SUFFIXES = [s for fmt in formats.FORMATS.values() for s in fmt.suffixes]


def test_the_table_holds_the_three_kinds_and_names_no_two_alike() -> None:
    assert list(formats.FORMATS) == ["urdf", "sdf", "mjcf"]
    roots = [fmt.root for fmt in formats.FORMATS.values()]
    assert roots == ["robot", "sdf", "mujoco"] and len(set(KNOWN_SUFFIXES)) == len(KNOWN_SUFFIXES)
    assert formats.FORMATS["mjcf"].requires == "mujoco" and formats.FORMATS["mjcf"].extra == "mujoco"
    assert [k for k, fmt in formats.FORMATS.items() if fmt.options] == ["urdf", "sdf"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_model_is_told_by_its_root_and_its_suffix(path: Path) -> None:
    kind = formats.file_kind(path)
    assert kind == formats.output_kind(path) == registry.file_kind(path)
    assert formats.input_kind(path) == kind


@pytest.mark.parametrize("kind", list(formats.FORMATS))
def test_the_registry_resolves_each_kinds_reader_and_writer_from_the_table(kind: str) -> None:
    fmt = formats.FORMATS[kind]
    if fmt.requires is not None:
        pytest.importorskip(fmt.requires)
    assert registry.importer(kind) is registry.resolve(fmt.reader)
    assert registry.exporter(kind) is registry.resolve(fmt.writer)
    # a library's formats are what its record offers (filled from the table, not written twice)
    for record in registry.LIBRARIES.values():
        if fmt.requires is not None and record.requires == fmt.requires:
            assert record.imports[kind] == fmt.reader and record.exports[kind] == fmt.writer


def test_the_model_methods_write_what_the_tables_writers_write() -> None:
    model = bridge.load_urdf(MODELS / "offsets.urdf")
    assert registry.exporter("urdf")(model) == model.to_urdf()
    assert registry.exporter("sdf")(model) == model.to_sdf()


@settings(max_examples=60, deadline=None)
@given(
    stem=st.text(alphabet="abcxyz_-.", min_size=1, max_size=8).filter(lambda s: s.strip(".")),
    suffix=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789", max_size=6),
)
def test_an_unknown_output_suffix_names_the_file_and_every_known_one(stem: str, suffix: str) -> None:
    path = Path("/tmp/out") / (f"{stem}.{suffix}" if suffix else stem)
    if path.suffix.lower() in KNOWN_SUFFIXES:
        assert formats.output_kind(path) in formats.FORMATS
        return
    with pytest.raises(bridge.InvalidValueError) as info:
        formats.output_kind(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    for fmt in formats.FORMATS.values():
        assert f"{'/'.join(fmt.suffixes)} ({fmt.title})" in message


@pytest.mark.parametrize("suffix", KNOWN_SUFFIXES)
def test_a_known_suffix_in_any_case_names_its_format(suffix: str) -> None:
    kind = formats.output_kind(Path("robot" + suffix.upper()))
    assert suffix in formats.FORMATS[kind].suffixes


@pytest.mark.parametrize("kind", ["usd", "", "URDF ", 3, None])
def test_an_unknown_kind_lists_the_known_ones(kind: object) -> None:
    if isinstance(kind, str) and kind.strip().lower() in formats.FORMATS:
        assert formats.format_named(kind).name == kind.strip().lower()
        return
    with pytest.raises(bridge.InvalidValueError, match="known: urdf, sdf, mjcf"):
        formats.format_named(kind)
    with pytest.raises(bridge.InvalidValueError, match="known: urdf, sdf, mjcf"):
        registry.importer(kind)  # type: ignore[arg-type]


@settings(max_examples=30, deadline=None)
@given(
    name=st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True),
    root=st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True),
    suffix=st.from_regex(r"\.[a-z0-9]{1,5}", fullmatch=True),
)
def test_a_registered_format_is_told_by_its_root_and_suffix_until_unregistered(
    tmp_path_factory: pytest.TempPathFactory, name: str, root: str, suffix: str
) -> None:
    clash = (
        name in formats.FORMATS
        or root in {f.root for f in formats.FORMATS.values()}
        or suffix in KNOWN_SUFFIXES
    )
    fmt = formats.Format(name, name.upper(), "a test's format", root, (suffix,))
    if clash:
        with pytest.raises(bridge.InvalidValueError, match="register_format"):
            formats.register_format(fmt)
        return
    path = tmp_path_factory.mktemp("fmt") / f"model{suffix}"
    path.write_text(f"<?xml version='1.0'?>\n<!-- a comment -->\n<{root} a='1'/>\n")
    formats.register_format(fmt)
    try:
        assert formats.file_kind(path) == name and formats.output_kind(path) == name
        with pytest.raises(bridge.BridgeError, match="names no reader"):
            registry.importer(name)
    finally:
        formats.unregister_format(name)
    assert formats.file_kind(path) is None and formats.input_kind(path) == formats.FALLBACK
    with pytest.raises(bridge.InvalidValueError):
        formats.output_kind(path)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "Toy"),
        ("name", ""),
        ("root", " "),
        ("suffixes", ()),
        ("suffixes", ("toy",)),
        ("suffixes", (".TOY",)),
        ("reader", "no_colon"),
        ("writer", 3),
    ],
)
def test_a_malformed_format_is_refused_by_field(field: str, value: object) -> None:
    fields = {"name": "toy", "title": "TOY", "description": "d", "root": "toy", "suffixes": (".toy",)}
    fields[field] = value
    with pytest.raises(bridge.InvalidValueError, match=re.escape(field)):
        formats.Format(**fields)  # type: ignore[arg-type]


def test_a_library_record_names_only_kinds_of_the_table() -> None:
    with pytest.raises(bridge.InvalidValueError, match="unknown model file kind 'usd'"):
        registry.register(registry.Library(name="toy_lib", summary="s", loads=("usd",)))
    assert "toy_lib" not in registry.LIBRARIES


def test_a_format_needing_a_missing_library_names_its_extra(tmp_path: Path) -> None:
    """A kind whose library is not installed (and that no record speaks for): reading it is a
    BridgeError naming the import and the extra, before anything is imported."""
    fmt = formats.Format(
        "needs",
        "NEEDS",
        "d",
        "needs_root",
        (".needs",),
        reader="no_such_module_xyz:read",
        requires="no_such_module_xyz",
        extra="needs",
    )
    formats.register_format(fmt)
    try:
        path = tmp_path / "m.needs"
        path.write_text("<needs_root/>")
        with pytest.raises(
            bridge.BridgeError, match=r"reading NEEDS files needs 'no_such_module_xyz'.*\[needs\]"
        ):
            bridge.load_model(path)
    finally:
        formats.unregister_format("needs")


#: the files that may spell a model file suffix or kind: the table itself; robots.py (layer 0,
#: below the table) lists the shipped robots' URDF files and guesses whether a name is a path
_ALLOWED = {"bridge/model/formats.py", "bridge/robots.py"}


def test_no_module_but_the_table_lists_model_file_suffixes() -> None:
    pattern = re.compile(r"""["'](\.urdf|\.sdf|\.mjcf|\.xml)["']""")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "bridge").rglob("*.py"))
        if str(path.relative_to(ROOT)) not in _ALLOWED
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, found


def test_bridges_own_reader_comes_before_a_record_offering_the_same_kind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = registry.Library(name="toy_lib", summary="s", imports={"urdf": "json:loads"})
    monkeypatch.setitem(registry.LIBRARIES, "toy_lib", record)
    assert registry.importer("urdf") is bridge.load_urdf


@pytest.mark.parametrize("target", ["no_such_module_xyz:read", "json:no_such_function"])
def test_a_reader_that_does_not_load_is_a_bridge_error_naming_it(tmp_path: Path, target: str) -> None:
    formats.register_format(formats.Format("broken", "BROKEN", "d", "broken", (".broken",), reader=target))
    try:
        path = tmp_path / "m.broken"
        path.write_text("<broken/>")
        with pytest.raises(bridge.BridgeError, match=f"reader of BROKEN files, '{target}', cannot be loaded"):
            bridge.load_model(path)
    finally:
        formats.unregister_format("broken")
