"""A long `sum`, `min` or `max` whose terms are one expression but for their numbers (what the linker writes
out for `max j in n (e)`) is a loop over the numbers that differ (serq_sim.fold), not a call of n argument
expressions: six observes `max j in 10000 (now + j)` took 3.2 s and 240 MB to set up before a session ran
and 440 µs an evaluation (every term's code compiled, a tuple of 10 000 values built each time).

The written-out call (``fold.LOOP_TERMS`` past every count) is the reference: the same reports, samples and
errors byte for byte on both tiers, for terms of every kind. The work is counted: the code generated for
10 000 terms is the code for 100, and each aggregate is one loop function holding one number a term."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_sim import fold
from tiers import run_on_tier

_MAKE = fold.make
_LOOP_TERMS = fold.LOOP_TERMS

BASE = """
let N = 40;
pool p[N] {{ cap 2; }}
stage q[N] : fifo;
stage d : delay;
workload {{
  arrive poisson(5);
  init {{ set x = floor(~uniform(0, 50)); }}
}}
session {{
  choose j in N by (queued(p[j]), j);
  hold p[j] (1) {{ run q[j] (~exp(1)); }}
  observe v = {expr};
  run d (0.5);
}}
run {{ horizon 30; seed 3; }}
"""

EXPRS = [
    "max k in N (now + k)",
    "min k in N (now - k * 0.5)",
    "sum k in N (now * k)",
    "sum k in N (k / (k - 3) + x)",  # a divisor that is 0 at one term (the code of a number divisor differs)
    "min k in N (x * k - 100 > 0 ? x / k : -0.0 * k)",  # -0.0 and 0.0 told apart
    "max k in N (min(used(p[k]), x - k))",  # a written-out two-argument min inside each term
    "max k in N (max i in 40 (i * k - x))",  # nested: the inner numbers are the outer loop's
    "sum k in N (used(p[k + x - x]) + queue(q[k]))",  # members read by a computed index
    "min k in 50 (x)",  # terms that are all the same
    "max k in N (k == 7 ? 0 / x : x - k)",  # a NaN term passed over
    "sum k in N ((k % 2 == 0 ? inf : -inf) * (x + 1))",  # inf - inf: NaN
    "sum k in N (k * 1e307 + x)",  # beyond the doubles: inf
    "sum k in N (used(p[k]) / (k + 0.5)) + sum k in 33 (k)",
    "sum k in N (holders(p[k]) + (k < 20 ? free(p[k]) : 0))",
    "sum k in N (used(p[k + x]))",  # a member past the family's end: the same run-time error at the same term
    "max k in N (k == 20 ? ~exp(1) : k)",  # a draw: written out, as before (each term its own place)
]


def _outcomes(program, monkeypatch, loop_terms: int):
    monkeypatch.setattr(fold, "LOOP_TERMS", loop_terms)
    made = []

    def counted(*a):
        made.append(a[0])
        return _MAKE(*a)

    monkeypatch.setattr(fold, "make", counted)
    out = {}
    for tier in ("", "general"):
        sim, outcome, samples = run_on_tier(program, tier)
        out[tier] = (outcome, samples)
    return out, made


@pytest.mark.timeout(60)
@pytest.mark.parametrize("expr", EXPRS)
def test_the_loop_gives_the_written_out_calls_results(monkeypatch, expr):
    program = serq_frontend.compile(source=BASE.format(expr=expr))
    written, none = _outcomes(program, monkeypatch, 10**9)
    looped, made = _outcomes(program, monkeypatch, _LOOP_TERMS)
    assert none == []
    assert looped == written
    assert looped[""] == looped["general"]
    if "~" in expr:
        assert made == []  # a draw's terms are not one shape: each is a place of its own
    else:
        assert made, "no loop was made"
    if "N (used(p[k + x]))" in expr:
        assert written[""][0][0] == "error" and "pool p: index 40 out of range" in written[""][0][2]


def _generated_size(sim) -> int:
    return sum(len(line) for lines, _, _ in sim.compiler.sources.values() for line in lines)


@pytest.mark.timeout(60)
def test_the_code_and_the_numbers_kept_are_what_the_evaluation_needs(monkeypatch):
    src = """
stage s : fifo;
workload {{ arrive poisson(1); }}
session {{
  observe a = max j in {n} (now + j);
  observe b = sum j in {n} (now * j);
  run s (~exp(0.5));
}}
run {{ horizon 20; seed 1; }}
"""
    sizes = {}
    for n in (100, 10000):
        program = serq_frontend.compile(source=src.format(n=n))
        rows = []

        def counted(fn, body, names, params, rows=rows):
            rows.append((fn, len(names)))
            return _MAKE(fn, body, names, params)

        monkeypatch.setattr(fold, "make", counted)
        for tier in ("", "general"):
            sim, outcome, _ = run_on_tier(program, tier)
            assert outcome[0] == "report"
            sizes[n, tier] = _generated_size(sim)
            kept = [v for k, v in (sim.compiler.g.items()) if k.startswith("_agK")]
            if tier == "general":
                # one number a term, held once: a term's `j` (now + j and now * j differ in it alone)
                assert sorted(len(k) for k in kept) == [n, n]
        # one loop an aggregate on each tier (the fast tier's generator and the general engine's compiler)
        assert sorted(rows) == sorted([("max", 1), ("sum", 1)] * 2)
    for tier in ("", "general"):
        # the code does not grow with the terms (written out, each term was some 20 characters more)
        assert abs(sizes[10000, tier] - sizes[100, tier]) < 40, sizes
    assert sizes[100, ""] > 0 and sizes[100, "general"] > 0


@pytest.mark.timeout(60)
def test_a_number_shared_by_terms_in_a_program_built_in_python(monkeypatch):
    """A Program built in Python may put one number node at several places (the linker makes each anew): an
    outer aggregate whose first term holds one node twice is written out (its places could not be told
    apart), the inner ones still loops; the same results as every call written out."""
    import msgspec
    from serq_ir import nodes as N

    program = serq_frontend.compile(source=BASE.format(expr="sum k in N (x)"))
    x = next(st for st in program.session if isinstance(st, N.Observe)).value.args[0]
    terms = []
    for k in range(40):
        shared = N.Num(value=float(k))  # one node in every inner term of the outer term k
        terms.append(N.Call(fn="sum", args=[N.Binary(op="+", lhs=shared, rhs=N.Binary(
            op="*", lhs=N.Num(value=float(i)), rhs=x)) for i in range(40)]))
    value = N.Call(fn="max", args=terms)
    session = [msgspec.structs.replace(st, value=value) if isinstance(st, N.Observe) else st
               for st in program.session]
    built = msgspec.structs.replace(program, session=session)
    written, _ = _outcomes(built, monkeypatch, 10**9)
    looped, made = _outcomes(built, monkeypatch, _LOOP_TERMS)
    assert looped == written
    assert made == ["sum"] * 80  # 40 inner sums a tier, the outer max written out
