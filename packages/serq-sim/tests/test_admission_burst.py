"""Admitting many sessions at one instant to a step stage costs work in proportion to them, not to their
square: after a planning's first admission has looked at the residents, each later admission looks only
at the residents it brought (Planner._admissions). Before, every admission walked every resident, and
20 000 sessions arriving together took seconds. So does the end of an iteration in which thousands of
jobs end (StepStage._end: the residents filtered once, not a removal each). The count of resident looks is taken from the lists
themselves (every iteration over the residents and the residents not lazy is counted), and the reports
are the per-job planning's (SERQ_SIM_TIER=general) byte for byte."""

from __future__ import annotations

import pytest
import serq_frontend
from counting import count_resident_lists
from tiers import on_both_tiers

N = 1500

PROGRAM = """
pool kv {{ cap 1e12; block 16; }}
pool reqs {{ cap 1e9; admit via engine; }}
stage engine : step {{
  budget 1e12;
  cost 0.01 + 0.00001 * tokens;
  memory kv;
  {serve}
}}
workload {{ arrive batch({n}); }}
session {{
  set p = 20 + serial % 7;
  hold reqs (1), kv (p) {{
    prefill on engine (p) growing kv;
    decode on engine (1 + serial % 5) growing kv;
  }}
  end;
}}
run {{ horizon 1e6; seed 1; }}
"""


@pytest.fixture
def counted(monkeypatch):
    return count_resident_lists(monkeypatch)


def compile_(tmp_path, serve: str):
    src = tmp_path / "burst.sq"
    src.write_text(PROGRAM.format(n=N, serve=serve))
    return serq_frontend.compile(str(src), sets={}, defs={})


@pytest.mark.timeout(60)
@pytest.mark.parametrize("serve", ["", "serve by (-admission);", "serve decode first;"])
def test_a_burst_of_admissions_looks_at_each_resident_a_bounded_number_of_times(tmp_path, counted, serve):
    program = compile_(tmp_path, serve)

    def check(tier, sim):
        assert sim.arrivals == N and sim.ended == N
        # every session is admitted in the first planning (budget and slots for all): a look at each
        # resident per admission would be about N * N / 2 = 1 125 000
        assert counted.looks < 40 * N, (tier, counted.looks)

    on_both_tiers(program, check, lambda: setattr(counted, "looks", 0))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("serve", ["serve by (-admission);", "serve by (serial % 2, -admission);"])
def test_thousands_ending_in_one_iteration_are_taken_out_in_one_pass(tmp_path, counted, serve):
    # every session decodes one token: all N end at the second iteration's end, walked in serving order
    src = tmp_path / "end.sq"
    src.write_text(PROGRAM.format(n=N, serve=serve).replace("decode on engine (1 + serial % 5)", "decode on engine (1)"))
    program = serq_frontend.compile(str(src), sets={}, defs={})

    def check(tier, sim):
        assert sim.ended == N
        assert counted.looks < 40 * N, (tier, counted.looks)

    on_both_tiers(program, check, lambda: setattr(counted, "looks", 0))
