"""Reading and writing IR JSON, with one-line errors for a file a user gave."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from .errors import IRError
from .nodes import IR_VERSION, Program

_encoder = msgspec.json.Encoder(order="deterministic")
_decoder = msgspec.json.Decoder(Program)


class _Versioned(msgspec.Struct):
    version: Any = None


_version_decoder = msgspec.json.Decoder(_Versioned)


def _quote(msg: str) -> str:
    return msg.replace("`", "'")


def encode(program: Program, *, spans: bool = True) -> bytes:
    """The program as compact, deterministic JSON. ``spans=False`` leaves out the source spans."""
    if not spans:
        program = strip_spans(program)
    return _encoder.encode(program)


def encode_pretty(program: Program, *, spans: bool = True) -> str:
    """The program as indented JSON (what ``serq ir`` prints)."""
    return msgspec.json.format(encode(program, spans=spans), indent=2).decode()


def decode(data: bytes | str, *, name: str = "<ir>") -> Program:
    """Decode and validate IR JSON (the schema, then every reference: :func:`serq_ir.validate.validate`).
    Any fault raises :class:`IRError` with one line naming ``name``."""
    if isinstance(data, str):
        data = data.encode()
    try:
        head = _version_decoder.decode(data)
    except msgspec.DecodeError as e:
        raise IRError(f"error: {name}: {_quote(str(e))}") from None
    if head.version != IR_VERSION:
        raise IRError(
            f"error: {name}: IR version {json.dumps(head.version)} is not supported "
            f"(this serq-ir reads version {IR_VERSION}) - at '$.version'"
        )
    try:
        program = _decoder.decode(data)
    except msgspec.DecodeError as e:
        raise IRError(f"error: {name}: {_quote(str(e))}") from None
    from .validate import validate

    return validate(program, name=name)


def load(path: str | Path) -> Program:
    """Read an ``.ir.json`` file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise IRError(f"error: {p}: cannot read: {e.strerror or e}") from None
    return decode(data, name=str(p))


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k != "span"}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def strip_spans(program: Program) -> Program:
    """The same program without source spans (IR equivalence is judged on this)."""
    raw = msgspec.json.decode(_encoder.encode(program))
    return _decoder.decode(_encoder.encode(_strip(raw)))


def schema() -> dict[str, Any]:
    """The JSON Schema of the IR."""
    return msgspec.json.schema(Program)
