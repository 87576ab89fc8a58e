"""Known defects, round 30 (serq-sim).

A session that sent two requests through lib/vllm.sq with no `turn;` between them wrote both `request` rows with
turn 0, and nothing said so. A turn is what a `turn;` statement starts (language.txt: the workload's `turn` block
runs at every `turn;`; the records' `turn` is `turn_no`, the `turn;` statements the session has run), so the rows
keep that number, and the report warns (code `shared-turn`) of a table of requests whose rows share a session and
a turn. By hand: two sessions at 0, each two requests of prompt 4 and output 3 on an engine of two slots and cost 1,
each request three iterations: the first requests run from 0 to 3, the second from 3 to 6, four rows of turn 0.
"""

from __future__ import annotations

import serq_frontend
from tiers import same_json

TWO = """use "vllm.sq";
pool reqs { cap 2; admit via engine; }
pool kv { cap 100; block 1; evict lru; preempt lifo; }
stage engine : step { budget 100; cost 1; memory kv; }

workload {
  arrive batch(2);
  hidden o;
}

session {
  set prompt = 4;
  set o = 3;
  TURN
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  TURN
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}

run { horizon inf; }
"""

WARNING = ("warning: table `request` has 2 rows that share their session and turn with another row (2 rows of "
           "session 0 at turn 0, the first): a turn is what a `turn;` statement starts (the column `turn` is "
           "`turn_no`, the `turn;` statements the session has run), so the requests a session sends with no "
           "`turn;` between them are recorded in one turn, and session and turn do not tell them apart (a join "
           "with another table by session and turn pairs them wrongly); put `turn;` before each request, or "
           "record a column of the program's own that numbers them")


def _rows(turn: str, monkeypatch):
    import serq_sim

    program = serq_frontend.compile(source=TWO.replace("TURN", turn))
    r = same_json(program, monkeypatch)
    rows = serq_sim.run(program).records().sort_values(["time", "session"])
    return r, [(int(s), int(t), float(sent)) for s, t, sent in zip(rows["session"], rows["turn"], rows["sent"])]


def test_two_requests_in_one_turn_are_recorded_so_and_warned_of(monkeypatch):
    r, rows = _rows("", monkeypatch)
    assert rows == [(0, 0, 0.0), (1, 0, 0.0), (0, 0, 3.0), (1, 0, 3.0)]
    shared = [n for n, c in zip(r["notes"], r["codes"]) if c == "shared-turn"]
    assert shared == [WARNING]


def test_a_turn_before_each_request_numbers_them_and_nothing_is_said(monkeypatch):
    r, rows = _rows("turn;", monkeypatch)
    assert rows == [(0, 1, 0.0), (1, 1, 0.0), (0, 2, 3.0), (1, 2, 3.0)]
    assert "shared-turn" not in r["codes"]
