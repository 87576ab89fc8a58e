"""A run of no horizon whose every session stays in a ``loop`` with no ``end;`` is refused at the loop.

``loop { run d (1); }`` keeps every session that reaches it for ever (docs/language.md). Under ``--arrivals N``
(which ends the run when every session has ended), a batch (which ends it when no event is left) and
``--horizon inf``, such a run never ended: ``serq run p.sq --arrivals 5 --horizon inf`` simulated 79 million
events in a minute and went on until it was killed, with no word. It is now an error at the loop, said at the
set-up on both tiers (serq_sim.endless), unless ``--max-events`` or ``--max-wall`` bounds the run. A loop that
some session can leave (an ``end;`` in it, a hold before it that a pool rejects) is run as before.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from tiers import same_error, same_json

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

LOOP = """stage d : delay;

workload {
  arrive poisson(1);
}

session {
  run d (1);
  loop {
    run d (1);
  }
}

run { horizon 100; seed 1; }
"""

TAIL = ("and no --max-events or --max-wall stops it; give the loop a way out (`branch (…) { end; }` in it), a finite "
        "horizon, or --max-events N or --max-wall S (a partial report where it stops)")


def _serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "run", "p.sq", "--no-progress", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)


def test_arrivals_under_horizon_inf_with_an_endless_loop_is_an_error_at_the_loop(tmp_path):
    (tmp_path / "p.sq").write_text(LOOP)
    r = _serq(tmp_path, "--arrivals", "5", "--horizon", "inf")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (
        "p.sq:9:3: error: this `loop` has no `end;` in it, so every session that starts stays in it for ever, and "
        "the run never ends: --arrivals 5 ends the run only when every session has ended, under --horizon inf, "
        f"{TAIL}\n"
        "    loop {\n"
        "    ^\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_the_same_in_the_run_block_and_of_a_batch_on_both_tiers(monkeypatch):
    src = LOOP.replace("arrive poisson(1)", "arrive batch(3)").replace("horizon 100; seed 1;", "horizon inf;")
    msg = same_error(serq_frontend.compile(source=src), monkeypatch)
    assert msg.splitlines()[0] == (
        "<source>:9:3: error: this `loop` has no `end;` in it, so every session that starts stays in it for ever, "
        "and the run never ends: the run ends only when no event is left, under `run { horizon inf; }`, " + TAIL)
    src = LOOP.replace("horizon 100; seed 1;", "horizon inf; arrivals 4;")
    assert same_error(serq_frontend.compile(source=src), monkeypatch).splitlines()[0] == (
        "<source>:9:3: error: this `loop` has no `end;` in it, so every session that starts stays in it for ever, "
        "and the run never ends: `run { arrivals 4; }` ends the run only when every session has ended, under "
        "`run { horizon inf; }`, " + TAIL)


@pytest.mark.parametrize("tier", ["", "general"])
def test_the_api_names_its_arguments(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(source=LOOP), arrivals=3, horizon=math.inf)
    assert str(e.value).splitlines()[0] == (
        "<source>:9:3: error: this `loop` has no `end;` in it, so every session that starts stays in it for ever, "
        "and the run never ends: arrivals=3 ends the run only when every session has ended, under horizon=inf, "
        + TAIL)


def test_a_bound_runs_it_to_the_bound(tmp_path):
    # by hand: 5 arrivals of the Poisson process (the first at 0), each in the loop from its arrival on; the
    # run stops at its 40th event with a partial report, as before
    (tmp_path / "p.sq").write_text(LOOP)
    r = _serq(tmp_path, "--arrivals", "5", "--horizon", "inf", "--max-events", "40", "--json")
    assert r.returncode == 3, r.stderr
    report = json.loads(r.stdout)
    assert (report["events"], report["arrivals"], report["ended"], report["partial"]) == (40, 5, 0, "max-events")


def test_a_finite_horizon_says_what_did_not_drain(tmp_path):
    (tmp_path / "p.sq").write_text(LOOP)
    r = _serq(tmp_path, "--arrivals", "5", "--horizon", "20")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("p.sq: error: at t=20: --arrivals 5: 5 sessions still live at the horizon (not drained) "
                        "(--horizon 20)\n")


def test_a_loop_with_a_way_out_runs(monkeypatch):
    # by hand: one session of a batch, 1 s before the loop and 1 s a pass, ends after its third pass: t = 4
    src = LOOP.replace("arrive poisson(1)", "arrive batch(1)").replace("horizon 100; seed 1;", "horizon inf;")
    src = src.replace("  loop {\n    run d (1);\n", "  set k = 0;\n  loop {\n    run d (1);\n    set k = k + 1;\n"
                      "    branch (k >= 3) {\n      end;\n    }\n")
    report = same_json(serq_frontend.compile(source=src), monkeypatch)
    assert (report["end"], report["arrivals"], report["ended"]) == (4, 1, 1)


def test_a_hold_before_the_loop_that_the_pool_rejects_ends_its_sessions(monkeypatch):
    # a hold of 2 on a pool of 1 can never fit: each of the 3 sessions is rejected there and ends at 0
    src = ("pool p { cap 1; }\n" + LOOP.replace("arrive poisson(1)", "arrive batch(3)")
           .replace("horizon 100; seed 1;", "horizon inf;")
           .replace("  run d (1);\n  loop {\n    run d (1);\n  }\n",
                    "  hold p (2) {\n    loop {\n      run d (1);\n    }\n  };\n"))
    report = same_json(serq_frontend.compile(source=src), monkeypatch)
    (pool,) = report["pools"]
    assert (report["end"], report["ended"], pool["rejections"]) == (0, 3, 3)
