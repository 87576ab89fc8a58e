"""A sweep's result is taken whole or not at all: an interrupt between a run's records and its row leaves the
table, the records table and both journals with the same runs (test_records.py stops a sweep at a fixed
point; these put the interrupt inside the taking of a result)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SINGLE = str(ROOT / "examples/multi-turn/vllm_single_turn.sq")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def keys_of(tmp_path):
    rows = {r["key"] for r in read_csv(tmp_path / "r.csv")}
    recs = {r["key"] for r in read_csv(tmp_path / "rec.csv")}
    journals = [{json.loads(line)["key"] for line in (tmp_path / f"{n}.csv.journal").read_text().splitlines()}
                for n in ("r", "rec")]
    return rows, recs, journals


SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from serq import signals
    from serq_sweep import core
    from serq_sweep.api import Records, run_plan

    signals.install()
    calls = []
    add = Records.add

    def add_then_signal(self, key, run):
        add(self, key, run)
        calls.append(key)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)  # as the second run's records are taken

    Records.add = add_then_signal
    plan = core.plan([sys.argv[1]], sets={"Lambda": [2, 4]}, seeds=[1, 2], horizon=20, warmup=5)
    out = sys.argv[2]
    _, rows, complete, _ = run_plan(plan, workers=0, out=out + "/r.csv", records=Records(out + "/rec.csv"))
    print(len(rows), complete, signals.pending())
""")


@pytest.mark.timeout(120)
def test_a_signal_while_a_result_is_taken_stops_the_sweep_after_it(tmp_path):
    r = subprocess.run([sys.executable, "-c", SCRIPT, SINGLE, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["2", "False", "False"], r.stdout  # the stop was made by the sweep
    rows, recs, (jrows, jrecs) = keys_of(tmp_path)
    assert len(rows) == 2 and rows == recs == jrows == jrecs


def test_an_interrupt_between_a_runs_records_and_its_row_keeps_neither(tmp_path, monkeypatch):
    from serq_sweep import core
    from serq_sweep.api import Records, run_plan

    calls = []
    add = Records.add

    def add_then_interrupt(self, key, run):
        add(self, key, run)
        calls.append(key)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C under the Python API, after the records, before the row

    monkeypatch.setattr(Records, "add", add_then_interrupt)
    plan = core.plan([SINGLE], sets={"Lambda": [2, 4]}, seeds=[1, 2], horizon=20, warmup=5)
    _, rows, complete, _ = run_plan(plan, workers=0, out=tmp_path / "r.csv", records=Records(tmp_path / "rec.csv"))
    assert not complete and len(rows) == 1
    rows, recs, _ = keys_of(tmp_path)
    assert rows == recs and len(rows) == 1
    # the run whose row was lost runs again, and the tables agree with a sweep never interrupted
    monkeypatch.setattr(Records, "add", add)
    _, rows, complete, resumed = run_plan(plan, workers=0, out=tmp_path / "r.csv",
                                          records=Records(tmp_path / "rec.csv"))
    assert complete and resumed == 1 and len(rows) == 4
    run_plan(plan, workers=0, out=tmp_path / "f.csv", records=Records(tmp_path / "frec.csv"))
    assert (tmp_path / "rec.csv").read_bytes() == (tmp_path / "frec.csv").read_bytes()
