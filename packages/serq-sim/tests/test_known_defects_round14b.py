"""Numbers at the edges of the doubles in pools and stages, and a stalled step engine under open arrivals.

* A pool's count of units evicted (``evicted_units``) was a plain sum: 94 evictions of 6e307 units made it
  inf, the report's ``null``, with no word of what it was. The count is kept as the statistics keep a sum
  whose terms may be beyond the doubles (``stats.add_units``: amounts of ``HUGE_UNITS`` or more in units of
  2**512, an exact scaling), so a total within the doubles is the same double, and one beyond them is inf in
  the table with a note giving its size.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json

pytestmark = pytest.mark.timeout(60)


def report(src: str, monkeypatch) -> dict:
    """The JSON report of ``src`` on the default tier and on the general engine, which must be the same bytes."""
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        out.append(encode_json(serq_sim.run(prog)))
    assert out[0] == out[1]
    return json.loads(out[1])


# --- evicted_units beyond the doubles -------------------------------------------------------------------

CACHING = """pool kv { POOL }
stage d : delay;
workload {
  arrive batch(N);
}
session {
  hold kv (6e307) {
    run d (1);
  } cache (6e307);
}
run { horizon 1000; }
"""


def caching(pool: str, n: int) -> str:
    return CACHING.replace("POOL", pool).replace("N)", f"{n})")


# (pool, sessions, entries evicted, units evicted): every session holds 6e307 of the cap 1e308 for 1 s, one
# after another, and caches them; each admission evicts what the next 6e307 needs beside the cache.
#  * no block, or a block of 6e307: each admission but the first evicts the one entry cached (6e307);
#  * blocks of 2e307, smallest first: the first admission takes one block of s0's entry (4e307 left, the
#    cache then 4e307 + 6e307 = 1e308), each later one that 4e307 entry and a block of the next: 6e307 a turn;
#  * blocks of 3e307, largest first: the first takes one block (3e307 left), each later one a block of the
#    newest entry and then the older remainder, whole: 6e307 a turn.
CASES = [
    ("cap 1e308;", 95, 94, 94 * 6e307),
    ("cap 1e308; block 6e307;", 95, 94, 94 * 6e307),
    ("cap 1e308; evict by (size);", 95, 94, 94 * 6e307),
    ("cap 1e308; block 6e307; evict by (size);", 95, 94, 94 * 6e307),
    ("cap 1e308; block 2e307; evict by (size);", 95, 93, 2e307 + 93 * 6e307),
    ("cap 1e308; block 3e307; evict by (0 - size);", 95, 93, 3e307 + 93 * 6e307),
]


@pytest.mark.parametrize("pool,n,entries,units", CASES, ids=[c[0] for c in CASES])
def test_units_evicted_beyond_the_doubles_are_counted(pool, n, entries, units, monkeypatch):
    # units is a Python float only in its decimal text: the product is beyond the doubles (inf); its size is
    # the hand count, 5.64e309, 5.6e309, 5.61e309
    assert units == float("inf")
    shown = {94: "5.64e+309", 93: "5.6e+309" if "2e307" in pool else "5.61e+309"}[entries]
    r = report(caching(pool, n), monkeypatch)
    kv = r["pools"][0]
    assert kv["evicted_entries"] == entries
    assert kv["evicted_units"] is None  # inf: the JSON of a non-finite number
    assert r["notes"] == [f"note: pool kv evicted {shown} units after the warm-up, beyond the largest double: its "
                          "evicted_units is inf (null in JSON)"]


# the same pools with three sessions: two admissions evict, a total within the doubles, the plain sum's double
SMALL = [
    ("cap 1e308;", 2, 6e307 + 6e307),
    ("cap 1e308; block 2e307; evict by (size);", 1, 2e307 + 6e307),
    ("cap 1e308; block 3e307; evict by (0 - size);", 1, 3e307 + 3e307 + 3e307),
]


@pytest.mark.parametrize("pool,entries,units", SMALL, ids=[c[0] for c in SMALL])
def test_units_evicted_within_the_doubles_are_the_plain_sum(pool, entries, units, monkeypatch):
    r = report(caching(pool, 3), monkeypatch)
    kv = r["pools"][0]
    assert (kv["evicted_entries"], kv["evicted_units"]) == (entries, units)
    assert r["notes"] == []


def test_the_count_of_units_kept_in_two_sums():
    from serq_sim.stats import HUGE_UNITS, add_units, shown_units, units_total

    t = h = 0.0
    for x in (1.0, 2.5, HUGE_UNITS, 2.0**1000, 0.5):
        t, h = add_units(t, h, x)
    # the small amounts in the first sum, the large ones in units of 2**512 in the second
    assert (t, h) == (4.0, 2.0**-256 + 2.0**488)
    assert units_total(t, h) == 4.0 + HUGE_UNITS + 2.0**1000
    # ten amounts of 2**1023, beyond the doubles
    t = h = 0.0
    for _ in range(10):
        t, h = add_units(t, h, 2.0**1023)
    assert units_total(t, h) == float("inf")
    exact = str(10 * 2**1023)  # the integer's decimal digits
    q = (int(exact[:7]) + 5) // 10  # six digits, rounded (the seventh is not followed by zeros alone)
    assert shown_units(t, h) == f"{q // 10**5}.{q % 10**5:05d}".rstrip("0") + f"e+{len(exact) - 1}" == "8.98847e+308"
    assert shown_units(3.0, 0.0) == "3" and shown_units(0.0, 0.0) == "0"


# --- a ps share that underflows ------------------------------------------------------------------------

def outcome(src: str, monkeypatch) -> str:
    """The error of ``src`` on the default tier and on the general engine, which must be the same words."""
    from serq_sim.errors import SimError

    prog = serq_frontend.compile(source=src, sets={}, defs={})
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        with pytest.raises(SimError) as e:
            serq_sim.run(prog)
        out.append(str(e.value))
    assert out[0] == out[1]
    return out[1]


def ps_program(cap: str, n: int, work: str = "1e-300") -> str:
    return f"""stage cpu : ps({cap});
