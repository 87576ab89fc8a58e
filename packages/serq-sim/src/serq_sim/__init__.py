"""serq-sim: serQ's discrete-event simulator.

``serq_sim.run(program, *, seed=None, horizon=None, warmup=None, arrivals=None, check_invariants=False,
max_events=None, max_wall=None)`` runs a :class:`serq_ir.Program` and returns a :class:`Report`
(``report.result`` is a :class:`serq_ir.report.Result`; ``report.observe(name)`` and
``report.gauge(name)`` give numpy arrays, made when first read: a run and its report import no numpy
until then). A run that a bound or Ctrl-C stopped early returns its partial report (``report.partial``).
A run-time error of the program raises :class:`SimError`.

``serq_sim.sweep(...)`` is :func:`serq_sweep.sweep` (a program over a grid of ``--set``/``--def`` values
times seeds, as a DataFrame), when serq-sweep is installed.
"""

from __future__ import annotations

from typing import Any

# Imported on first use (PEP 562): importing the package, as the plugin host does to register the
# built-ins, must not import numpy, the IR or the engine.
_LAZY = {
    "Registries": "api", "registries": "api", "run": "api",
    "InvariantError": "errors", "SimError": "errors",
    "GaugeData": "report", "ObserveData": "report", "Report": "report",
}


def __getattr__(name: str) -> Any:
    if name == "sweep":  # serq-sweep's, which depends on this part (not the other way round)
        try:
            from serq_sweep import sweep
        except ImportError:
            raise AttributeError("serq_sim.sweep needs serq-sweep: pip install 'serq-sweep[pandas]'") from None
        return sweep
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

__all__ = ["GaugeData", "InvariantError", "ObserveData", "Registries", "Report", "SimError", "registries",
           "run"]
