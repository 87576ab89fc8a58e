"""``queue by`` keys one of which reads ``waited`` linearly (a per-request deadline, ``queue by (A - waited)``
with ``A`` an expression of attributes; ``k * (A - waited)``, ``-waited + c``, after and before keys of
attributes) were read for every waiting session at every admission attempt: an overloaded vLLM engine's
``reqs`` under ``queue by (slo * (1 + prompt / 1000) - waited)`` took several times first come first
served. The queue (serq_sim.pools.linear.LinearQueue) keeps the sessions ordered by the key's exact value
at ``waited = -t``, fixed while they wait, and reads the keys of those within a rounding bound of the least
only. The reports and samples are the scan's of the keys as written, byte for byte, on both tiers: random
linear keys over attributes built to collide after rounding (one instant's joins, a far clock), `waited`
mixed with other keys, a NaN or infinite deadline (back to the scan), a step engine whose preempted
requests are re-queued; the bound holds against exact arithmetic on random doubles; and the keys are read
about once or twice a session, where the scan read them millions of times."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from counting import count_key_reads
from serq_report.json import encode_json
from serq_sim import build as _build
from serq_sim.pools import linear, model

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[3]

# deadlines built to collide: dl + t is BASE plus a few ulps of it (the join time t cancelled by -now), so
# the order of the keys dl - waited is decided by their rounding; services of whole and half seconds
NEAR = """let slo = 2;
pool srv { cap 2; queue by (KEY); }
stage d : delay;
workload { arrive ARRIVE; }
session {
  PRE
  set prio = floor(~uniform(0, 2));
  set dl = BASE - now + floor(~uniform(0, 4)) * GRAIN;
  set plen = floor(~uniform(0, 3)) * 500;
  hold srv (1) { observe order = serial; run d (floor(~uniform(1, 3)) / 2); }
}
run { horizon 1e12; ARRIVALS seed SEED; }
"""

FORMS = ["dl - waited", "-waited + dl", "dl + -waited", "2.5 * (dl - waited)", "(dl - waited) / 3",
         "-(waited - dl)", "0.1 * (dl + 7 - waited) * 3", "waited - dl", "waited + dl",
         "slo * (1 + plen / 1000) - waited", "dl - waited * 0.5", "-3 * (waited - dl) + 1e-9"]
AROUND = ["{}", "prio, {}", "{}, serial % 3", "prio, {}, -waited", "plen, {}, prio"]


def scan(monkeypatch):
    """Build the queues from the keys as written, and scan them (the oracle)."""
    monkeypatch.setattr(model, "program_kept_keys", lambda p: p)
    monkeypatch.setattr(_build, "WAITED_GROUPS", False)
    monkeypatch.setattr(_build, "KEYS_AT_JOIN", False)


def outcome(prog, monkeypatch, tier: str, **kw):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(prog, **kw)
    samples = [(r.observe(o.name).values.tobytes(), r.observe(o.name).sessions.tobytes()) for o in prog.observes]
    return encode_json(r), samples, r.tier


def reading(monkeypatch):
    """Count the keys every LinearQueue reads (both tiers build one): ``[queues]``, each with ``reads``."""
    made = []
    init = linear.LinearQueue.__init__

    def counted(self, *a, **kw):
        init(self, *a, **kw)
        made.append(self)

    monkeypatch.setattr(linear.LinearQueue, "__init__", counted)
    return made


def near(key: str, base: str = "1000", grain: str = "1e-13", arrive: str = "poisson(3)", seed: int = 1,
         pre: str = "") -> str:
    """NEAR with its keys, deadlines' base and grain, arrivals and seed; ``pre`` first in the session."""
    arrivals = "" if arrive.startswith("batch") else "arrivals 500;"
    return (NEAR.replace("KEY", key).replace("BASE", base).replace("GRAIN", grain).replace("ARRIVE", arrive)
            .replace("ARRIVALS", arrivals).replace("SEED", str(seed)).replace("PRE", pre))


