"""serq-frontend as a part of ``serq``: it loads ``.sq`` files and owns the sugar hooks."""

from __future__ import annotations

from pathlib import Path

from serq import hookimpl


@hookimpl
def serq_addhooks(pluginmanager):
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def _load_sq(path: Path, options=None):
    from . import compile as compile_program

    return compile_program(path, sets=dict(options.sets) if options else {},
                           defs=dict(options.defs) if options else {})


@hookimpl
def serq_register_loaders(register):
    register(".sq", _load_sq)
