"""Numbers at the edges of the doubles in pools and stages, and a stalled step engine under open arrivals.

* A pool's count of units evicted (``evicted_units``) was a plain sum: 94 evictions of 6e307 units made it
  inf, the report's ``null``, with no word of what it was. The count is kept as the statistics keep a sum
  whose terms may be beyond the doubles (``stats.add_units``: amounts of ``HUGE_UNITS`` or more in units of
  2**512, an exact scaling), so a total within the doubles is the same double, and one beyond them is inf in
  the table with a note giving its size.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from tiers import same_error, same_json

pytestmark = pytest.mark.timeout(60)


def report(src: str, monkeypatch) -> dict:
    """The JSON report of ``src`` on the default tier and on the general engine, which must be the same bytes."""
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    return same_json(prog, monkeypatch)


# --- evicted_units beyond the doubles -------------------------------------------------------------------

#: the amounts are whole multiples of U = 2**1020 (about 1.12e307), so every sum the pool makes of them is a
#: double and the counts below are exact in any arithmetic
U = 2**1020


def units(k: int) -> str:
    """k U as the program writes it (the decimal that reads back as that double)."""
    return repr(float(k * U))


CACHING = """pool kv { POOL }
stage d : delay;
workload {
  arrive batch(N);
}
session {
  hold kv (HOLD) {
    run d (1);
  } cache (HOLD);
}
run { horizon inf; }  // ends when the batch drains: no idle tail to note
"""


def caching(pool: str, n: int) -> str:
    pool = pool.replace("CAP", units(10)).replace("B2", units(2)).replace("B3", units(3)).replace("B6", units(6))
    return CACHING.replace("POOL", pool).replace("N)", f"{n})").replace("HOLD", units(6))


def shown(k: int) -> str:
    """k U to six significant digits, as %g writes a double, from the integer's own digits."""
    digits = str(k * U)
    q = (int(digits[:7]) + 5) // 10  # (the digits after the seventh are not all 0)
    return f"{q // 10**5}.{q % 10**5:05d}".rstrip("0").rstrip(".") + f"e+{len(digits) - 1}"


# (pool, sessions, entries evicted, units evicted in U): every session holds 6 U of the cap 10 U for 1 s, one
# after another, and caches them; each admission evicts what the next 6 U need beside the cache.
#  * no block, or a block of 6 U: each admission but the first evicts the one entry cached (6 U);
#  * blocks of 2 U, smallest first: the first admission takes one block of s0's entry (4 U left, the cache
#    then 4 U + 6 U = 10 U), each later one that 4 U entry and a block of the next: 6 U a turn;
#  * blocks of 3 U, largest first: the first takes one block (3 U left), each later one a block of the
#    newest entry and then the older remainder, whole: 6 U a turn.
CASES = [
    ("cap CAP;", 95, 94, 94 * 6),
    ("cap CAP; block B6;", 95, 94, 94 * 6),
    ("cap CAP; evict by (size);", 95, 94, 94 * 6),
    ("cap CAP; block B6; evict by (size);", 95, 94, 94 * 6),
    ("cap CAP; block B2; evict by (size);", 95, 93, 2 + 93 * 6),
    ("cap CAP; block B3; evict by (0 - size);", 95, 93, 3 + 93 * 6),
]


@pytest.mark.parametrize("pool,n,entries,k", CASES, ids=[c[0] for c in CASES])
def test_units_evicted_beyond_the_doubles_are_counted(pool, n, entries, k, monkeypatch):
    assert k * U > 2**1024  # beyond the doubles: 564 U is 6.34e309
    r = report(caching(pool, n), monkeypatch)
    kv = r["pools"][0]
    assert kv["evicted_entries"] == entries
    assert kv["evicted_units"] is None  # inf: the JSON of a non-finite number
    assert r["notes"] == [f"note: pool kv evicted {shown(k)} units after the warm-up, beyond the largest double: "
                          "its evicted_units is inf (null in JSON)"]
    assert shown(564) == "6.33687e+309"


# the same pools with three sessions: two admissions evict, a total within the doubles
SMALL = [
    ("cap CAP;", 2, 6 + 6),
    ("cap CAP; block B2; evict by (size);", 1, 2 + 6),
    ("cap CAP; block B3; evict by (0 - size);", 1, 3 + 3 + 3),
]


