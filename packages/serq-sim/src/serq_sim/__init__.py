"""serq-sim: serQ's discrete-event simulator.

``serq_sim.run(program, *, seed=None, horizon=None, warmup=None, arrivals=None, check_invariants=False)``
runs a :class:`serq_ir.Program` and returns a :class:`Report` (``report.result`` is a
:class:`serq_ir.report.Result`; ``report.observe(name)`` and ``report.gauge(name)`` give numpy arrays).
A run-time error of the program raises :class:`SimError`.
"""

from __future__ import annotations

from .api import Registries, registries, run
from .errors import InvariantError, SimError
from .report import GaugeData, ObserveData, Report

__all__ = ["GaugeData", "InvariantError", "ObserveData", "Registries", "Report", "SimError", "registries",
           "run"]
