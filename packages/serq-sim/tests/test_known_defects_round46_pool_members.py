"""A family pool of many members held by index in turn (``pool p[10000] { cap 1; }``, a session holding p[0],
p[1], …) ran in the fast tier, whose settle asks every member's queue whether its head is admitted (the
generated ``_adm`` loops ``for _m in range(size)``): each hold cost in proportion to the family's size, and
the program took minutes at horizon 100 where the general engine, which tries only the pools something
changed (admission.admit_all's hot pools), takes seconds. A program of more than ``fast.FAST_POOL_MEMBERS``
pool members, a family's counted, now runs in the general engine, as one of more than ``fast.FAST_POOLS``
pool families already did; the reports of the two tiers are the same bytes. The work is counted, not timed:
the admission attempts per hold do not grow with the number of pools."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim import fast
from serq_sim.pools import admission


def _family(m: int, horizon: float, rate: float = 1, work: float = 0.0001) -> str:
    return f"""pool p[{m}] {{ cap 1; }}
stage d : delay;
workload {{ arrive poisson({rate}); }}
session {{
  set i = 0;
  loop {{
    hold p[i] (1) {{ run d ({work}); }}
    set i = i + 1;
    branch (i == {m}) {{ end; }}
  }}
}}
run {{ horizon {horizon}; seed 3; }}
"""


def _on(tier: str, program, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return serq_sim.run(program)


def _compile(src: str):
    return serq_frontend.compile(source=src, sets={}, defs={})


def test_the_member_limit_picks_the_tier_and_the_reports_are_the_same(monkeypatch):
    # sessions 2.56 long arriving at rate 4: they overlap and wait at the members (cap 1)
    at = _compile(_family(fast.FAST_POOL_MEMBERS, 5, rate=4, work=0.01))
    beyond = _compile(_family(fast.FAST_POOL_MEMBERS + 1, 5, rate=4, work=0.01))
    assert fast.exclusion(at) is None
    assert fast.exclusion(beyond) == f"more than {fast.FAST_POOL_MEMBERS} pool members"
    for program, tier in ((at, "fast"), (beyond, "general")):
        picked = _on("", program, monkeypatch)
        general = _on("general", program, monkeypatch)
        assert picked.tier == tier
        assert general.tier == "general"
        assert encode_json(picked) == encode_json(general)
        assert picked.result.arrivals > 10
        assert next(p for p in picked.result.pools if p.name == "p" and p.index == 0).wait > 0


def test_members_of_several_families_add_up():
    half = fast.FAST_POOL_MEMBERS // 2
    src = (f"pool a[{half}] {{ cap 1; }}\npool b[{half + 1}] {{ cap 1; }}\nstage d : delay;\n"
           "workload { arrive poisson(1); }\nsession { hold a[0] (1) { run d (1); } hold b[0] (1) { run d (1); } }\n"
           "run { horizon 5; }\n")
    assert fast.exclusion(_compile(src)) == f"more than {fast.FAST_POOL_MEMBERS} pool members"
    assert fast.exclusion(_compile(src.replace(f"b[{half + 1}]", f"b[{half}]"))) is None


@pytest.mark.timeout(300)
def test_ten_thousand_members_cost_no_more_admission_work_per_hold(monkeypatch):
    """poisson(1) sessions each holding p[0] … p[m - 1] for 0.0001 in turn, in the general engine (where the
    family of 10 000 now runs): the admission attempts (``try_admit``) per hold are as many whether the family
    has 10 or 10 000 members; the family of 10 000 is beyond the fast tier's limit."""
    calls = []
    real = admission.try_admit

    def counted(sim, pool):
        calls.append(pool)
        return real(sim, pool)

    monkeypatch.setattr(admission, "try_admit", counted)
    per_hold = {}
    for m, horizon in ((10, 200.0), (10_000, 2.0)):
        program = _compile(_family(m, horizon))
        calls.clear()
        if m > fast.FAST_POOL_MEMBERS:
            assert fast.exclusion(program) == f"more than {fast.FAST_POOL_MEMBERS} pool members"
        report = _on("general", program, monkeypatch)
        holds = next(s for s in report.result.stages if s.name == "d").completions
        assert holds > 1000
        per_hold[m] = len(calls) / holds
    assert per_hold[10_000] <= per_hold[10] * 1.01 + 0.01, per_hold

