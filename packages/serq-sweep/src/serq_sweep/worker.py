"""What runs on a worker (a process of the local pool, or a Dask worker): one program under one seed.

Kept small and importable on its own: a worker imports this module, serq-ir and serq-sim, nothing else of
the sweep."""

from __future__ import annotations

import _thread
import time
from typing import Any

_programs: dict[tuple[str, bytes], Any] = {}
#: decoded programs a worker keeps (a sweep runs one point's seeds together)
_KEEP = 8
_KEEPING = _thread.allocate_lock()


def packed(ir: bytes) -> bytes:
    """``ir``, the JSON of serq_ir.encode, compressed (zlib) as a sweep's point holds it and its tasks send it;
    bytes packed already are as given. The JSON begins with ``{``, a zlib stream never does."""
    if ir[:1] != b"{":
        return ir
    import zlib

    return zlib.compress(ir, 6)


def unpacked(ir: bytes) -> bytes:
    """The JSON of :func:`packed` bytes (JSON given is as given)."""
    if ir[:1] == b"{" or not ir:
        return ir
    import zlib

    return zlib.decompress(ir)


def _program(ir: bytes, ir_hash: str, name: str) -> Any:
    # kept by the IR sent and its name, not by ``ir_hash`` (the IR without spans and source): two programs
    # of one IR but for their text (a.sq and a copy of it one comment longer, a program and its kernel twin)
    # have one hash, and the one decoded first ran the other's runs, whose errors then named its file and
    # lines; in one process (workers=0) that held from one sweep to the next
    key = (name, ir)
    program = _programs.get(key)
    if program is None:
        import serq_ir

        program = serq_ir.decode(unpacked(ir), name=name)
        # under a lock: a Dask worker of several threads runs tasks at once, and two that dropped the oldest
        # program together dropped one key twice (a KeyError: the run failed with a traceback)
        with _KEEPING:
            while len(_programs) >= _KEEP:
                _programs.pop(next(iter(_programs)))
            _programs[key] = program
    return program


