"""serq-ir: the versioned intermediate representation of serQ programs (msgspec schemas).

Importing it imports neither the plugin host nor msgspec (they come with first use); :func:`load` reads
a file through the host's one rule for every file a user gives (:func:`serq.files.read_input`: a regular
file only, at most 256 MiB), so the distribution depends on ``serq`` and msgspec.
"""

from typing import Any

_CODEC = ("decode", "encode", "encode_pretty", "load", "schema", "strip_spans")


def __getattr__(name: str) -> Any:
    # Imported on first use (PEP 562): the plugin host imports this package to register the loader,
    # which must not import msgspec and the node classes.
    import importlib

    if name in _CODEC:
        module = importlib.import_module(".codec", __name__)
    elif name == "IRError":
        module = importlib.import_module(".errors", __name__)
    else:
        module = importlib.import_module(".nodes", __name__)
        if name.startswith("_") or not hasattr(module, name):
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    from . import nodes

    return sorted(set(globals()) | set(__all__) | {k for k in vars(nodes) if not k.startswith("_")})

__all__ = ["IR_VERSION", "IRError", "Program", "decode", "encode", "encode_pretty", "load", "schema",
           "strip_spans"]
