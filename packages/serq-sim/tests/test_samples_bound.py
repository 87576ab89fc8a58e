"""Samples that would outgrow memory: a run stops with its partial report once it holds
``max_samples`` samples (``serq run --max-samples``), in either tier; a ``MemoryError`` inside a run stops
it the same way; and ``serq`` says "out of memory" in one line when even that cannot be done."""

from __future__ import annotations

import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_sim import engine

SERQ = str(Path(sys.executable).parent / "serq")

# each session: an arrival, a completion (two events), then ten samples of x
TEN = """stage d : delay;
workload { arrive poisson(1000); }
session {
  run d (0.0001);
  set i = 0;
  loop { observe x = i; set i = i + 1; branch (i == 10) { end; } }
}
run { horizon 1e12; seed 1; }
"""
# the same, with a gauge, so the general engine runs it (gauges change points count as samples)
TEN_GAUGE = TEN.replace("stage d : delay;", "stage d : delay;\ngauge q = queue(d);")


@pytest.mark.parametrize("src, tier", [(TEN, "fast"), (TEN_GAUGE, "general")])
def test_a_run_stops_with_its_partial_report_at_max_samples(src, tier):
    n = 50_000
    r = serq_sim.run(serq_frontend.compile(source=src), max_samples=n)
    assert r.tier == tier
    assert r.result.partial == "max-samples" and r.interrupted and r.exit_status == 3
    held = len(r.observe("x")) + sum(len(g) for g in r.gauges.values())
    if tier == "general":
        # counted down where they are added (an observe's sample, a gauge's change point: one at a time), so
        # the run stops at the one that makes it hold n (it was checked every 20 000 events: 100 000 and more)
        assert held == n
    else:
        # checked when the buffers grow by an eighth (at least 1 024): stopped at the first growth past n
        assert n <= len(r.observe("x")) <= n + n // 8 + 1024
    assert any(note.startswith("note: stopped holding ") and f"(--max-samples {n}) at t=" in note
               for note in r.result.notes), r.result.notes
    # what was simulated is all there: every session that ended took its ten samples
    assert len(r.observe("x")) >= 10 * (r.result.ended - 1)


def test_below_the_bound_nothing_changes():
    prog = serq_frontend.compile(source=TEN.replace("horizon 1e12", "horizon 20"))
    r = serq_sim.run(prog, max_samples=10**9)
    assert r.result.partial is None and not r.interrupted
    assert r.result == serq_sim.run(prog).result
    assert engine.DEFAULT_MAX_SAMPLES == 100_000_000


@pytest.mark.parametrize(("bad", "exc"), [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_max_samples_must_be_a_positive_integer(bad, exc):
    # an int out of range is a ValueError, what is no int (a float, a bool) a TypeError
    with pytest.raises(exc, match="max_samples must be a positive integer"):
        serq_sim.run(serq_frontend.compile(source=TEN), max_samples=bad)


def test_a_memory_error_in_a_run_stops_it_with_its_partial_report(monkeypatch):
    # the general engine; the 1 000th sample of x finds no memory
    from array import array

    class Starved(array):
        def append(self, v):
            if len(self) == 999:
                raise MemoryError
            super().append(v)

    class Observations(engine.Observations):
        def __init__(self):
            super().__init__()
            self.sessions = Starved("q")  # the third column: the sample's value and time are in already

    monkeypatch.setattr(engine, "Observations", Observations)
    prog = serq_frontend.compile(source=TEN.replace("horizon 1e12", "horizon 20"))  # 200 000 samples
    r = serq_sim.run(prog, check_invariants=True)
    assert r.tier == "general" and r.result.partial == "memory" and r.exit_status == 3
    x = r.observe("x")
    assert len(x.values) == len(x.times) == len(x.sessions) == len(x.turns) == 999
    assert any(note.startswith("note: out of memory holding 999 samples") for note in r.result.notes)


def test_the_cli_stops_at_max_samples_with_status_3(tmp_path):
    f = tmp_path / "ten.sq"
    f.write_text(TEN)
    r = subprocess.run([SERQ, "run", str(f), "--no-progress", "--max-samples", "5000"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 3, r.stderr
    assert r.stdout.startswith("run: PARTIAL (max-samples)")
    assert "note: stopped holding " in r.stdout and "(--max-samples 5000)" in r.stdout


def test_out_of_memory_at_the_cli_is_one_line(tmp_path):
    # an address-space limit the run's samples pass (100 000 000 samples need 2.8 GB): no traceback; the
    # memory guard (memguard.py) stops the run while it can still write its report, with half the room
    # it had used
    f = tmp_path / "ten.sq"
    f.write_text(TEN)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (700 << 20, 700 << 20))

    r = subprocess.run([SERQ, "run", str(f), "--no-progress"], capture_output=True, text=True, timeout=300,
                       preexec_fn=limit)
    assert "Traceback" not in r.stderr
    assert r.returncode == 3, r.stderr
    assert r.stdout.startswith("run: PARTIAL (memory)")
    # (the note names the observe holding most of them after the count: test_known_defects_round39_holders)
    assert "note: stopped near the memory limit: " in r.stdout
    assert re.search(r" samples held \(\d+ of them by observe x at [^)]*ten\.sq:6:10\) at t=", r.stdout), r.stdout
