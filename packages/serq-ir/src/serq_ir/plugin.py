"""serq-ir as a part of the ``serq`` command: it loads ``.ir.json`` files.

This module is imported only by the plugin host (through the ``serq`` entry point), so the IR package
itself keeps msgspec as its one dependency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from pathlib import Path

hookimpl = pluggy.HookimplMarker("serq")


def _load_ir(path: Path, options: object = None):
    """An IR file, read and checked as :func:`serq_ir.load` reads it (the same function: a regular file
    only, of at most ``serq.files.MAX_JSON`` bytes, no key given twice), whose extension nodes must name
    what the command's plugins register (a plugin's stage kind or policy nobody provides is an error at its
    JSON path, told at its line and column as every other IR error)."""
    from .codec import load

    pm = getattr(options, "pm", None)
    if pm is None:
        return load(path)
    from serq.extensions import ir_problems

    return load(path, check=lambda program: ir_problems(program, pm))


@hookimpl
def serq_register_loaders(register):
    register(".ir.json", _load_ir)
