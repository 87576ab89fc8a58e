"""serq-frontend as a part of ``serq``: it loads ``.sq`` files, owns the sugar hooks, registers its own
sugar layers through them, and adds the commands ``serq fmt`` and ``serq ast``. Its loader gives the
canonical form of a ``--def`` body of a ``.sq`` program (``definition_form``, serq.loading)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from serq import hookimpl

if TYPE_CHECKING:
    from pathlib import Path


@hookimpl
def serq_addhooks(pluginmanager):
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def _load_sq(path: Path, options=None):
    # through the compile cache (cache.py): a hit imports none of the compiler
    from serq.loading import given_or_option

    from .cache import load

    return load(path, sets=dict(options.sets) if options else {}, defs=dict(options.defs) if options else {},
                pm=getattr(options, "pm", None), option_name=given_or_option(getattr(options, "given", None)))


def _definition_form(body: str) -> str:
    # a --def body as serq fmt spaces it, on one line, without comments (a sweep tells its points apart by it)
    from .fmt import expression_form

    return expression_form(body)


_load_sq.definition_form = _definition_form  # (serq.loading.definition_form)


@hookimpl
def serq_register_loaders(register):
    register(".sq", _load_sq)


@hookimpl
def serq_frontend_register_sugar(register):
    from .sugar import builtin_layers

    for layer in builtin_layers():
        register(layer)


@hookimpl
def serq_register_commands(register):
    from serq.cli import LazyCommand  # the commands' module is imported when one of them runs

    register(LazyCommand("fmt", "serq_frontend.commands:fmt_command"))
    register(LazyCommand("ast", "serq_frontend.commands:ast_command"))
