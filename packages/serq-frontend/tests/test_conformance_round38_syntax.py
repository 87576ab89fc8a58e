"""language.txt §2 and §3 (and pool-reference.txt), round 38: the link errors of two tables the spec
states position by position, each at its place with a caret.

* §3, hidden: "a hidden attribute may be read in a session statement (decode (o - 1)), a run or a hold's
  cache, and is a link error in a hold's units, reserve or reuse (read at admission), a queue or eviction
  key, a spill clause, a ps stage's capacity, or a step stage's budget, cost, chunk or serve keys. An
  attribute the scheduler itself sets (cached, computed) cannot be hidden." Every position of the list, and
  the three where reading it is allowed (the run's work and the hold's cache compile); pool-reference.txt's
  preemption keys read "its visible attributes", so a hidden one is refused there too.
* §2, Expressions: "Each context variable exists at the one place named in its parenthesis (now
  everywhere), and reading it anywhere else is a link error rather than a 0": one variable of each place
  read at another (size, waiting, age: eviction keys and spill clauses; present: a ps capacity;
  residents, kv_decode: a step stage's budget, chunk, cost and serve keys; tokens, attention: its cost;
  decoding, admission, remaining: its serve keys; waited: a queue key; position: a preemption key).
* §3, Gauges: "an attribute, a draw, cachedin (the session's own prefix), now or work(…) (both move
  between events), or budget_left(…) (it plans an iteration, which may draw) is a link error";
  pool-reference.txt, preempt: "A key may not draw, read budget_left(…), or read computed".
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, refused

pytestmark = pytest.mark.timeout(120)

# one program with a slot at each place; `o` is hidden and set by the session
HIDDEN = """pool kv { cap 10; <POOLOPT> }
pool t2 { cap 10; }
stage d : fifo;
stage p : ps(<PS>);
stage e : step { budget <BUDGET>; cost <COST>; <CHUNK> <SERVE> memory kv; }
workload { arrive batch(1); hidden o; }
session { set o = 3; hold kv (<UNITS>) <RESERVE> <REUSE> { run e prefill (o); } cache (<CACHE>); }
run { horizon 1; }
"""


def hidden(**slots: str) -> str:
    defaults = {"POOLOPT": "", "PS": "1", "BUDGET": "4", "COST": "1", "CHUNK": "", "SERVE": "", "UNITS": "1",
                "RESERVE": "", "REUSE": "", "CACHE": "o"}
    defaults.update(slots)
    src = HIDDEN
    for k, v in defaults.items():
        src = src.replace(f"<{k}>", v)
    return src


HIDDEN_REFUSED = [
    (hidden(UNITS="⟨o"), "`o` is hidden: a hold's header (units, reserve, reuse: read at admission)"),
    (hidden(RESERVE="reserve (⟨o)"), "`o` is hidden: a hold's header (units, reserve, reuse: read at admission)"),
    (hidden(REUSE="reuse (⟨o)"), "`o` is hidden: a hold's header (units, reserve, reuse: read at admission)"),
    (hidden(POOLOPT="queue by (⟨o);"), "`o` is hidden: a pool's queue key is the scheduler's"),
    (hidden(POOLOPT="evict by (⟨o);"), "`o` is hidden: an eviction key or a spill clause is the scheduler's"),
    (hidden(POOLOPT="spill t2 via d (⟨o) when (1);"), "`o` is hidden: an eviction key or a spill clause"),
    (hidden(POOLOPT="spill t2 via d (1) when (⟨o);"), "`o` is hidden: an eviction key or a spill clause"),
    (hidden(SERVE="serve by (⟨o);"), "`o` is hidden: a step stage's serve key is the scheduler's"),
    (hidden(POOLOPT="preempt by (⟨o) requeue tail;"), "`o` is hidden: a preemption key is the scheduler's"),
    # a ps capacity and a step stage's budget, cost and chunk have no session at all: an attribute there,
    # hidden or not, is refused as such
    (hidden(PS="⟨o"), "a ps stage's capacity has no session: `o` is a session attribute"),
    (hidden(BUDGET="⟨o"), "a step stage's budget or chunk has no session: `o` is a session attribute"),
    (hidden(COST="⟨o"), "a step stage's cost has no session: `o` is a session attribute"),
    (hidden(CHUNK="chunk ⟨o;"), "a step stage's budget or chunk has no session: `o` is a session attribute"),
    ("stage d : delay;\nworkload { arrive batch(1); hidden ⟨cached; }\nsession { run d (1); }\nrun { horizon 1; }\n",
     "`cached` cannot be hidden: the scheduler itself sets it"),
    ("stage d : delay;\nworkload { arrive batch(1); hidden ⟨computed; }\nsession { run d (1); }\n"
     "run { horizon 1; }\n", "`computed` cannot be hidden: the scheduler itself sets it"),
]


@pytest.mark.parametrize("src, message", HIDDEN_REFUSED, ids=[f"h{i}" for i in range(len(HIDDEN_REFUSED))])
def test_a_hidden_attribute_is_refused_where_the_scheduler_reads(src, message):
    refused(src, message)


def test_a_hidden_attribute_is_read_by_a_run_and_a_hold_cache():
    """The run's work (`run e prefill (o)`) and the hold's `cache (o)` read the hidden `o`: it links."""
    assert compile_src(hidden()) is not None


D = "stage d : delay;\n"
B = "workload { arrive batch(1); }\n"
R = "run { horizon 1; }\n"

CONTEXT_ELSEWHERE = [
    (D + B + "session { run d (⟨size); }\n" + R,
     "`size` is not readable in a session statement: it exists in eviction keys and spill clauses"),
    ("pool kv { cap 10; }\n" + D + B + "session { hold kv (⟨waiting) { run d (1); } }\n" + R,
     "`waiting` is not readable in a hold's header (units, reserve, reuse: read at admission)"),
    ("pool kv { cap 10; }\n" + D + B + "session { hold kv (1) { run d (1); } cache (⟨age); }\n" + R,
     "`age` is not readable in a session statement"),
    ("pool kv { cap 10; evict by (⟨present); }\n" + B + "session { hold kv (1) { } }\n" + R,
     "`present` is not readable in an eviction key or a spill clause: it exists in a ps stage's capacity"),
    ("stage d : ps(⟨residents);\n" + B + "session { run d (1); }\n" + R,
     "`residents` is not readable in a ps stage's capacity"),
    ("pool kv { cap 10; queue by (⟨kv_decode); }\n" + B + "session { hold kv (1) { } }\n" + R,
     "`kv_decode` is not readable in a pool's queue key"),
    ("stage e : step { budget ⟨tokens; cost 1; }\n" + B + "session { run e prefill (1); }\n" + R,
     "`tokens` is not readable in a step stage's budget or chunk: it exists in a step stage's cost"),
    ("stage e : step { budget 4; cost 1; chunk ⟨attention; }\n" + B + "session { run e prefill (1); }\n" + R,
     "`attention` is not readable in a step stage's budget or chunk"),
    ("stage e : step { budget 4; cost ⟨decoding; }\n" + B + "session { run e prefill (1); }\n" + R,
     "`decoding` is not readable in a step stage's cost: it exists in a step stage's serve keys"),
    ("stage e : step { budget ⟨admission; cost 1; }\n" + B + "session { run e prefill (1); }\n" + R,
     "`admission` is not readable in a step stage's budget or chunk"),
    ("stage e : step { budget 4; cost ⟨remaining; }\n" + B + "session { run e prefill (1); }\n" + R,
     "`remaining` is not readable in a step stage's cost"),
    (D + B + "session { observe x = ⟨waited; run d (1); }\n" + R,
     "`waited` is not readable in a session statement: it exists in a pool's queue keys"),
    ("pool kv { cap 10; }\n" + B + "session { hold kv (⟨position) { } }\n" + R,
     "`position` is not readable in a hold's header (units, reserve, reuse: read at admission): it exists in "
     "preemption keys"),
]


@pytest.mark.parametrize("src, message", CONTEXT_ELSEWHERE, ids=[f"c{i}" for i in range(len(CONTEXT_ELSEWHERE))])
def test_a_context_variable_is_read_only_at_its_place(src, message):
    refused(src, message)


E = "stage e : step { budget 4; cost 1; memory kv; }\n"
G = "pool kv { cap 10; }\n" + D + B + "session { hold kv (1) { run d (1); } }\n"

KEYS_AND_GAUGES = [
    (G + "gauge g = ⟨now;\n" + R, "a gauge may not read `now`: it moves between events"),
    (G + "gauge g = ⟨work(d);\n" + R, "a gauge may not read `work(…)` (it moves between events)"),
    (G + "gauge g = ⟨cachedin(kv);\n" + R, "a gauge may not read `cachedin(…)` (the session's own prefix)"),
    (G + "gauge g = ⟨~exp(1);\n" + R, "a gauge may not draw (`~exp`)"),
    ("pool kv { cap 10; preempt by (⟨budget_left(e)); }\n" + E + B
     + "session { hold kv (1) { run e prefill (1) growing kv; } }\n" + R,
     "a preemption key may not read `budget_left(…)`"),
    ("pool kv { cap 10; preempt by (⟨~exp(1)); }\n" + E + B
     + "session { hold kv (1) { run e prefill (1) growing kv; } }\n" + R,
     "a preemption key may not draw (`~exp`)"),
    ("pool kv { cap 10; preempt by (⟨computed) requeue tail; }\n" + E + B
     + "session { hold kv (1) { run e prefill (1) growing kv; } }\n" + R,
     "a preemption key may not read `computed`"),
]


@pytest.mark.parametrize("src, message", KEYS_AND_GAUGES, ids=[f"k{i}" for i in range(len(KEYS_AND_GAUGES))])
def test_what_a_gauge_and_a_preemption_key_may_not_read(src, message):
    refused(src, message)


# §3, at admission: a binding's name is "not read outside the holds that bind it". A binding its body
# reads is set at the body's top and a read after the hold was told so; one its body does not read is
# substituted into the header alone, and a read after the hold said only "unknown name `a`", as if the
# program had no such name. Both are told alike now, at the read.
OUTSIDE = "pool kv { cap 10; }\n" + D + B
BINDING_OUTSIDE = [
    (OUTSIDE + "session { hold kv (a) at admission (a = serial + 2) { run d (a); } observe x = ⟨a; }\n" + R,
     "`a` is an `at admission` binding, readable only inside the holds that bind it"),
    (OUTSIDE + "session { hold kv (a) at admission (a = serial + 2) { run d (1); } observe x = ⟨a; }\n" + R,
     "`a` is an `at admission` binding, readable only inside the holds that bind it"),
    (OUTSIDE + "session { hold kv (a) at admission (a = serial + 2) { run d (1); } hold kv (⟨a) { run d (1); } }\n"
     + R, "`a` is an `at admission` binding, readable only inside the holds that bind it"),
]


@pytest.mark.parametrize("src, message", BINDING_OUTSIDE, ids=["body_reads", "body_does_not_read", "next_hold"])
def test_a_binding_read_after_its_hold_is_told_as_a_binding(src, message):
    refused(src, message)


def test_a_binding_name_is_free_after_its_hold_for_an_attribute():
    """A binding the body does not read takes no name from the program: an attribute of that name set and
    read after the hold links, as before."""
    src = OUTSIDE + "session { hold kv (a) at admission (a = 2) { run d (1); } set a = 3; run d (a); }\n" + R
    assert compile_src(src) is not None


# §2, Statistics and docs/language.md: an observe, a gauge and a record table name the report's figures,
# and no expression reads them. A read of an observe's name was told what it is; a gauge's and a record
# table's were told "unknown name", as if the program had no such name. Each is told now, at the read; a
# gauge that takes an attribute's name is read nowhere in its place (the attribute is read), as before.
FIGURE_READ = [
    ("pool kv { cap 10; }\n" + B + "session { hold kv (1) { } observe y = ⟨g; }\ngauge g = used(kv);\n" + R,
     "`g` is a gauge's name, not a value: a gauge is a time average the report gives and sets nothing"),
    ("pool kv { cap 10; }\n" + B + "session { hold kv (1) { } }\ngauge g = used(kv);\ngauge h = ⟨g + 1;\n" + R,
     "`g` is a gauge's name, not a value"),
    (D + B + "session { record r { a = 1; } observe y = ⟨r; }\n" + R,
     "`r` is a record table's name, not a value: a `record` writes a row for the report and sets nothing"),
    (D + B + "session { observe u = 1; run d (⟨u); }\n" + R, "`u` is an observe's name, not a value"),
]


@pytest.mark.parametrize("src, message", FIGURE_READ, ids=["gauge", "gauge_in_gauge", "record", "observe"])
def test_a_figures_name_read_as_a_value_says_what_it_is(src, message):
    refused(src, message)


def test_a_gauge_named_as_an_attribute_is_read_nowhere_in_its_place():
    src = "pool kv { cap 10; }\n" + B + "session { set g = 2; hold kv (g) { } }\ngauge g = used(kv);\n" + R
    assert compile_src(src) is not None


# §2, Expressions: an aggregate's index "may not be a name the program already has", and the linker writes
# the terms out with j = 0 … n-1: the index is read in the body alone. A read after the aggregate (or in
# an aggregate over another index) said "unknown name `j`"; it says what `j` is now. A definition's body read
# inside the aggregate is the program's name and stays unknown (test_known_defects_round10).
INDEX_OUTSIDE = [
    (D + B + "session { observe x = max j in 3 (j); observe y = ⟨j; }\n" + R,
     "`j` is the index of `max j in …` (at 3:23), read only inside its body"),
    (D + B + "session { observe x = max j in 3 (j) + ⟨j; }\n" + R,
     "`j` is the index of `max j in …` (at 3:23), read only inside its body"),
    (D + B + "session { observe x = max j in 3 (max k in 2 (j + k) + ⟨k); }\n" + R,
     "`k` is the index of `max k in …` (at 3:35), read only inside its body"),
    ("def g() = ⟨j * 2;\n" + D + B + "session { observe x = sum j in 3 (g()); }\n" + R, "unknown name `j`"),
]


@pytest.mark.parametrize("src, message", INDEX_OUTSIDE, ids=["after", "beside", "nested", "definition_body"])
def test_an_aggregates_index_read_outside_it_says_what_it_is(src, message):
    refused(src, message)
