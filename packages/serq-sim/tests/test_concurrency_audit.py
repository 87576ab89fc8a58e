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
