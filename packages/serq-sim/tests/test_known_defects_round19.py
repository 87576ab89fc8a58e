"""Known defects, round 19 (serq-sim).

A hold's clause whose value comes out NaN (or otherwise not an amount) at run time is reported at the
expression that gave it, as a stage's budget, cost and chunk are: the units and the reserve of each pool,
``reuse``, ``cache`` (at the scope's end and at a lease's end) and the lease's time. Every one was reported
at the ``hold`` (column 3 below), whichever clause it was. Both tiers, the same words
(conform.run_error); the step stage's prepared admission (pools.prepared) as well as the general one.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_sim
from conform import refused, run, run_error
from serq_sim import notes

HEAD = """pool p { cap 10; }
pool q { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  set z = 0 / 0;
"""

#: (the hold's line, the column of the clause's expression on it, the words)
CASES = {
    "cache": ("  hold p (1) { run d (1); } cache (z);", 36, "at t=1, session 0: the cache length is NaN"),
    "lease time": ("  hold p (1) { run d (1); } lease p (z);", 38, "at t=1, session 0: the lease time is NaN"),
    "reuse": ("  hold p (1) reuse (z) { run d (1); } cache (1);", 21, "at t=0, session 0: the reuse bound is NaN"),
    "units": ("  hold p (z) { run d (1); }", 11, "at t=0, session 0: the units of p are NaN"),
    "units read at admission": ("  hold p (z + used(p)) { run d (1); }", 11,
                                "at t=0, session 0: the units of p are NaN"),
    "second pool's units": ("  hold p (1), q (serial - 1) { run d (1); }", 18,
                            "at t=0, session 0: the units of q are negative (-1)"),
    "reserve": ("  hold p (1) reserve (z) { run d (1); }", 23, "at t=0, session 0: the reserve of p is NaN"),
    "reserve read at admission": ("  hold p (1) reserve (z + used(p)) { run d (1); }", 23,
                                  "at t=0, session 0: the reserve of p is NaN"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hold_clause_error_points_at_its_expression(name, monkeypatch):
    line, col, words = CASES[name]
    src = HEAD + line + "\n}\nrun { horizon 10; }\n"
    assert line[col - 1] in "zs"  # the column is the expression's first character, not the hold's (3)
    assert run_error(src, monkeypatch) == f"<source>:7:{col}: error: {words}"


def test_a_lease_of_a_member_the_hold_does_not_hold_points_at_the_lease(monkeypatch):
    """The lease's member computed (`a[j]`, j = 1) is not the one held (`a[i]`, i = 0): told at the lease's
    pool, where the linker tells a constant one, not at the hold."""
    src = """pool a[2] { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  set i = 0;
  set j = 1;
  hold a[i] (1) { run d (1); } lease a[j] (5);
}
run { horizon 10; }
"""
    assert run_error(src, monkeypatch) == ("<source>:7:38: error: at t=1, session 0: `lease a[1]`: the hold does "
                                           "not hold `a[1]`; a lease names one of its pools")


def test_the_cache_length_at_a_lease_end_points_at_the_cache_clause(monkeypatch):
    """The cache length is read again when the lease ends (at 1 + 5 = 6), where z has become NaN."""
    src = """pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  set z = 0;
  hold p (1) { run d (1); } cache (z + 1) lease p (5);
  set z = 0 / 0;
  run d (10);
}
run { horizon 20; }
"""
    assert run_error(src, monkeypatch) == ("<source>:6:36: error: at t=6, session 0: the cache length is NaN "
                                           "(at the end of the lease)")


STEP = """pool reqs { cap 4; admit via e; }
stage e : step { budget 10; cost 1; }
workload { arrive batch(1); }
session {
  set z = 0 / 0;
  HOLD
}
run { horizon 10; }
"""


@pytest.mark.parametrize("hold, col, words", [
    ("hold reqs (1) reserve (z) { run e prefill (1); }", 26, "the reserve of reqs is NaN"),
    ("hold reqs (1) reuse (z) { run e prefill (1); } cache (1);", 24, "the reuse bound is NaN"),
    ("hold reqs (z + used(reqs)) { run e prefill (1); }", 14, "the units of reqs are NaN"),
])
def test_a_step_stage_admission_points_at_the_clause(hold, col, words, monkeypatch):
    src = STEP.replace("HOLD", hold)
    assert run_error(src, monkeypatch) == f"<source>:6:{col}: error: at t=0, session 0: {words}"


# -- `branch with (p)` out of [0, 1], computed: told in the words written -----------------------------------

BRANCH = """stage d : delay;
workload { arrive batch(1); }
session {
  set p = P;
  GUARD { run d (1); } else { run d (2); }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("p, shown", [("1.5", "1.5"), ("0 - 0.5", "-0.5"), ("0 / 0", "NaN")])
def test_a_computed_branch_with_probability_is_told_in_the_words_written(p, shown, monkeypatch):
    """It named the internal draw: `~bernoulli(1.5): a probability is between 0 and 1`; the caret stays
    at the probability (column 16)."""
    src = BRANCH.replace("P", p).replace("GUARD", "branch with (p)")
    assert run_error(src, monkeypatch) == ("<source>:5:16: error: at t=0, session 0: branch with (…): a "
                                           f"probability is between 0 and 1, got {shown}")


def test_a_bernoulli_written_out_keeps_the_draw_words(monkeypatch):
    src = BRANCH.replace("P", "1.5").replace("GUARD", "branch (~bernoulli(p))")
    assert run_error(src, monkeypatch) == ("<source>:5:11: error: at t=0, session 0: ~bernoulli(1.5): a "
                                           "probability is between 0 and 1")


def test_a_nan_guard_says_the_same_constant_or_computed(monkeypatch):
    """`branch (0/0)` is refused at link time in the words a computed NaN guard has at run time."""
    computed = run_error(BRANCH.replace("P", "0 / 0").replace("GUARD", "branch (p)"), monkeypatch)
    words = computed.split("session 0: ", 1)[1]
    assert words.startswith("branch guard is NaN, not 0 or 1")
    assert refused(BRANCH.replace("P", "1").replace("GUARD", "branch (0 / 0)")) == words


# -- docs/language.md: the position K of `attention` -------------------------------------------------------

ATTENTION = """pool reqs { cap 4; admit via e; }
pool kv { cap 1000; block 1; evict lru; }
stage e : step { budget 100; chunk 4; cost attention; memory kv; }
workload { arrive batch(1); }
session {
  hold reqs (1), kv (0) { run e prefill (6) growing kv; } cache (6);
  observe a = now;
  hold reqs (1), kv (6) { run e prefill (4) growing kv; } cache (10);
  observe b = now;
  observe k = cached;
  hold reqs (1), kv (6) { run e prefill (6); } cache (6);
  observe c = now;
}
run { horizon 1000; }
"""


def test_attention_position_as_documented(monkeypatch):
    """The cost is the attention alone, so each hold lasts its chunks' Σ n (K + n/2), chunks of 4:
    a growing prefill of 6 from nothing: 4 (0 + 2) + 2 (4 + 1) = 18; a growing one of 4 after consuming its
    cached 6 (K is the hold's position, which starts at the prefix): 4 (6 + 2) = 32; a prefill that grows no
    hold, in a hold that consumed 6 too: K is the run's tokens done, 4 (0 + 2) + 2 (4 + 1) = 18."""
    _, o = run(ATTENTION, monkeypatch)
    assert [o[n][0][2] for n in ("a", "b", "k", "c")] == [18.0, 18.0 + 32.0, 6.0, 18.0 + 32.0 + 18.0]


# -- warnings are classified by their codes, never by their words -------------------------------------------

WARNS = """pool m { cap 4; }
stage s : delay;
workload { arrive renewal(1); }
session {
  hold m (6) { run s (0.5); }
}
run { horizon 20; warmup 0; seed 1; }
"""


def test_a_plugin_note_is_not_classified_by_its_words():
    """A plugin's warning given as text that begins as the simulator's not-steady one did count as
    `not-steady`; it carries no code, so it is `plugin`; one the plugin makes with its own code keeps it."""
    text = "warning: the run is not steady: my plugin's own measure says so"
    assert notes.warning_code(text) == "plugin"
    assert notes.warning_code(notes.Note(text, "my-check")) == "my-check"
    assert notes.warning_codes([text, "note: fine", notes.Note("warning: x", "my-check")]) == "plugin;my-check"


def test_a_json_report_read_back_carries_its_codes():
    """The JSON report has `codes` beside `notes` (null for a note that is no warning); a report made from its
    Result alone (as a JSON report reads back) has its notes carry them again (notes.read_back), whatever
    their words."""
    import msgspec
    from serq_report import encode_json
    from serq_sim.report import Report

    report = serq_sim.run(serq_frontend.compile(source=WARNS, sets={}, defs={}))
    doc = json.loads(encode_json(report))
    assert doc["codes"] == [n.code if isinstance(n, notes.Note) else None for n in report.notes]
    assert "rejected" in doc["codes"] and len(doc["codes"]) == len(doc["notes"])
    assert all(type(n) is str for n in report.result.notes)  # the text alone, as the JSON report has it
    back = Report(report.result, {}, {})
    assert notes.warning_codes(back.notes) == notes.warning_codes(report.notes) == "rejected"
    # reworded, the code still says what it is
    reworded = msgspec.structs.replace(report.result, notes=[n.replace("rejected", "turned away")
                                                              for n in report.result.notes])
    assert notes.warning_codes(Report(reworded, {}, {}).notes) == "rejected"
    # a report written before `codes` (version 5) read back: its warnings carry no code, and are not guessed
    older = msgspec.structs.replace(report.result, codes=[])
    assert notes.warning_codes(Report(older, {}, {}).notes) == "plugin"


# -- the fast tier's write-back is named for what it writes back ------------------------------------------------

def test_the_fast_write_back_is_named_for_the_pools_and_the_stage_jobs():
    """`_write_back_pools` wrote back the stages' jobs of infinite work too (waiting_forever reads them): it is
    `_write_back_pools_and_jobs`, under that name where docs/simulator.md names it."""
    from pathlib import Path

    from serq_sim import fast

    assert callable(getattr(fast, "_write_back_pools_and_jobs", None))
    assert not hasattr(fast, "_write_back_pools")
    doc = (Path(__file__).resolve().parents[3] / "docs" / "simulator.md").read_text()
    assert "`fast._write_back_pools_and_jobs`" in doc and "_write_back_pools`" not in doc
