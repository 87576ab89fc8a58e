"""A keyword of another place where a block's item begins, and a run setting's word run on, told what is wrong:

- a keyword where a workload's item, a step stage's field, a run setting or a pool's option begins that is none
  of them (`workload { cache poisson(1); }`, `step { choose 1; }`, `run { serve 1; }`) was offered the block's
  word closest in spelling (`trace`, `cost`, `seed`) with the grammar's list, as a misspelling; a keyword of
  another place is none: it is told that it does not begin the block's item, with the block's words (a word
  misspelt is still offered the word meant);
- a run setting's word run on (`seeds 1;`, `arrivalss 1;`) was offered `serve`: the setting's word, of a
  terminal of several words, was not among the words offered.
"""

from __future__ import annotations

import pytest
from sqhelpers import told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
stage e : step { budget 4; cost 1; }
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""
WORKLOAD = "a workload's item begins with its word (`arrive`, `trace`, `hidden`, `init`, `turn`, `session`)"
STEP = "a step stage's field begins with its word (`budget`, `cost`, `chunk`, `serve`, `memory`)"
RUN = "the run block's settings begin with their word (`horizon`, `warmup`, `seed`, `arrivals`)"
POOL = ("a pool's option begins with its word (`cap`, `block`, `evict`, `preempt`, `queue`, `reserve`, `cache`, "
        "`admit`, `spill`)")


@pytest.mark.parametrize("old, new, said", [
    ("arrive poisson(1);", "⟨cache poisson(1);", f"`cache` does not begin a workload's item: {WORKLOAD}"),
    ("arrive poisson(1);", "⟨reserve poisson(1);", f"`reserve` does not begin a workload's item: {WORKLOAD}"),
    ("horizon 10;", "horizon 10; ⟨serve 1;", f"`serve` does not begin a setting of the run block: {RUN}"),
    ("cap 100;", "cap 100; ⟨cost 1;", f"`cost` does not begin a pool's option: {POOL}"),
    ("cost 1;", "⟨choose 1;", "`choose` begins a statement, which stands in a session's block, a server's, a "
                               f"definition's or a queue's entry: {STEP}"),
])
def test_a_keyword_of_another_place_is_no_misspelling(old, new, said):
    assert told_in(BASE, old, new) == said


@pytest.mark.parametrize("old, new, said", [
    ("arrive poisson(1);", "⟨trac poisson(1);", "unexpected `trac` (expected `}`, arrive, hidden, init, session, "
                                                "trace, turn) (did you mean `trace`?)"),
    ("cost 1;", "cost 1; ⟨memry kv;", "unexpected `memry` (expected `}`, budget, chunk, cost, memory, serve) (did "
                                      "you mean `memory`?)"),
])
def test_a_word_misspelt_is_still_offered_the_word(old, new, said):
    assert told_in(BASE, old, new) == said


@pytest.mark.parametrize("new, meant", [
    ("⟨seeds 1;", "seed"), ("⟨arrivalss 1;", "arrivals"), ("⟨horizons 10;", "horizon"), ("⟨warmups 1;", "warmup"),
])
def test_a_run_settings_word_run_on_is_offered_the_setting(new, meant):
    word = new[1:].split()[0]
    assert told_in(BASE, "horizon 10;", new) == f"unexpected `{word}` (did you mean `{meant}`?)"


@pytest.mark.parametrize("new, word", [
    ("init { set x = 1; } ⟨pool { }", "pool"),
    ("init { set x = 1; } ⟨admission poisson(1);", "admission"),
])
def test_a_keyword_after_a_workloads_block_item(new, word):
    # (after a `}` as after a `;`: `admission` was offered `session`)
    assert told_in(BASE, "arrive poisson(1);", f"arrive poisson(1); {new}") == (
        f"`{word}` does not begin a workload's item: {WORKLOAD}")
