"""Ctrl-C landing between two appends of one sample, row or run of gaps (engine.Simulation._settle_appends).

An observe's sample is four appends (value, time, session, turn), a record's row one a column, a run of equal
output-token gaps two (step/tokens.py: the value, then its count). A signal's KeyboardInterrupt lands at any
bytecode boundary, so a stop could leave one column longer than the others, and the partial report read them
as they were: a stop between a gap's value and its count was ``IndexError: array index out of range`` out of
``serq_sim.run`` (the ITL's statistics, met by a SIGALRM some milliseconds into runs of
examples/multi-turn/vllm.sq), in place of the partial report. What was being added when the stop came is
dropped, each set of columns cut back to its shortest."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_sim.step import tokens

ROOT = Path(__file__).resolve().parents[3]
SINGLE = str(ROOT / "examples" / "multi-turn" / "vllm_single_turn.sq")

#: the call of TokenGaps.add the stop comes in, after its value is appended and before its count
STOP_AT = 40


@pytest.fixture
def stopped_between_a_gap_and_its_count(monkeypatch):
    """Run SINGLE with a KeyboardInterrupt in the STOP_AT-th ``TokenGaps.add``, after its value went in; at
    that moment half a record row and a quarter of an observe's sample are appended too (the other places a
    stop can cut). Returns the report and the count of the gaps held whole when the stop came."""
    held = [0]
    calls = [0]
    real_add = tokens.TokenGaps.add

    def add(self, value, weight):
        calls[0] += 1
        if calls[0] < STOP_AT:
            return real_add(self, value, weight)
        held[0] = sum(self.weights)
        self.values.append(value)  # (its count not yet)
        sim = self_sim[0]
        table = sim.record_tables[0]
        table.sessions.append(999)  # a row begun: its session and turn, none of its values
        table.turns.append(0)
        sim.obs[0].values.append(-1.0)  # a sample begun: its value alone
        raise KeyboardInterrupt

    self_sim: list = [None]
    monkeypatch.setattr(tokens.TokenGaps, "add", add)
    import serq_sim.engine as engine

    real_start = engine.Simulation.run

    def run(sim):
        self_sim[0] = sim
        return real_start(sim)

    monkeypatch.setattr(engine.Simulation, "run", run)
    report = serq_sim.run(serq_frontend.compile(SINGLE), seed=2, horizon=120, warmup=0)
    assert calls[0] == STOP_AT  # (the stop came where it was put)
    return report, held[0]


def test_the_partial_report_counts_the_gaps_added_whole(stopped_between_a_gap_and_its_count):
    report, held = stopped_between_a_gap_and_its_count
    assert report.partial == "interrupted"
    # the ITL's samples: the gaps held when the stop came (the run cut, its value without its count, is not
    # there: it was an IndexError)
    assert report.result.requests.itl.count == held > 0


def test_the_row_and_the_sample_being_added_are_dropped(stopped_between_a_gap_and_its_count):
    report, _held = stopped_between_a_gap_and_its_count
    table = report.records(kind="numpy")
    lengths = {name: len(column) for name, column in table.items()}
    assert len(set(lengths.values())) == 1, lengths  # every column of every row
    assert 999 not in table["session"].tolist()
    o = report.observe(next(iter(report.result.observes)))
    assert len(o.values) == len(o.times) == len(o.sessions) == len(o.turns)
    assert -1.0 not in o.values.tolist()
