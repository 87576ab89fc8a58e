"""Runs in several threads of one process (the concurrency audit): each thread's report is, byte for byte,
the report of the same run alone, on both tiers, its text, its JSON and its dump, and the process's
settings a run changes (the collector's thresholds, the recursion limit, standard error) are back as they
were once every run has ended."""

from __future__ import annotations

import gc
import sys
import threading
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
#: (program, seed, horizon, warmup): a step stage with pools (vLLM) and a routed multi-turn program, short
CASES = [("multi-turn/vllm.sq", 1, 120.0, 20.0), ("multi-turn/routing.sq", 2, 2000.0, 100.0)]


def _outputs(prog, seed: int, horizon: float, warmup: float, folder: Path) -> tuple[str, str, tuple]:
    import serq_sim
    from serq_report import dump, render

    report = serq_sim.run(prog, seed=seed, horizon=horizon, warmup=warmup)
    written = dump(report, folder)
    return render(report, "text"), render(report, "json"), tuple(Path(p).read_bytes() for p in written)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tier", ["", "general"])
def test_runs_in_four_threads_at_once_give_what_each_gives_alone(tier, tmp_path, monkeypatch):
    import serq_frontend

    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    progs = [serq_frontend.compile(EXAMPLES / c[0]) for c in CASES]
    state = (gc.get_threshold(), sys.getrecursionlimit(), sys.stderr, sys.stdout)
    alone = [_outputs(p, *c[1:], tmp_path / f"alone{i}") for i, (p, c) in enumerate(zip(progs, CASES))]
    n = 4
    meet = threading.Barrier(n, timeout=30)
    got: dict[int, object] = {}

    def work(k: int) -> None:
        i = k % len(CASES)
        try:
            meet.wait()
            got[k] = _outputs(progs[i], *CASES[i][1:], tmp_path / f"t{k}")
        except BaseException as e:  # noqa: BLE001 - compared below
            got[k] = e

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert {k: got.get(k) == alone[k % len(CASES)] for k in range(n)} == dict.fromkeys(range(n), True)
    assert (gc.get_threshold(), sys.getrecursionlimit(), sys.stderr, sys.stdout) == state


@pytest.mark.timeout(60)
def test_ctrl_c_as_a_run_raises_the_collectors_threshold_leaves_it_as_it_was(monkeypatch):
    # the runs under way are counted, and the last to end puts the thresholds back; the count was taken
    # before the `try` whose `finally` gives it back, so Ctrl-C handled as the count's lock was let go left
    # a run counted for good, and the threshold raised. Before the fix it was left raised on every run.
    import signal

    from serq_sim import api

    real = api._THRESHOLDS.lock

    class InterruptedOnce:
        fired = False

        def __enter__(self):
            return real.__enter__()

        def __exit__(self, *exc):
            real.__exit__(*exc)
            if not InterruptedOnce.fired:
                InterruptedOnce.fired = True
                signal.raise_signal(signal.SIGINT)

    before = gc.get_threshold()
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    gc.set_threshold(700, 10, 10)
    try:
        monkeypatch.setattr(api._THRESHOLDS, "lock", InterruptedOnce())
        with pytest.raises(KeyboardInterrupt), api.collector_for_runs():
            pass
        assert InterruptedOnce.fired
        after = gc.get_threshold()
        with api.collector_for_runs():  # the next run puts back the thresholds it found
            pass
        again = gc.get_threshold()
    finally:
        signal.signal(signal.SIGINT, handler)
        gc.set_threshold(*before)
    assert (after, again) == ((700, 10, 10), (700, 10, 10))
