"""Scenarios run in several threads at once (the concurrency audit): each answer is the one the scenario
gives alone, with the compile cache cold (the threads compile into one empty folder at once) and warm, and
standard error is the process's own again after."""

from __future__ import annotations

import json
import sys
import threading

import pytest
from serq_vllm.scenarios import list_scenarios, run_scenario

pytestmark = pytest.mark.timeout(120)

NAMES = ["alone", "chunked", "hol", "mixed"]


def test_four_scenarios_in_four_threads_answer_as_each_alone(tmp_path, monkeypatch):
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    paths = {f.path.stem: f.path for f in list_scenarios() if f.path.parent.name == "vllm"}
    scenarios = [json.loads(paths[n].read_text(encoding="utf-8")) for n in NAMES]
    monkeypatch.setenv("SERQ_CACHE_DIR", "")  # alone: no cache at all
    alone = [json.dumps(run_scenario(sc), sort_keys=True) for sc in scenarios]
    before = sys.stderr
    for cold in (True, False):
        monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
        assert _in_threads(scenarios) == alone, "cold" if cold else "warm"
        assert sys.stderr is before
        assert len(list((tmp_path / "cache").glob("compile-*.bin"))) == len(NAMES)  # one entry a scenario's settings


def _in_threads(scenarios: list[dict]) -> list[object]:
    """Each scenario's answer (or exception), run in a thread of its own, all started together."""
    meet = threading.Barrier(len(scenarios), timeout=30)
    got: dict[int, object] = {}

    def work(k: int) -> None:
        try:
            meet.wait()
            got[k] = json.dumps(run_scenario(scenarios[k]), sort_keys=True)
        except BaseException as e:  # noqa: BLE001 - compared by the caller
            got[k] = e

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(scenarios))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return [got.get(k) for k in range(len(scenarios))]
