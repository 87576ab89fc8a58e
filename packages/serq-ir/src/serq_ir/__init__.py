"""serq-ir: the versioned intermediate representation of serQ programs (msgspec schemas).

Importable without the plugin host: it depends on msgspec only.
"""

from .codec import decode, encode, encode_pretty, load, schema, strip_spans
from .errors import IRError
from .nodes import *  # noqa: F403
from .nodes import IR_VERSION, Program

__all__ = ["IR_VERSION", "IRError", "Program", "decode", "encode", "encode_pretty", "load", "schema",
           "strip_spans"]
