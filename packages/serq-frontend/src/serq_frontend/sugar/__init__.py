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

from collections.abc import Callable
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