def agree(src: str, monkeypatch, fast: bool = True, **kw):
    """The reports and samples of ``src`` on both tiers with the queue, and of the scan of its keys as
    written: the same bytes. The queues made (their readings). ``fast``: the default tier is the fast one."""
    prog = serq_frontend.compile(source=src)
    made = reading(monkeypatch)
    new = {tier: outcome(prog, monkeypatch, tier, **kw) for tier in ("general", "")}
    assert new["general"][2] == "general" and new[""][2] == ("fast" if fast else "general")
    with monkeypatch.context() as m:
        scan(m)
        old = outcome(prog, m, "general", **kw)
    assert new["general"][:2] == new[""][:2] == old[:2]
    return made


def keys_of(text: str):
    prog = serq_frontend.compile(source=near(text))
    return model.kept_keys(prog.pools[0].queue.keys)


def test_which_keys_are_linear():
    for form in FORMS:
        for around in AROUND:
            got = linear.linear_waited(keys_of(around.format(form)))
            assert got is not None, (around, form)
            assert got[0] == (1 if around.startswith(("prio", "plen")) else 0)
    for text in ["waited * waited", "dl - waited, waited", "dl / (1 - waited)", "prio * (dl - waited)",
                 "(dl - waited) / 0", "inf - waited + dl", "waited > slo ? dl : -waited", "dl - now",
                 "dl - 2 * waited + waited", "prio, dl"]:
        assert linear.linear_waited(keys_of(text)) is None, text
    # the kept forms of their own: -waited (first come first served), thresholds
    assert model.waited_last(keys_of("slo - waited")) == -1  # (kept_keys: -waited, the groups', built first)
    j, form, leaves = linear.linear_waited(keys_of("slo * (1 + plen / 1000) - waited"))
    assert (j, len(leaves)) == (0, 1) and form == ("+", ("l", 0), ("w",))


def _fl_tree(form, w: float, leaves: list) -> float:
    tag = form[0]
    if tag == "w":
        return w
    if tag == "n":
        return form[1]
    if tag == "l":
        return leaves[form[1]]
    x = _fl_tree(form[1], w, leaves)
    if tag == "+":
        return x - _fl_tree(form[2], w, leaves)  # (a sum or a difference: the bound is the same)
    return x * form[2] if tag == "*" else x / form[2]


def _exact_tree(form, w: Fraction, leaves: list) -> Fraction:
    tag = form[0]
    if tag == "w":
        return w
    if tag == "n":
        return Fraction(form[1])
    if tag == "l":
        return Fraction(leaves[form[1]])
    x = _exact_tree(form[1], w, leaves)
    if tag == "+":
        return x - _exact_tree(form[2], w, leaves)
    return x * Fraction(form[2]) if tag == "*" else x / Fraction(form[2])


def test_the_rounding_bound_holds_against_exact_arithmetic():
    """The double of a key at fl(now - t), against the same operations done exactly on now - t: within the
    bound, at magnitudes from subnormal to 1e300."""
    rnd = random.Random(11)
    forms = [("+", ("l", 0), ("w",)), ("*", ("+", ("l", 0), ("w",)), 2.5), ("/", ("+", ("w",), ("l", 0)), 3.0),
             ("+", ("*", ("+", ("l", 0), ("w",)), 0.1), ("l", 1)), ("*", ("/", ("w",), 7.0), 1e-300)]
    worst = 0.0
    for _ in range(4000):
        form = rnd.choice(forms)
        scale = 10.0 ** rnd.randint(-320, 300)
        leaves = [rnd.uniform(-1, 1) * scale * rnd.choice([1, 1e-10, 1e10]) for _ in range(2)]
        t = abs(rnd.uniform(0, 1) * scale)
        now = t + abs(rnd.uniform(0, 1) * scale)
        if not all(map(math.isfinite, [*leaves, t, now])):
            continue
        w_mag = Fraction(2) ** (max(math.frexp(now)[1], math.frexp(t)[1]) + 1)
        mags = [Fraction(2) ** math.frexp(v)[1] for v in leaves]
        b = linear.bound(form, w_mag, linear.U * w_mag + linear.TINY, mags)
        if b is None:
            continue
        got = Fraction(_fl_tree(form, now - t, leaves))
        exact = _exact_tree(form, Fraction(now) - Fraction(t), leaves)
        assert abs(got - exact) <= b[1], (form, leaves, t, now)
        if b[1]:
            worst = max(worst, float(abs(got - exact) / b[1]))
        # at waited = -t, exact
        b = linear.bound(form, Fraction(2) ** math.frexp(t)[1], Fraction(0), mags)
        got = Fraction(_fl_tree(form, -t, leaves))
        assert abs(got - _exact_tree(form, -Fraction(t), leaves)) <= b[1]
    assert worst > 0.01  # (the bound is not vacuous: some errors come within a factor 100 of it)


