"""Hook specifications of serq-frontend (added to the host through ``serq_addhooks``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .sugar import SugarLayer

hookspec = pluggy.HookspecMarker("serq")

# ---------------------------------------------------------------------------------------------------
# The language
# ---------------------------------------------------------------------------------------------------


@hookspec
def serq_frontend_register_sugar(register: Callable[[SugarLayer], None]) -> None:
    """Called when the parser is built (once per set of plugins), to add a layer of sugar.

    :param register: ``register(layer)`` with a :class:`serq_frontend.sugar.SugarLayer`: its ``name``,
        the grammar it contributes (lark text that ``%extend``\\ s the kernel's rules ``item``,
        ``wl_item``, ``stmt``, ``hold_clause`` or ``atom``), the ``builders`` that turn its rules into
        AST nodes (``builder(ctx, pos, children)``), and its ``rewrite(module, ctx)`` from the sugared
        AST to one without its nodes. serq-frontend registers its own layers through this hook (defs,
        queues, sides, serving, admission, branch_with, aggregates, in that order); the layers apply in
        registration order, so a plugin's layer sees a module its own nodes are the only sugar left in.
        A name two plugins register is an error naming both.
    """


@hookspec
def serq_frontend_library_paths() -> list[str | os.PathLike[str]]:
    """Called when a ``use "file.sq";`` is resolved, to add library folders.

    Returns a list of folders (``pathlib.Path`` objects or strings) searched, in plugin order, after the
    folder of the file that says ``use``. It is also called to key the compile cache, on every load of a
    ``.sq`` file. A relative folder is relative to the current folder when the plugin was registered
    (:func:`serq.plugins.registered_in`), not to the one at the call.
    """
