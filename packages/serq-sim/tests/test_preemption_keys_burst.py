"""``preempt by`` keys whose values do not change while a job is resident (attributes, numbers,
``decoding``, and ``admission`` through a term strictly monotone in it) choose a burst of victims at a cost
in proportion to them: the residents of the step stage are kept in the keys' order (serq_sim.orders,
each job's keys evaluated once), and each victim is the first candidate there. Before, every victim
evaluated the keys of every candidate (and, when they read ``admission``, sorted the candidates first):
N sessions of which half were preempted at one instant took about N * N / 2 evaluations (8 000 of them
under ``preempt by (serial % 5, -admission)`` 15.7 s, now 0.7 s).

The reports are the per-job reference's (SERQ_SIM_TIER=general, which evaluates the keys at every
victim) byte for byte, for keys of every kind, those the order cannot take included; the evaluations are
counted."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_sim.engine import Simulation
from tiers import on_both_tiers

N = 1000

PROGRAM = """
pool kv {{ cap 16 * {half} + 32; block 16; preempt by {keys}; }}
pool reqs {{ cap 1e9; admit via engine; }}
stage engine : step {{ budget 1e12; cost 0.01; memory kv; {serve} }}
workload {{ arrive batch({n}); }}
session {{
  set p = serial % 4;
  hold reqs (1), kv (16) {{
    prefill on engine (16) growing kv;
    decode on engine (2 + serial % 3) growing kv;
  }}
  end;
}}
run {{ horizon 1e7; seed 1; }}
"""

# keys the kept order takes (the first four), and keys it does not (evaluated at every victim, as before)
KEPT = ["(serial % 5, -admission)", "(decoding, -admission)", "(-admission * 2 + 3, serial)", "(p, serial % 3)",
        "(-p, 0 - admission)", "(admission / 4, p)"]
WALKED = ["(admission % 2, -admission)", "(position, -admission)", "(now, serial)"]


@pytest.fixture
def evaluations(monkeypatch):
    """Count the preemption keys' evaluations: each pool's policy's keys function, wrapped when the run
    starts."""
    count = [0]
    run = Simulation.run

    def counting_run(self):
        for pool in self.pools:
            pol = pool.preempt
            keys = getattr(pol, "keys", None)
            if keys is not None:
                def counted(s, attrs, ctx, keys=keys):
                    count[0] += 1
                    return keys(s, attrs, ctx)
                pol.keys = counted
        return run(self)

    monkeypatch.setattr(Simulation, "run", counting_run)
    return count


def _runs(tmp_path, keys: str, serve: str, count):
    """The keys' evaluations and preemptions of each tier, whose reports are the same byte for byte."""
    src = tmp_path / "keys.sq"
    src.write_text(PROGRAM.format(n=N, half=N // 2, keys=keys, serve=serve))
    program = serq_frontend.compile(str(src), sets={}, defs={})
    out = {}

    def check(tier, sim):
        assert sim.ended == N
        # half the sessions' second blocks do not fit: a burst of preemptions (and more as they return)
        assert sim.preempt_count >= N // 4, sim.preempt_count
        out[tier] = (count[0], sim.preempt_count)

    on_both_tiers(program, check, lambda: count.__setitem__(0, 0))
    return out


@pytest.mark.timeout(120)
@pytest.mark.parametrize("serve", ["", "serve by (serial % 7);"])
@pytest.mark.parametrize("keys", KEPT)
def test_kept_keys_choose_a_burst_of_victims_in_proportion_to_them(tmp_path, evaluations, keys, serve):
    out = _runs(tmp_path, keys, serve, evaluations)
    fast, reference = out[""][0], out["general"][0]
    # each job's keys once (a session's two jobs, and its jobs again after each preemption), where the
    # reference evaluates every candidate's for each victim
    assert fast < 4 * N + 4 * out[""][1], (fast, reference)
    assert reference > 50 * N, (fast, reference)  # (the count can tell)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("keys", WALKED)
def test_keys_that_move_while_resident_are_evaluated_at_every_victim(tmp_path, evaluations, keys):
    out = _runs(tmp_path, keys, "", evaluations)
    assert out[""][0] > 50 * N  # the order does not take them: every candidate's keys at every victim
