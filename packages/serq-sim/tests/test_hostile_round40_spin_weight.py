"""A loop of no time whose body is large: the guard against a loop that never lets time pass counted a pass as one,
whatever the body held, so a loop over 16 000 branches executed 10⁶ passes of 16 000 statements before its error
(hours at one instant, on both tiers; 1 000 branches took 55 s). A pass now counts one per 64 statements of its
body, begun (serq_sim.compile.spin_weight), so the guard comes after a bounded number of statements, and the
message says how a pass was counted; a body of 64 statements or fewer (every loop of the tree's programs) counts
one, as before."""

from __future__ import annotations

import serq_frontend
from serq_sim.compile import SPIN_LIMIT, spin_weight
from tiers import same_error

PROGRAM = """stage s : fifo;
workload {{ arrive poisson(1); }}
session {{
{sets}
  loop {{
{branches}
    branch (now > 5) {{ end; }}
  }}
}}
run {{ horizon 10; seed 1; }}
"""


def _loop(n: int):
    sets = "\n".join(f"  set a{i} = 1;" for i in range(n))
    branches = "\n".join(f"    branch (a{i} > 0) {{ set b{i} = 1; }}" for i in range(n))
    return serq_frontend.compile(source=PROGRAM.format(sets=sets, branches=branches), sets={}, defs={})


def test_a_pass_counts_one_per_64_statements_of_its_body():
    loop = _loop(100).session[-1]
    # 100 branches, a set in each, the last branch and its end: 202 statements, 4 a 64 begun
    assert spin_weight(loop.body) == (4, 202)
    assert spin_weight(_loop(31).session[-1].body) == (1, 64)
    assert spin_weight(_loop(32).session[-1].body) == (2, 66)


def test_a_large_loop_of_no_time_is_stopped_on_both_tiers(monkeypatch):
    message = same_error(_loop(100), monkeypatch)
    assert message.startswith(
        f"<source>:104:3: error: at t=0, session 0: loop: {SPIN_LIMIT} passes at one instant, a pass of its body of "
        "202 statements counting 4 (one per 64, begun), without simulated time passing (none of them reached a run, "
        "hold or grow that took time; "), message
