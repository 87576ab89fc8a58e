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
    """An IR file, whose extension nodes must name what the command's plugins register (a plugin's stage
    kind or policy nobody provides is an error at its JSON path, as every other IR error)."""
    from serq.files import MAX_JSON, read_input

    from .codec import decode
    from .errors import IRError

    try:  # as serq_ir.load reads it, but a regular file only: a FIFO would block, /dev/zero not end
        data = read_input(path, limit=MAX_JSON, what="an IR file")
    except OSError as e:
        raise IRError(f"error: {path}: cannot read: {e.strerror or e}") from None
    program = decode(data, name=str(path))
    _keys_once(data, str(path))
    pm = getattr(options, "pm", None)
    if pm is not None:
        from serq.extensions import ir_problems

        found = ir_problems(program, pm)
        if found is not None:
            at, message = found
            raise IRError(f"error: {path}: {message} - at '{at}'")
    return program


def _keys_once(data: bytes, name: str) -> None:
    """Refuse (IRError, at the second key) an IR file an object of which gives a key twice: msgspec keeps
    the last (``"horizon": 5, … "horizon": 100`` ran to 100), as a program that gives a setting twice is
    refused. ``data`` is JSON msgspec has decoded."""
    from serq.jsonin import JSONDuplicateKey, check_keys

    from .errors import IRError

    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    try:
        check_keys(text)
    except JSONDuplicateKey as e:
        raise IRError(e.message(text, name)) from None
    except (ValueError, RecursionError):  # pragma: no cover - msgspec read it: json's own limits
        pass


@hookimpl
def serq_register_loaders(register):
    register(".ir.json", _load_ir)
