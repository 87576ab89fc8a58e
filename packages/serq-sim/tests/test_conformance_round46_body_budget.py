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
