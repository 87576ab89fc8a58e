"""serq-sweep: sweeps over a program's constants and definitions times seeds, paired comparisons, capacity
search, plots and the serving metrics of records (``serq sweep``, ``serq compare``, ``serq plot``, ``serq
metrics``; ``serq_sweep.sweep(...)``, also ``serq_sim.sweep``; ``serq_sweep.metrics(...)``)."""

from __future__ import annotations

from typing import Any

_LAZY = {"sweep": "api", "aggregate": "api", "compare": "pairing", "find": "search", "plot": "plots",
         "flatten": "figures", "metrics": "served"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


__all__ = sorted(_LAZY)
