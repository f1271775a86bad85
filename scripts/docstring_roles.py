"""Sphinx roles in bridge's docstrings as links of the documentation site (a Griffe extension).

bridge's docstrings name other objects with Sphinx roles (``:class:`~bridge.Model```,
``:func:`to_mujoco```, ``:meth:`KinDyn.mass_matrix```, ``:mod:`bridge.backends.mujoco```), which
``help()`` and IDEs show as they are and which mkdocstrings would print literally. mkdocs.yml loads
this module as a Griffe extension of the mkdocstrings Python handler: once the package is loaded,
every role in every docstring becomes an optional cross-reference of mkdocs-autorefs,
``<autoref identifier="bridge.model.model.Model" optional><code>Model</code></autoref>``, which is
a link when the object is on an API page and plain code otherwise (no warning, so ``mkdocs build
--strict`` holds as pages come and go). Sources stay as they are: no docstring is rewritten, so
roles written later are rendered too.

A target is resolved like Sphinx does, then by name: as written (``bridge.x.Y``), in the
docstring's class and module (``Y``, ``Y.method``), relative to the package (``bridge.Y``, through
the lazy re-exports of ``bridge/__init__.py``), else the one object of the package with that
dotted tail. ``~`` shows the last part only, ``!`` turns the link off, ``title <target>`` sets the
text.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

__all__ = ["ROLE", "SphinxRoles", "roles_to_autorefs"]

#: a Sphinx role of the Python domain: ``:class:`target```, ``:py:meth:`~a.b```, ``:func:`text <a.b>```
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const|type):`([^`]+)`")


def _parts(content: str) -> tuple[str, str, bool]:
    """``(target, text, link)`` of a role's content."""
    content = " ".join(content.split())
    titled = re.fullmatch(r"(.*?)\s*<([^<>]+)>", content)
    if titled:
        return titled.group(2).lstrip("~!"), titled.group(1), not titled.group(2).startswith("!")
    target = content.lstrip("~!")
    link = not content.startswith("!") and not content.lstrip("~").startswith("!")
    text = target.rsplit(".", 1)[-1] if content.startswith("~") else target
    return target, text, link


def _index(pkg: griffe.Object) -> dict[str, list[str]]:
    """{dotted tail: [canonical paths]} of every object of the package (tails of 1 and 2 parts)."""
    out: dict[str, list[str]] = {}
    stack = [pkg]
    while stack:
        obj = stack.pop()
        parts = obj.path.split(".")
        for k in (1, 2):
            if len(parts) > k:
                out.setdefault(".".join(parts[-k:]), []).append(obj.path)
        stack += [m for m in obj.members.values() if not m.is_alias]
    return out


def _lazy_exports(pkg: griffe.Object) -> dict[str, str]:
    """{name: module} of the package's lazy re-exports (``bridge/__init__.py``'s name -> module map)."""
    out: dict[str, str] = {}
    source = (
        pkg.filepath.read_text(encoding="utf-8") if isinstance(pkg, griffe.Module) and pkg.filepath else ""
    )
    for name, module in re.findall(r'^\s*"(\w+)": "([\w.]+)",', source, flags=re.M):
        out[name] = module
    return out


class _Resolver:
    """Canonical paths of role targets in a loaded package."""

    def __init__(self, pkg: griffe.Object) -> None:
        self.pkg = pkg
        self.index = _index(pkg)
        self.lazy = _lazy_exports(pkg)

    def exists(self, path: str) -> bool:
        try:
            self.pkg.modules_collection[path]
        except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return False
        return True

    def canonical(self, path: str) -> str:
        try:
            obj = self.pkg.modules_collection[path]
            return obj.final_target.path if obj.is_alias else obj.path
        except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return path

    def resolve(self, target: str, where: griffe.Object) -> str | None:
        top = self.pkg.name
        scopes = [where.path, where.parent.path if where.parent else "", where.module.path, top]
        if target.startswith("."):  # relative to the docstring's package
            module = where.module
            package = module if module.is_init_module else module.parent
            target = f"{package.path}{target}" if package is not None else target.lstrip(".")
        head = target.partition(".")[0]
        candidates = [target] + [f"{s}.{target}" for s in scopes if s]
        if target.startswith(f"{top}.") and head == top:  # bridge.Name through the lazy re-exports
            name, _, tail = target[len(top) + 1 :].partition(".")
            if name in self.lazy:
                candidates.append(f"{self.lazy[name]}.{name}" + (f".{tail}" if tail else ""))
        elif head in self.lazy:
            candidates.append(f"{self.lazy[head]}.{target}")
        for c in candidates:
            if self.exists(c):
                return self.canonical(c)
        for k in (2, 1):  # the one object of the package with that dotted tail
            found = self.index.get(".".join(target.split(".")[-k:]), [])
            if len(found) == 1:
                return found[0]
        return None


def roles_to_autorefs(text: str, resolve: Any) -> str:
    """``text`` with every Sphinx role replaced by an optional autoref (or code when the target
    does not resolve or ``!`` turns the link off); ``resolve(target) -> path | None``."""

    def one(match: re.Match[str]) -> str:
        target, shown, link = _parts(match.group(1))
        code = f"<code>{html.escape(shown)}</code>"
        path = resolve(target) if link else None
        if path is None:
            return code
        return f'<autoref identifier="{html.escape(path)}" optional>{code}</autoref>'

    return ROLE.sub(one, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the Sphinx roles of every docstring of a loaded package (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        resolver = _Resolver(pkg)
        stack: list[griffe.Object] = [pkg]
        while stack:
            obj = stack.pop()
            stack += [m for m in obj.members.values() if not m.is_alias]
            doc = obj.docstring
            if doc is not None and ROLE.search(doc.value):
                doc.value = roles_to_autorefs(doc.value, lambda t, o=obj: resolver.resolve(t, o))