@pytest.mark.parametrize("pool,entries,k", SMALL, ids=[c[0] for c in SMALL])
def test_units_evicted_within_the_doubles_are_the_plain_sum(pool, entries, k, monkeypatch):
    r = report(caching(pool, 3), monkeypatch)
    kv = r["pools"][0]
    assert (kv["evicted_entries"], kv["evicted_units"]) == (entries, float(k * U))
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

    prog = serq_frontend.compile(source=src, sets={}, defs={})
    return same_error(prog, monkeypatch)


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
        "no job would ever complete); a ps stage's capacity is 0 or at least present times that\n"
        "  stage cpu : ps(5e-324);\n"
        "  " + " " * 15 + "^")  # (under the capacity)


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
        "that\n"
        "    run a, b (1e-300);\n"
        "    ^")
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


# (each resident waits in its first run, the prefill: the body's first line, 7:3, or 8:5 inside a hold)
STALLED = ("warning: 10 sessions wait for ever at the end of the run (each waits at step stage E, whose budget "
           "cannot rise above 0 as jobs arrive, so no iteration ever starts): 10 at stage E, which will never "
           "complete them (sessions 0, 1, 2, 3, 4, …, in the run at <source>:7:3)")


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
    assert forever(r) == ["warning: 2 sessions wait for ever at the end of the run (no event is left that could "
                          "wake them): 2 at stage E, which will never complete them (sessions 0, 1, in the run at "
                          "<source>:7:3)"]


@pytest.mark.parametrize("budget", [
    "residents < 5 ? 0 : 64",  # a batch of 5 starts it: 5 of the 10 complete
    "now < 50 ? 0 : 64",  # the run ends at 10.5, before the stage would start
    "sqrt(5 - residents) > 0.5 ? 0 : 64",  # sqrt of a negative is NaN (not bounded), the test false: 64 from 5 on
    "residents % 2 == 1 ? 0 : 64",  # % bounded by its divisor, [0, 2]: an even count of residents would start it
])
def test_a_stage_that_may_yet_start_is_not_judged(budget, monkeypatch):
    r = report(step_program(budget), monkeypatch)
    assert forever(r) == []


KV = "pool kv { cap 1000; preempt lifo; }"
HELD = "hold kv (4) {\n    run E prefill (4) growing kv;\n    run E decode (4) growing kv;\n  }"


def test_a_memory_that_only_the_stalled_stage_grows(monkeypatch):
    # kv preempts, but only E's iterations grow it (its growing runs), and E never iterates: judged as before
    r = report(step_program("residents > 0 ? 0 : 64", pools=KV, memory=" memory kv;", body=HELD), monkeypatch)
    assert forever(r) == [STALLED.replace("<source>:7:3", "<source>:8:5")]


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
    assert w.startswith("warning: 10 sessions wait for ever at the end of the run (")
    # the first was given one iteration (budget 64 with no resident), its prefill's, and waits in its decode
    assert w.endswith("): 1 at stage E, which will never complete them (session 0, in the run at <source>:9:5); 9 "
                      "queued at reqs (sessions 1, 2, 3, 4, 5, …)")
    assert "at step stage E, whose budget cannot rise above 0 as jobs arrive" in w


# --- a pool's counts at 2**53 and beyond -------------------------------------------------------------------

TWO_HOLDS = """pool p { cap CAP; }
stage d : delay;
workload {
  arrive batch(3);
}
session {
  branch (serial == 0) {
    hold p (A) {
      observe a0 = now + 0 * serial;
      run d (2);
    }
  } else {
    branch (serial == 1) {
      hold p (B) {
        observe a1 = now + 0 * serial;
        observe both = used(p);
        run d (1);
      }
    } else {
      run d (5);
      observe after = used(p);
      observe room = free(p);
    }
  }
}
run { horizon 100; }
"""


def two_holds(cap: str, a: str, b: str) -> str:
    return TWO_HOLDS.replace("CAP", cap).replace("(A)", f"({a})").replace("(B)", f"({b})")