@pytest.mark.parametrize("seed", range(10))
def test_random_linear_keys_near_ties_are_the_scans(monkeypatch, seed):
    rnd = random.Random(seed)
    key = rnd.choice(AROUND).format(rnd.choice(FORMS))
    base, grain = rnd.choice([("1000", "1e-13"), ("1e6", "1e-10"), ("3", "0"), ("1e9", "1e-7"), ("0", "1e-300")])
    arrive = rnd.choice(["poisson(3)", "batch(200)", "renewal(0.25)"])
    made = agree(near(key, base, grain, arrive, seed + 1), monkeypatch)
    assert [q.scan for q in made if q.reads] == [False, False]  # (both tiers by the queue, not the scan)


def test_a_far_clock_and_mixed_keys(monkeypatch):
    # the joins late (the clock near 1e9: waited and the deadlines round coarsely), some at one instant
    # (each run by the linear queue of each tier, not the scan it falls back to: else the scan is compared
    # with itself)
    for arrive in ("poisson(3)", "batch(300)"):
        made = agree(near("prio, dl - waited, serial % 2", "1e9", "1e-7", arrive, 4, "run d (1e9 + serial % 5);"),
                     monkeypatch)
        assert [q.scan for q in made if q.reads] == [False, False]
    # deadlines an ulp or two of 1e6 apart, the joins near 1e6: the keys' rounding (ulps of 1e6) decides, the
    # candidates several ulps of the least apart
    for key in ("dl - waited", "2 * (dl - waited), serial % 3", "(waited - dl) / 3"):
        made = agree(near(key, "3", "1e-10", "poisson(3)", 5, "run d (1e6 + (serial % 7) * 0.37);"), monkeypatch)
        assert [q.scan for q in made if q.reads] == [False, False]


def test_a_family_and_a_hold_over_two_pools(monkeypatch):
    # a queue per member, heads blocked at the second pool; deadlines an ulp of 100 apart
    src = """pool a[2] { cap 2; queue by (prio, dl - waited); }
pool b { cap 3; }
stage d : delay;
workload { arrive poisson(4.5); }
session {
  set prio = floor(~uniform(0, 2));
  set dl = 100 - now + floor(~uniform(0, 3)) * 1.5e-14;
  hold a[serial % 2] (1), b (1) { observe x = serial; run d (~exp(1)); }
}
run { horizon 1e12; arrivals 800; seed 9; }
"""
    made = agree(src, monkeypatch)
    assert len([q for q in made if q.reads]) == 4 and not any(q.scan for q in made)


@pytest.mark.parametrize("bad", ["inf", "-inf", "inf - inf", "1e308 * 10"])
def test_a_deadline_that_gives_no_bound_goes_back_to_the_scan(monkeypatch, bad):
    src = near("dl - waited", seed=2).replace("set plen", f"set dl = serial == 60 ? {bad} : dl;\n  set plen")
    made = agree(src, monkeypatch)
    assert [q.scan for q in made if q.reads] == [True, True]  # (one a tier)


@pytest.mark.parametrize("huge", ["1.5e308", "-1.7e308"])
def test_a_deadline_near_the_overflow_is_scanned_while_it_waits(monkeypatch, huge):
    # finite, but a step of its key could overflow: no bound, the lookups scan while it waits
    src = near("dl - waited", seed=2).replace("set plen", f"set dl = serial == 60 ? {huge} : dl;\n  set plen")
    made = agree(src, monkeypatch)
    assert [q.scan for q in made if q.reads] == [False, False]
    assert all(math.inf in q.bounds.values() for q in made if q.reads)


