"""A fleet of unlike engines as one step family: `member(engine)` in the family's own expressions is each
member's index, so `cost member(engine) == 0 ? a100() : h100();` gives each member its own step cost (it was
refused, and a heterogeneous fleet had to be written as separate stages and a `branch` on the router's
choice). Checked on both tiers: a tiny deterministic fleet by hand (end, utilisation, iterations, tokens an
iteration), the family against the same fleet written as two stages (the same figures, member for member), and
the time averages of a longer seeded run against Little's law (mean live = arrival rate x mean time in the
system, within the CI of the mean time)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

A100 = "0.02 + 0.001 * decoders + 0.0002 * prefilled"
H100 = "0.01 + 0.0005 * decoders + 0.0001 * prefilled"

TINY = f"""
pool reqs[2] {{ cap 4; admit via engine; }}
pool kv[2] {{ cap 1000; block 1; evict lru; }}
stage engine[2] : step {{ budget 100; cost member(engine) == 0 ? {A100} : {H100}; memory kv; }}
workload {{ arrive batch(2); }}
session {{
  choose j in 2 by (serial == j ? 0 : 1);
  hold reqs[j] (1) {{ hold kv[j] (10) {{ run engine[j] prefill (10); run engine[j] decode (5); }} }}
}}
run {{ horizon inf; }}
"""

TIERS = pytest.mark.parametrize("tier", ["general", ""])


def stages(report) -> dict:
    return {r.name if r.index is None else f"{r.name}[{r.index}]": r for r in report.result.stages}


@TIERS
def test_each_member_steps_at_its_own_cost(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(source=TINY))
    # session 0 on engine[0]: a prefill of 10 (0.02 + 0.0002 * 10 = 0.022), then 5 decode iterations of one
    # decoder (0.021 each): done at 0.127; session 1 on engine[1]: 0.011 + 5 * 0.0105 = 0.0635
    assert r.result.end == pytest.approx(0.127, abs=1e-12)
    s = stages(r)
    assert s["engine[0]"].utilisation == pytest.approx(1.0, abs=1e-12)
    assert s["engine[1]"].utilisation == pytest.approx(0.0635 / 0.127, abs=1e-12)
    for m in ("engine[0]", "engine[1]"):
        assert s[m].iterations == 6 and s[m].prefill_only == 1 and s[m].decode_only == 5
        assert s[m].tokens == pytest.approx(15 / 6) and s[m].token_utilisation == pytest.approx(15 / 6 / 100)
    # a run's service: the prefill's one iteration and the decode's five
    assert s["engine[0]"].service == pytest.approx((0.022 + 5 * 0.021) / 2, abs=1e-12)
    assert s["engine[1]"].service == pytest.approx((0.011 + 5 * 0.0105) / 2, abs=1e-12)


FAMILY = f"""
let rate = 12;
pool reqs[2] {{ cap 8; admit via engine; }}
pool kv[2] {{ cap 4000; block 16; evict lru; }}
stage engine[2] : step {{ budget 256; cost member(engine) == 0 ? {A100} : {H100}; memory kv; }}
workload {{ arrive poisson(rate); }}
session {{
  set t_in = now;
  set p = 1 + floor(~exp(100));
  set o = 1 + floor(~exp(20));
  choose j in 2 by ((j == 0 ? 2 : 1) * (holders(reqs[j]) + queued(reqs[j])));
  hold reqs[j] (1) {{ hold kv[j] (p + o) {{ run engine[j] prefill (p); run engine[j] decode (o); }} }}
  observe sojourn = now - t_in;
}}
run {{ horizon 400; warmup 40; seed 5; }}
"""

STAGES = f"""
let rate = 12;
pool ra {{ cap 8; admit via ea; }}
pool rh {{ cap 8; admit via eh; }}
pool kva {{ cap 4000; block 16; evict lru; }}
pool kvh {{ cap 4000; block 16; evict lru; }}
stage ea : step {{ budget 256; cost {A100}; memory kva; }}
stage eh : step {{ budget 256; cost {H100}; memory kvh; }}
workload {{ arrive poisson(rate); }}
session {{
  set t_in = now;
  set p = 1 + floor(~exp(100));
  set o = 1 + floor(~exp(20));
  choose j in 2 by (j == 0 ? 2 * (holders(ra) + queued(ra)) : holders(rh) + queued(rh));
  branch (j == 0) {{
    hold ra (1) {{ hold kva (p + o) {{ run ea prefill (p); run ea decode (o); }} }}
  }} else {{
    hold rh (1) {{ hold kvh (p + o) {{ run eh prefill (p); run eh decode (o); }} }}
  }}
  observe sojourn = now - t_in;
}}
run {{ horizon 400; warmup 40; seed 5; }}
"""

FIGURES = ("present", "utilisation", "completions", "throughput", "wait", "service", "iterations",
           "prefill_only", "decode_only", "mixed", "batch", "tokens")


@TIERS
def test_the_family_is_the_fleet_of_two_stages(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    fam = serq_sim.run(serq_frontend.compile(source=FAMILY))
    two = serq_sim.run(serq_frontend.compile(source=STAGES))
    f, t = stages(fam), stages(two)
    for m, s in (("engine[0]", "ea"), ("engine[1]", "eh")):
        for name in FIGURES:
            assert getattr(f[m], name) == getattr(t[s], name), (m, name)
    assert f["engine[0]"].iterations != f["engine[1]"].iterations  # the members are loaded unlike
    assert fam.result.observes["sojourn"].mean == two.result.observes["sojourn"].mean
    assert fam.result.mean_live == two.result.mean_live


@TIERS
def test_littles_law_over_the_fleet(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(source=FAMILY), horizon=1500, warmup=150)
    soj = r.result.observes["sojourn"]
    rate = soj.count / (r.result.end - r.result.warmup)  # the sessions that left after the warm-up, a second
    live = r.result.mean_live
    assert abs(live - rate * soj.mean) <= rate * soj.ci, (live, rate, soj.mean, soj.ci)
    # each member's residents likewise: present = throughput x (wait + service) per stage (Little's law)
    for s in stages(r).values():
        assert s.present == pytest.approx(s.throughput * (s.wait + s.service), rel=0.02)


QUEUE = """
queue E[2] : decode {
  pool kv { cap 1000; block 1; evict lru; }
  serve step { budget 100; cost INDEX == 0 ? 0.02 + 0.001 * decoders : 0.01 + 0.0005 * decoders; memory kv; }
  decode (p) { hold kv (p) { decode (5); } }
}
workload { arrive batch(2); }
session {
  choose j in 2 by (serial == j ? 0 : 1);
  E[j].decode (10);
}
run { horizon inf; }
"""


@TIERS
def test_a_queue_familys_serve_reads_its_member(monkeypatch, tier):
    # five decode iterations of one decoder: 0.021 each on E[0], 0.0105 on E[1]
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(source=QUEUE.replace("INDEX", "member(E)")))
    s = stages(r)
    assert r.result.end == pytest.approx(0.105, abs=1e-12)
    assert s["E[0]"].iterations == s["E[1]"].iterations == 5
    assert s["E[1]"].utilisation == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("src", [QUEUE.replace("INDEX", "self"), TINY.replace("member(engine)", "self")])
def test_self_in_a_step_familys_expressions_names_member(src):
    # `self` is a queue entry's index; a step family's cost (a queue's serve step too) reads member(S)
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=src)
    stage = "E" if "queue" in src else "engine"
    assert (f"error: unknown name `self`: `self` is a queue entry's index; in a step family's own expressions the "
            f"member's index is `member({stage})`") in str(e.value)


def test_self_elsewhere_is_an_unknown_name():
    src = TINY.replace("member(engine) == 0", "self == 0").replace("engine[2]", "engine").replace(
        "reqs[2]", "reqs").replace("kv[2]", "kv")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=src)
    assert "unknown name `self` (did you mean `serial`?)" in str(e.value)
