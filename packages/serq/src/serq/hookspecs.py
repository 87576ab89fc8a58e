"""The host's hook specifications.

Every hook has the ``serq_`` prefix. Registration hooks receive a ``register`` callback rather than
returning values, so the host knows which plugin provided what and can name both providers of a
duplicate name. Parts add their own specs through :func:`serq_addhooks`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click

hookspec = pluggy.HookspecMarker("serq")

# ---------------------------------------------------------------------------------------------------
# Initialisation
# ---------------------------------------------------------------------------------------------------


@hookspec(historic=True)
def serq_addhooks(pluginmanager: pluggy.PluginManager) -> None:
    """Called once when the plugin manager is built, to add a part's own hook specifications.

    :param pluginmanager: the manager; call ``pluginmanager.add_hookspecs(module)``.

    Historic: a plugin registered later is called too.
    """


# ---------------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------------


@hookspec
def serq_register_commands(register: Callable[[click.Command], None]) -> None:
    """Called when the ``serq`` command is assembled, to add subcommands.

    :param register: ``register(command)`` adds a ``click.Command`` (or group) under its own name; a
        :class:`serq.cli.LazyCommand` (the name, and ``"module:attribute"`` where the command is) adds it
        without importing its module until the command is used. A name two plugins register is an error
        naming both.
    """


@hookspec
def serq_register_loaders(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Called when a command needs to load a program, to add loaders keyed by file suffix.

    :param register: ``register(suffix, loader)``; ``suffix`` such as ``".ir.json"`` or ``".sq"`` (``.``
        followed by one or more characters, none a path separator: :func:`serq.plugins.suffix_problem`), and
        ``loader(path, options)`` returns a ``serq_ir.Program``. ``options`` is a
        :class:`serq.loading.LoadOptions` (``sets``, ``defs``). The longest matching suffix wins; a
        suffix two plugins register is an error naming both.
    """
