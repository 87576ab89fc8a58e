"""Sugar layers: grammar the kernel does not have, and the rewrite that takes it away.

A layer is a :class:`SugarLayer`. Its ``grammar`` is lark text that extends the kernel's rules
(``%extend stmt: …``, ``%extend item: …``, ``%extend atom: …``, ``%extend wl_item: …``,
``%extend hold_clause: …``), its ``builders`` map each new rule (or alias) to a callback
``builder(ctx, pos, children)`` that returns an AST node, and its ``rewrite(module, ctx)`` returns the
module with those nodes replaced by kernel ones. Layers are registered through the hook
``serq_frontend_register_sugar`` and apply in registration order; serq-frontend's own layers come first,
in the order :data:`BUILTIN_ORDER` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..ast import Module
    from ..context import Context


@dataclass(eq=False)
class SugarLayer:
    """One layer of sugar.

    :param name: unique; a name two plugins register is an error naming both.
    :param grammar: lark text using ``%extend`` on the kernel's extension rules (may be empty).
    :param builders: ``{rule or alias: builder(ctx, pos, children)}`` for the rules the grammar adds.
    :param rewrite: ``rewrite(module, ctx) -> module``, from the sugared AST to one without this layer's
        nodes. ``ctx`` is a :class:`serq_frontend.context.Context` (``ctx.error(pos, msg)``,
        ``ctx.const(expr, what)``, ``ctx.lets()``).
    """

    name: str
    grammar: str = ""
    builders: dict[str, Callable[..., Any]] = field(default_factory=dict)
    rewrite: Callable[[Module, Context], Module] | None = None


BUILTIN_ORDER = ("defs", "queues", "sides", "serving", "admission", "branch_with", "aggregates")


def builtin_layers() -> list[SugarLayer]:
    """serq-frontend's own layers, in the order they apply."""
    global _BUILTINS
    if _BUILTINS is None:
        from . import admission, aggregates, branch_with, defs, queues, serving, sides

        mods = {"defs": defs, "queues": queues, "sides": sides, "serving": serving,
                "admission": admission, "branch_with": branch_with, "aggregates": aggregates}
        _BUILTINS = [mods[n].LAYER for n in BUILTIN_ORDER]
    return _BUILTINS


_BUILTINS: list[SugarLayer] | None = None


def is_builtin(layer: Any) -> bool:
    """Whether ``layer`` is one of serq-frontend's own layers (:func:`builtin_layers`, the objects themselves:
    a third party's layer may take one's name), not a plugin's."""
    return any(layer is b for b in builtin_layers())


def layer_problem(layer: Any) -> str | None:
    """Why a plugin's sugar layer cannot be used as the parser and the desugaring use it, or ``None``: its
    builders are no mapping, a builder cannot be called as ``builder(ctx, pos, children)``, its rewrite
    cannot be called as ``rewrite(module, ctx)``, or a rule its grammar makes (an alias ``-> name``, or a
    rule it defines) has no builder, which would leave lark's parse tree in the AST for the desugaring to
    fail on. serQ's own layers are not looked at. (Checked when the layers are collected for a compile:
    :func:`serq.plugins.collect` names the plugin.)"""
    name = getattr(layer, "name", None)
    if not isinstance(name, str) or not name or any(layer is own for own in builtin_layers()):
        return None  # (a layer without a name is the registry's to refuse)
    from serq.plugins import call_problem

    label = f"sugar layer {name!r}: "
    grammar = getattr(layer, "grammar", "") or ""
    if not isinstance(grammar, str):
        return f"{label}its grammar is {_kind(grammar)}, not lark text (a str)"
    builders = getattr(layer, "builders", None) or {}
    if not isinstance(builders, Mapping):
        return f"{label}its builders are {_kind(builders)}, not a dict of rule names to builders"
    for rule, fn in builders.items():
        if not isinstance(rule, str):
            return f"{label}its builders' key {_kind(rule)} is not a rule's name (a str)"
        why = call_problem(fn, "builder(ctx, pos, children)", shown=False)
        if why is not None:
            return f"{label}its builder {rule!r} {why}"
    rewrite = getattr(layer, "rewrite", None)
    if rewrite is not None:
        why = call_problem(rewrite, "rewrite(module, ctx)", shown=False)
        if why is not None:
            return f"{label}its rewrite {why}"
    if grammar:
        import re

        from ..parser import KERNEL_BUILDERS

        # a layer adds to the language: `%override` of a rule or a terminal, or an `%ignore` (which lark applies
        # to the whole text), changed what every program means, each refused as a syntax error naming no
        # plugin (`%ignore "x"`: `let x = 2;` was "unexpected `x` (expected a name)")
        for n, line in enumerate(grammar.split("\n"), 1):
            # a terminal of a priority above 0 is read before serQ's wherever both may come (a layer's `WORD.5:
            # /[a-z]+/` took `s` of `run s (x);` for a WORD: "missing `;`" in every program)
            high = re.match(r"[ \t]*([A-Z_][A-Z_0-9]*)\.([0-9]+)[ \t]*:", line)
            if high is not None and int(high.group(2)) > 0:
                return (f"{label}its grammar gives its terminal {high.group(1)!r} the priority {int(high.group(2))} "
                        f"(line {n}), above serQ's terminals, which it would be read in place of wherever both may "
                        "come: a layer's terminals take the priority 0 (none written) or below")
            word = re.match(r"[ \t]*(%override|%ignore)\b[ \t]*(\S*?)[ \t]*(?::|$)", line)
            if word is not None:
                what = (f"%overrides {word.group(2)!r}" if word.group(1) == "%override"
                        else "has an %ignore, which applies to the whole text")
                return (f"{label}its grammar {what} (line {n}): a layer's grammar %extends serQ's rules and adds "
                        "rules of its own, and leaves every other program's language as it is")
        made = re.findall(r"->\s*([A-Za-z_]\w*)", grammar) + re.findall(r"^[ \t]*([a-z]\w*)(?:\.\d+)?[ \t]*:",
                                                                     grammar, re.M)
        built = {*builders, *KERNEL_BUILDERS, *(r for own in builtin_layers() for r in own.builders)}
        for rule in made:
            if rule not in built:
                return (f"{label}its grammar's rule {rule!r} has no builder (builders: "
                        f"{', '.join(map(repr, builders)) or 'none'}): lark's parse tree would be left in the AST")
    return None


def _kind(obj: Any) -> str:
    return "None" if obj is None else f"an object of type {type(obj).__name__}"