@pytest.mark.parametrize("requeue", ["tail", "head"])
def test_victims_of_a_growth_requeued_are_the_scans(monkeypatch, requeue):
    """Holds that grow preempt others, which join the queue again (a new join time: waited afresh, or at
    the head). (A preemption policy takes the general engine on either tier.)"""
    src = f"""pool kv {{ cap 12; queue by (dl - waited, prio); preempt by (-prio) requeue {requeue}; }}
stage d : delay;
workload {{ arrive poisson(2.5); }}
session {{
  set prio = floor(~uniform(0, 3));
  set dl = 500 - now + floor(~uniform(0, 3)) * 1e-13;
  hold kv (1 + floor(~uniform(0, 3))) {{ observe start = serial; run d (~exp(1)); grow kv (2); run d (0.5); }}
}}
run {{ horizon 1e12; arrivals 600; seed 3; }}
"""
    made = agree(src, monkeypatch, fast=False)
    import json

    prog = serq_frontend.compile(source=src)
    monkeypatch.setenv("SERQ_SIM_TIER", "")
    out = json.loads(encode_json(serq_sim.run(prog)))
    assert out["pools"][0]["preemptions"] > 50 and out["pools"][0]["queue"] > 5, out["pools"][0]
    assert any(q.reads for q in made) and not any(q.scan for q in made)


def test_a_vllm_engine_with_deadlines_is_the_scans(monkeypatch, tmp_path):
    """Requests preempted and re-queued, the step engine's admissions, the deadline of the brief."""
    text = (ROOT / "examples" / "single-turn" / "vllm_bursts.sq").read_text()
    fifo = "pool reqs { cap max_seqs; admit via engine; }"
    assert fifo in text
    text = "let slo = 2;\n" + text.replace(
        fifo, "pool reqs { cap max_seqs; admit via engine; queue by (slo * (1 + prompt / 1000) - waited); }")
    (tmp_path / "p.sq").write_text(text)
    prog = serq_frontend.compile(path=str(tmp_path / "p.sq"), sets={"peak": 12, "base": 4, "blocks": 1500})
    made = reading(monkeypatch)
    new = outcome(prog, monkeypatch, "general", horizon=120)
    with monkeypatch.context() as m:
        scan(m)
        old = outcome(prog, m, "general", horizon=120)
    assert new[:2] == old[:2]
    import json

    out = json.loads(new[0])
    kv = next(p for p in out["pools"] if p["name"] == "kv")
    reqs = next(p for p in out["pools"] if p["name"] == "reqs")
    assert kv["preemptions"] > 20 and reqs["queue"] > 50, (kv, reqs)
    assert len(made) == 1 and not made[0].scan


@pytest.mark.parametrize("tier", ["general", ""])
def test_the_keys_are_read_about_once_a_session_not_at_every_attempt(monkeypatch, tier):
    # 3 000 arrivals at twice what two slots serve: the queue grows to about 1 500, and the scan read every
    # waiting session's keys at every admission
    calls = count_key_reads(monkeypatch)

    src = """pool p { cap 2; queue by (prio, dl - waited); }
stage d : delay;
workload { arrive poisson(4); }
session { set prio = floor(~uniform(0, 2)); set dl = ~uniform(0, 30); hold p (1) { run d (~exp(1)); } }
run { horizon inf; arrivals 3000; seed 1; }
"""
    prog = serq_frontend.compile(source=src)
    with monkeypatch.context() as m:
        scan(m)
        m.setenv("SERQ_SIM_TIER", "general")
        old = encode_json(serq_sim.run(prog))
    assert calls[0] > 1_000_000
    calls[0] = 0
    made = reading(monkeypatch)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(prog)
    assert encode_json(r) == old
    assert r.result.pools[0].queue > 500
    made = [q for q in made if q.reads]
    assert len(made) == 1 and not made[0].scan
    # each session's keys read when it is placed, and as a candidate about once (when it is the head)
    assert made[0].reads < 3 * 3000, made[0].reads
    if tier == "general":
        assert calls[0] < 4 * 3000, calls[0]  # (the leaves read at the placement too)