def samples(src: str, monkeypatch) -> tuple[dict, dict]:
    """The report and every observe's samples, on the default tier and the general engine (the same bytes);
    the program takes the fast tier."""
    from serq_sim import fast

    prog = serq_frontend.compile(source=src, sets={}, defs={})
    monkeypatch.setenv("SERQ_SIM_TIER", "")
    assert fast.tier(prog) == "fast"
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_sim.run(prog)
        out.append((encode_json(r), {k: (list(o.times), list(o.values)) for k, o in r.observes.items()}))
    assert out[0] == out[1]
    return json.loads(out[1][0]), out[1][1]


def test_a_hold_of_2_53_waits_beside_a_held_unit(monkeypatch):
    # cap 2**53: s0 holds 1 over [0, 2]; s1's 2**53 fits only once s0 has released (1 + 2**53 > 2**53, a sum
    # the doubles round to 2**53, which fitted: s1 was admitted at 0 and after it left `used` read 0 with s0's
    # unit held). s1 is admitted at 2 and holds to 3; at 5 nothing is held.
    r, o = samples(two_holds("9007199254740992", "1", "9007199254740992"), monkeypatch)
    assert o["a0"] == ([0.0], [0.0]) and o["a1"] == ([2.0], [2.0])
    assert o["both"][1] == [2.0**53] and o["after"][1] == [0.0] and o["room"][1] == [2.0**53]
    p = r["pools"][0]
    assert p["wait"] == 1.0  # (0 + 2) / 2
    assert p["used"] == (1 * 2 + 2**53 * 1) / 100  # 1 over [0, 2], 2**53 over [2, 3], over the run's 100


def test_two_holds_of_1e308_without_a_cap(monkeypatch):
    # cap inf: s0 holds d = 1e308 over [0, 2], s1 another over [0, 1]. Both held, 2d is beyond the doubles:
    # used(p) reads inf, the nearest double; once both left it is 0 (it stayed inf: inf - 1e308 is inf).
    r, o = samples(two_holds("inf", "1e308", "1e308"), monkeypatch)
    assert o["both"][1] == [math.inf] and o["after"][1] == [0.0] and o["room"][1] == [math.inf]
    d = Fraction(1e308)
    # 2d over [0, 1], d over [1, 2]: 3d over the run's 100, rounded once (the integral of 2d was inf)
    assert r["pools"][0]["used"] == float(3 * d / 100)


def test_amounts_with_fractions_are_counted_exactly_without_a_cap(monkeypatch):
    # cap inf: 0.1 and 0.2 held and released leave nothing (as doubles, 0.1 + 0.2 - 0.2 - 0.1 is 2.8e-17)
    r, o = samples(two_holds("inf", "0.1", "0.2"), monkeypatch)
    assert o["both"][1] == [float(Fraction(0.1) + Fraction(0.2))] and o["after"][1] == [0.0]
    # a pool with a cap below 2**53 counts as doubles, as before: the same holds leave the doubles' residue
    r, o = samples(two_holds("10", "0.1", "0.2"), monkeypatch)
    assert o["both"][1] == [0.1 + 0.2] and o["after"][1] == [0.1 + 0.2 - 0.2 - 0.1]
    assert 0.1 + 0.2 - 0.2 - 0.1 != 0.0


def test_the_exact_count():
    from serq_sim.pools.exact import WIDE, Units, zero

    assert type(zero(2.0**53 - 1)) is float and type(zero(WIDE)) is Units and type(zero(math.inf)) is Units
    u = zero(math.inf)
    u += 1.0
    u += 2.0**53
    assert float(u) == 2.0**53 and u > 2.0**53 and u != 2.0**53 and not u <= 2.0**53  # 2**53 + 1, exactly
    u -= 2.0**53
    assert u == 1.0 and type(u) is Units
    assert u + math.inf == math.inf and type(u + math.inf) is float
    big = zero(math.inf) + 1e308 + 1e308
    assert float(big) == math.inf and big * 0.5 == 1e308 and type(big * 0.5) is float
    assert big - 1e308 == 1e308 and float(big - 1e308 - 1e308) == 0.0
    assert 2.0 - (zero(math.inf) + 0.5) == 1.5 and +(zero(math.inf) + 0.5) == 0.5