def run_task(ir: bytes, ir_hash: str, name: str, seed: int, limits: dict[str, Any], records: bool = False,
             trace: str | None = None, digest: str | None = None, pm: Any = None,
             plugins: Any = None) -> dict[str, Any]:
    """Run the program of IR ``ir`` (its JSON, or that :func:`packed`) under ``seed`` with ``limits`` (``max_wall``, ``max_events``,
    ``max_samples``; ``slo``, the goodput's objectives: serq_sweep.core.run_limits). Returns ``{"status",
    "message", "warnings", "figures", "wall"}``: status ``ok``, ``partial`` (a bound stopped it; ``message`` says
    which) or ``error`` (a run-time error of the program; ``message`` is its diagnostic); ``wall`` the
    seconds the run took, ``run_cpu`` its CPU seconds and ``cpu`` the task's
(decoding, flattening the report included): what ``bench/sweep.py`` weighs. With ``records``, also
``"records"``: the run's records, table -> column -> array (:mod:`serq_sweep.records`). ``trace``: a trace
file the run replays instead of the workload's, as ``serq run --trace`` (read here, by the worker, as the
workload's own trace is). ``digest``: the SHA-256 of the trace's bytes when the sweep planned the run (what
its key holds, serq_sweep.core.replayed_digest): a trace that reads otherwise is the run's error
(serq_sim.trace.changed), not a run of the new bytes under the old ones' key. ``pm``: the plugin manager of the run (in this process only); in a worker, None and ``plugins``, the
installed plugins the sweep's manager holds (:func:`serq.plugins.plugin_selection`: a plugin it blocks is
blocked here too, whatever the worker's environment says)."""
    import serq_sim
    from serq.signals import run_stopped
    from serq_sim.notes import warning_codes

    from .figures import flatten

    c0 = time.process_time()
    if pm is None:  # a worker process (the local pool's, or Dask's): it loads the installed plugins itself
        from serq.errors import PluginError
        from serq.plugins import selected_plugin_manager

        try:
            pm = selected_plugin_manager(plugins)
        except PluginError as e:
            raise PluginError(in_worker(str(e))) from None
    program = _program(ir, ir_hash, name)
    limits = dict(limits)
    slo = limits.pop("slo", None)  # (core.run_limits: the goodput's objectives, given to the report after the run)
    from serq.loading import stdout_to_stderr
    from serq_sim.errors import spans_of

    t0, c1 = time.perf_counter(), time.process_time()
    try:
        # (an IR file's spans quoted from where it was compiled, as serq run does; what a plugin's code writes
        # to standard output goes to standard error, as in serq run: a worker's standard output is the sweep's,
        # whose table it is without --out, and a stage kind's print wrote lines into the CSV)
        with spans_of(name, program), stdout_to_stderr():
            report = serq_sim.run(program, seed=seed, pm=pm, trace=trace, trace_digest=digest, **limits)
        if slo is not None and report.result.requests is not None:
            report.set_slo(slo)
    except Exception as e:
        if not getattr(type(e), "serq_user_error", False):
            raise
        # (the error's code, when it has one, in the column of codes: a trace that changed under the run, which
        # a resume runs again, core.trace_changed)
        return {"status": "error", "message": str(e), "warnings": getattr(e, "code", None) or "", "figures": {},
                "wall": time.perf_counter() - t0}
    wall, c2 = time.perf_counter() - t0, time.process_time()
    partial = report.partial
    stop = run_stopped(partial)
    if stop is not None:  # a signal reached the run itself: it did not finish
        raise stop
    out = {"status": "ok" if partial is None else "partial", "message": partial or "",
           "warnings": warning_codes(report.notes), "figures": flatten(report.result), "wall": wall,
           "run_cpu": c2 - c1}
    if records:  # by table, the arrays of serq_sim.records.Records.arrays (what serq run --records writes)
        out["records"] = {n: dict(report.record_table(n).arrays()) for n in report.record_names}
    out["cpu"] = time.process_time() - c0
    return out


def in_worker(message: str) -> str:
    """``message``, the error of a plugin this worker process cannot load (``error: plugin 'NAME' (from DIST)
    cannot be loaded (…): ImportError: … at FILE:LINE``, then the line of how to run without it), as the sweep
    says it: in a worker, which one, and that the sweep's own process loaded it (the sweep built its manager
    before any run, and a worker loads only the plugins that manager holds): a plugin that imports in the
    sweep's process and not in its workers (a module only the parent's ``sys.path`` or environment finds, a
    library a worker cannot start, another machine's installation for Dask) ended the sweep with its load error
    alone, which read as if the plugin could not be loaded at all."""
    import os
    import socket

    head, sep, rest = message.partition("\n")
    head = head.removeprefix("error: ")
    return (f"error: in a worker process of the sweep (pid {os.getpid()} on {socket.gethostname()}), which loads the "
            f"installed plugins itself: {head}; the sweep's own process loaded it (sweep with --workers 0, workers=0 "
            f"in Python, to run every run in that process){sep}{rest}")


def dask_setup(worker: Any) -> None:
    """Dask's preload hook (``distributed.worker.preload``), run in each worker process a LocalCluster of the
    sweep's starts, restarts included (serq_sweep.engines.Dask): the worker ignores Ctrl-C as a local pool's
    does (:func:`ignore_sigint`)."""
    ignore_sigint()


def ignore_sigint() -> None:
    """A pool worker's initializer: Ctrl-C at a terminal reaches the whole process group; the sweep
    itself decides what happens (it ends its workers and keeps what finished). SIGTERM and SIGHUP end the
    worker: unblocked here, where it took them blocked from the thread that started it (a spawned worker
    started by the pool's thread made while the sweep held them, engines._signals_held), and the pool's
    ending, which ends its workers by SIGTERM, waited for it for ever."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        from serq.signals import HANDLED

        signal.pthread_sigmask(signal.SIG_UNBLOCK, set(HANDLED))
