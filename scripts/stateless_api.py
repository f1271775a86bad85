"""The stateless functions of ``bridge.dynamics.functional`` as functions of the API pages (a Griffe
extension of the mkdocstrings Python handler, loaded by mkdocs.yml).

``bridge.dynamics.functional`` makes each function at import (``mass_matrix = _query("mass_matrix")``
for every name of ``bridge.dynamics.queries.QUERIES``), so a static reading of the source sees
attributes without documentation. Once the package is loaded, this extension replaces each such
attribute by a function: signature ``(model, state, <the KinDyn method's parameters>, *,
engine="pinocchio", gravity=DEFAULT_GRAVITY)``, the method's return annotation, and a docstring that
says what the call does followed by the method's own docstring.
"""

from __future__ import annotations

from typing import Any

import griffe

__all__ = ["StatelessFunctions"]

MODULE = "bridge.dynamics.functional"
KINDYN = "bridge.dynamics.kindyn.KinDyn"
FACTORY = "_query"

_KEYWORD = griffe.ParameterKind.keyword_only
_POSITIONAL = griffe.ParameterKind.positional_or_keyword


def _parameters(method: griffe.Function) -> griffe.Parameters:
    own = [p for p in method.parameters if p.name != "self"]
    return griffe.Parameters(
        griffe.Parameter("model", annotation="Model", kind=_POSITIONAL),
        griffe.Parameter("state", annotation="State", kind=_POSITIONAL),
        *own,
        griffe.Parameter("engine", annotation="str", kind=_KEYWORD, default="'pinocchio'"),
        griffe.Parameter("gravity", annotation="object", kind=_KEYWORD, default="DEFAULT_GRAVITY"),
    )


def _function(attr: griffe.Attribute, method: griffe.Function) -> griffe.Function:
    name = attr.name
    lead = (
        f"`KinDyn.{name}` at `state`, without a `KinDyn`: sets `state` on the `KinDyn` of `engine` "
        f"kept for this thread, model, engine and representation (`kindyn_at`), returns its `{name}(...)`, "
        "in `state.representation`.\n\n"
    )
    text = lead + (method.docstring.value if method.docstring else "")
    func = griffe.Function(
        name,
        parameters=_parameters(method),
        returns=method.returns,
        lineno=attr.lineno,
        endlineno=attr.endlineno,
    )
    func.docstring = griffe.Docstring(text, lineno=attr.lineno, parent=func)
    return func


class StatelessFunctions(griffe.Extension):
    """Replaces ``name = _query("name")`` attributes of the module by documented functions."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        try:
            module = pkg.modules_collection[MODULE]
            kindyn = pkg.modules_collection[KINDYN]
        except KeyError:
            return
        for name, member in list(module.members.items()):
            if member.is_alias or not member.is_attribute:
                continue
            value = member.value
            if not isinstance(value, griffe.ExprCall) or str(value.function) != FACTORY:
                continue
            method = kindyn.members.get(name)
            if isinstance(method, griffe.Function):
                module.set_member(name, _function(member, method))