workload {{
  arrive batch({n});
}}
session {{
  run cpu ({work});
}}
run {{ horizon inf; }}
"""


TINY = "2.2250738585072014e-308"  # 2**-1022, the smallest normal double


def test_the_program_takes_the_fast_tier():
    from serq_sim import fast

    assert fast.tier(serq_frontend.compile(source=ps_program("5e-324", 2), sets={}, defs={})) == "fast"


def test_a_share_that_rounds_to_0_is_refused_at_the_capacity(monkeypatch):
    # 5e-324 (2**-1074, the least double) between two jobs is 2**-1075, which rounds to 0: no job completed and
    # the run ended at its horizon without a word (here horizon inf: at once, with both sessions live)
    msg = outcome(ps_program("5e-324", 2), monkeypatch)
    assert msg == (
        "<source>:1:16: error: at t=0: stage cpu: the capacity 4.94066e-324 at present = 2 gives each job a share "
        "of 0, below the smallest normal double (2.22507e-308), where a share loses its precision (this one is 0: "
        "no job would ever complete); a ps stage's capacity is 0 or at least present times that")


def test_a_share_below_the_normal_doubles_is_refused(monkeypatch):
    # one job alone at 2**-1023 (half the smallest normal double): a share that has lost a bit of precision
    msg = outcome(ps_program("pow(2, -1023)", 1), monkeypatch)
    assert "gives each job a share of 1.11254e-308, below the smallest normal double (2.22507e-308), where a " \
           "share loses its precision; a ps" in msg


def test_a_share_of_the_smallest_normal_double_serves(monkeypatch):
    # two jobs of work 1e-300 at 2 * 2**-1022: each at 2**-1022, both complete at 1e-300 / 2**-1022
    r = report(ps_program(f"2 * {TINY}", 2), monkeypatch)
    t = 1e-300 / float(TINY)
    assert r["end"] == pytest.approx(t, rel=1e-12) and r["ended"] == 2
    # a capacity that is 0 serves nothing, as before (language.md: "0 serves nothing")
    r = report(ps_program("present > 1 ? 0 : 1", 2, "1"), monkeypatch)
    assert r["ended"] == 0


FLOW = """stage a : ps(CAP);
stage b : ps(1);
share SHARE;
workload {
  arrive batch(2);
}
session {
  run a, b (1e-300);
}
run { horizon inf; }
"""


@pytest.mark.parametrize("share", ["maxmin", "bottleneck"])
def test_a_flow_rate_that_rounds_to_0_is_refused_at_the_run(share, monkeypatch):
    msg = outcome(FLOW.replace("CAP", "5e-324").replace("SHARE", share), monkeypatch)
    assert msg == (
        f"<source>:8:3: error: at t=0, session 0: the run over stages a, b gets a rate of 0 under share {share}, "
        "below the smallest normal double (2.22507e-308), where a share loses its precision (this one is 0: the "
        "run would never complete); the capacities of its stages shared among the flows give each run at least "
        "that")
    # at twice the smallest normal double, each run's share of a is 2**-1022: both complete at 1e-300 / 2**-1022
    r = report(FLOW.replace("CAP", f"2 * {TINY}").replace("SHARE", share), monkeypatch)
    assert r["ended"] == 2 and r["end"] == pytest.approx(1e-300 / float(TINY), rel=1e-12)


# --- a step stage that never starts an iteration, under open arrivals -------------------------------------

STEP = """POOLS
stage E : step { budget BUDGET; cost 1;MEMORY }
workload {
  arrive ARRIVE;
}
session {
  BODY
}
run { horizon 10.5; }
"""

PLAIN = "run E prefill (4);\n  run E decode (4);"


def step_program(budget: str, arrive: str = "renewal(1)", pools: str = "", memory: str = "",
                 body: str = PLAIN) -> str:
    return (STEP.replace("POOLS", pools).replace("BUDGET", budget).replace("MEMORY", memory)
            .replace("ARRIVE", arrive).replace("BODY", body))


def forever(r: dict) -> list[str]:
    return [n for n in r["notes"] if "wait for ever" in n]


STALLED = ("warning: 10 session(s) wait for ever at the end of the run (each waits at step stage E, whose budget "
           "cannot rise above 0 as jobs arrive, so no iteration ever starts): 10 at a stage that will never "
           "complete them (sessions 0, 1, 2, 3, 4, …)")


@pytest.mark.parametrize("budget", ["residents > 0 ? 0 : 64", "max(0, 8 - residents * 8)", "0",
                                    "decoders + residents >= 1 ? 0 : 64", "!(residents == 0) ? 0 : 64"])
def test_a_stage_whose_budget_stays_0_under_open_arrivals(budget, monkeypatch):
    # renewal(1) to 10.5: sessions at t = 1 … 10, each a resident of E from its arrival; the first makes the
    # budget 0 (residents 1), and more residents keep it there: none is served, and each waits for ever
    r = report(step_program(budget), monkeypatch)
    assert (r["arrivals"], r["ended"], r["stages"][0]["iterations"]) == (10, 0, 0)
    assert forever(r) == [STALLED]


def test_the_same_stage_under_batch_arrivals_keeps_its_words(monkeypatch):
    r = report(step_program("residents > 0 ? 0 : 64", "batch(2)"), monkeypatch)
    assert forever(r) == ["warning: 2 session(s) wait for ever at the end of the run (no event is left that could "
                          "wake them): 2 at a stage that will never complete them"]


@pytest.mark.parametrize("budget", [
    "residents < 5 ? 0 : 64",  # a batch of 5 starts it: 5 of the 10 complete
    "now < 50 ? 0 : 64",  # the run ends at 10.5, before the stage would start
    "sqrt(residents) > 0.5 ? 0 : 64",  # sqrt is not bounded (it stalls, but no bound says so): not judged
    "residents % 2 == 1 ? 0 : 64",  # % is not bounded: an even count of residents would start it
])
def test_a_stage_that_may_yet_start_is_not_judged(budget, monkeypatch):
    r = report(step_program(budget), monkeypatch)
    assert forever(r) == []


KV = "pool kv { cap 1000; preempt lifo; }"
HELD = "hold kv (4) {\n    run E prefill (4) growing kv;\n    run E decode (4) growing kv;\n  }"


def test_a_memory_that_only_the_stalled_stage_grows(monkeypatch):
    # kv preempts, but only E's iterations grow it (its growing runs), and E never iterates: judged as before
    r = report(step_program("residents > 0 ? 0 : 64", pools=KV, memory=" memory kv;", body=HELD), monkeypatch)
    assert forever(r) == [STALLED]


def test_a_resident_a_grow_statement_could_preempt_is_not_judged(monkeypatch):
    # a `grow kv` in a branch no session takes could preempt a resident (its session then leaves E and the
    # residents fall): the stage is not judged
    body = "branch (serial < 0) {\n    hold kv (1) { grow kv (1); }\n  }\n  " + HELD
    r = report(step_program("residents > 0 ? 0 : 64", pools=KV, memory=" memory kv;", body=body), monkeypatch)
    assert forever(r) == []


def test_requests_queued_behind_a_stalled_engine(monkeypatch):
    # admit via E: the first request is admitted (budget 64, no resident), and the stage never runs again;
    # the 9 after it wait in reqs' queue for an iteration that never comes, and the first never completes
    body = "hold reqs (1) {\n    run E prefill (4);\n    run E decode (4);\n  }"
    r = report(step_program("residents > 0 ? 0 : 64", pools="pool reqs { cap 64; admit via E; }", body=body),
               monkeypatch)
    [w] = forever(r)
    assert w.startswith("warning: 10 session(s) wait for ever at the end of the run (")
    assert w.endswith("): 1 at a stage that will never complete them (session 0); 9 queued at reqs (sessions 1, 2, "
                      "3, 4, 5, …)")
    assert "at step stage E, whose budget cannot rise above 0 as jobs arrive" in w
