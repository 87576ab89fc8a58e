"""``budget_left(S)`` read in the body of a hold S admits, at the admission's instant, is what its header read.

language.txt §3 gives ``budget_left(S)`` one moment, an admission of S's waiting loop: the budget the
iteration has left, and under ``serve exclusive prefill`` the whole budget ("a waiting prefill that fits can
replace them and use the full budget, including in budget_left at admission"). The body starts at that
instant, inside the waiting loop, before anything else happens at the stage: until it first waits (its run
joins the stage) it reads the attempt's figure, as its header did. It read the estimate a read made elsewhere
gets (the budget less what every resident would take at the next iteration), which knows no exclusive
prefill: 9 where the header read 10, beside one tentative decode. A read later in the body (after its run)
is such a read elsewhere, and still gets the estimate (docs/language.md, budget_left).

By hand: budget 10, cost 1, renewal arrivals every 0.5 from 0.5. Session 0 (decode of 5) is admitted at 0.5
and decodes 1 token in [0.5, 1.5). Session 1, arrived at 1.0, is admitted at 1.5 with its header's
``budget_left(E)`` (the units of ``m``): under exclusive prefill the whole budget, 10; by default what the
decode leaves, 9. Its body reads the same at 1.5. Its prefill of 4 runs alone in [1.5, 2.5) under exclusive
prefill (the decode displaced), beside the decode by default; at 2.5 the body reads the estimate, the decode
the only resident: 10 - 1 = 9 on both. Both tiers (conform.run).
"""

from __future__ import annotations

import pytest
from conform import run

PROG = """pool reqs { cap 10; admit via E; }
pool m { cap 100; }
stage E : step { budget 10; cost 1; SERVE }
workload { arrive renewal(0.5); }
session {
  branch (serial == 0) { hold reqs (1) { run E decode (5); } }
  else {
    hold reqs (1), m (budget_left(E)) {
      observe header = used(m);
      observe body = budget_left(E);
      run E prefill (4);
      observe later = budget_left(E);
    }
  }
  end;
}
run { horizon 20; arrivals 2; }
"""


@pytest.mark.parametrize("prepared", [True, False], ids=["prepared", "general-admission"])
@pytest.mark.parametrize("serve, seen", [("serve exclusive prefill;", 10.0), ("", 9.0)])
def test_the_body_reads_at_its_admission_what_its_header_read(monkeypatch, serve, seen, prepared):
    # (on the hold's prepared admission, serq_sim.pools.prepared, and on the general one)
    from serq_sim.pools import prepared as prep

    monkeypatch.setattr(prep, "ENABLED", prepared)
    _report, obs = run(PROG.replace("SERVE", serve), monkeypatch)
    assert obs["header"] == [(1, 1.5, seen)]
    assert obs["body"] == [(1, 1.5, seen)]
    assert obs["later"] == [(1, 2.5, 9.0)]


ELSEWHERE = """pool reqs { cap 10; admit via E; }
stage E : step { budget 10; cost 1; SERVE }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold reqs (1) { run E decode (5); } }
  else { branch (serial == 1) { hold reqs (1) { run E prefill (25); } }
  else { run d (2.5); observe mid = budget_left(E); run d (1); observe after = budget_left(E); } }
  end;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("serve", ["serve exclusive prefill;", ""])
def test_a_read_elsewhere_estimates_the_next_iteration_by_the_serve_rule(monkeypatch, serve):
    """By hand: sessions 0 (decode of 5) and 1 (prefill of 25) are admitted at 0, in that order; session 2, at
    no stage of E, reads the estimate at 2.5 and 3.5. Under exclusive prefill the prefill runs alone, 10 tokens
    an iteration, [0, 1), [1, 2), [2, 3): at 2.5 the resident prefill (5 left) would be served alone, 10 - 5 =
    5 (it read 10 - (1 + 5) = 4, the decode's token counted beside the prefill); at 3.5 the decode alone, 10 -
    1 = 9. By default the decode takes its token beside the prefill's 9 each iteration: at 2.5 the decode has 3
    left and the prefill 7, 10 - (1 + 7) = 2, as before."""
    _report, obs = run(ELSEWHERE.replace("SERVE", serve), monkeypatch)
    if serve:
        assert obs["mid"] == [(2, 2.5, 5.0)]
        assert obs["after"] == [(2, 3.5, 9.0)]
    else:
        assert obs["mid"] == [(2, 2.5, 2.0)]
