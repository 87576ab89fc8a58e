"""serq-ir as a part of the ``serq`` command: it loads ``.ir.json`` files.

This module is imported only by the plugin host (through the ``serq`` entry point), so the IR package
itself keeps msgspec as its one dependency.
"""

from __future__ import annotations

from pathlib import Path

import pluggy

hookimpl = pluggy.HookimplMarker("serq")


def _load_ir(path: Path, options: object = None):
    from . import load

    return load(path)


@hookimpl
def serq_register_loaders(register):
    register(".ir.json", _load_ir)
