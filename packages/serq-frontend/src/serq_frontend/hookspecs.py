"""Hook specifications of serq-frontend (added to the host through ``serq_addhooks``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("serq")


@hookspec
def serq_frontend_register_sugar(register: Callable[[Any], None]) -> None:
    """Called when the parser is built, to add a layer of sugar.

    :param register: ``register(layer)`` with a :class:`serq_frontend.sugar.SugarLayer`: its ``name``,
        the grammar it contributes (lark text using ``%extend``), and its rewrite pass from the sugared
        AST to the kernel AST. Layers apply in registration order; a name two plugins register is an
        error naming both.
    """


@hookspec
def serq_frontend_library_paths() -> list[Path]:
    """Called when a ``use "file.sq";`` is resolved, to add library folders.

    Returns a list of folders searched, in plugin order, after the folder of the file that says ``use``.
    """
