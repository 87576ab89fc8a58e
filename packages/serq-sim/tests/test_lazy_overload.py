"""A lazy planning of a stage whose budget is spent long before its residents are (an overloaded engine: many
prefills waiting for tokens behind lazy decoders) costs work in proportion to what it plans, as the per-job
planning's walk, which stops once no token is left: `LazyDecoding._start_lazy` walked every resident that is
not lazy at every planning, and looked each up in the residents (a search from the first: N * N / 2 looks an
iteration), so that a program the per-job planning ran in 0.37 s of CPU took 10 s. The count of resident looks
is taken from the lists themselves (counting.py), and the reports are the per-job planning's
(SERQ_SIM_TIER=general) byte for byte."""

from __future__ import annotations

import pytest
import serq_frontend
from counting import CountedIndexed, count_resident_lists
from tiers import on_both_tiers

N = 300

PROGRAM = """
stage engine : step {{
  budget {budget};
  cost 1;
  {serve}
}}
workload {{ arrive batch({n}); }}
session {{
  prefill on engine (20 + serial % 7);
  decode on engine (3 + serial % 5);
  end;
}}
run {{ horizon inf; seed 1; }}
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("budget", "serve"), [(4, ""), (9, ""), (4, "serve by (-admission);")])
def test_an_overloaded_lazy_planning_looks_at_what_it_plans(tmp_path, monkeypatch, budget, serve):
    src = tmp_path / "overload.sq"
    src.write_text(PROGRAM.format(n=N, budget=budget, serve=serve))
    program = serq_frontend.compile(str(src), sets={}, defs={})
    counted = count_resident_lists(monkeypatch, CountedIndexed)
    seen = {}

    def check(tier, sim):
        (eng,) = [s for s in sim.stages if s.name == "engine"]
        assert sim.ended == N
        seen[tier] = (counted.looks, eng.iterations, eng.lazy_iterations)

    on_both_tiers(program, check, reset=lambda: setattr(counted, "looks", 0))
    looks, iterations, lazy = seen[""]
    assert lazy > iterations / 2  # the lazy planning planned most iterations
    # the prefills' 6 900 tokens take some 1 700 (budget 4) or 770 (budget 9) iterations, each with a few
    # hundred residents that are not lazy: a walk of them all, a search each, was 10**7 to 10**8 looks
    assert looks < 60 * iterations + 40 * N, (looks, iterations)
