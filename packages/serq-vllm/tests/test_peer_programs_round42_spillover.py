"""A spill-over router (peer_programs42/spillover.sq): a request goes to engine[0] unless requests wait for it
already, then to engine[1]. Written with a branch (`branch (queued(reqs[0]) > spill) { set j = 1; } else { set
j = 0; }`) or a set (`set j = queued(reqs[0]) > spill ? 1 : 0;`), it was refused at `reqs[j]` in lib/vllm.sq's
hold: "`j` is set from live pool or stage state (…) and read in a hold's header: the header is read at
admission, …". The index of a member is where the session goes, read when it queues (a hold's pool) or naming
the member it queued at, a routing decision as a `choose` is, and `choose j in 2 by (…)`, the same rule, always
linked. The first lint now passes over the index of a reference; a value read at admission is still its
business (docs/language.md, "It follows the branches that chose a value, too")."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim

PROGRAM = Path(__file__).resolve().parent / "peer_programs42" / "spillover.sq"
pytestmark = pytest.mark.timeout(60)


def test_the_three_forms_of_the_rule_route_alike():
    runs = [serq_sim.run(serq_frontend.compile(str(PROGRAM), sets={"form": f}), horizon=40) for f in (0, 1, 2)]
    tables = [r.records() for r in runs]
    for t in tables[1:]:  # the branch, the set and the choose: every request where, and when, alike
        assert t.equals(tables[0])
    r = runs[0]
    spilled = r.observe("spilled").values
    assert 0.1 < spilled.mean() < 0.9  # both engines take requests
    assert (r.observe("right").values == 1).all()  # each request went where the rule said at its send
    counts = tables[0].engine.value_counts().to_dict()
    assert counts[1] == r.result.stages[1].requests and counts[0] == r.result.stages[0].requests


def test_a_value_a_live_branch_chose_is_still_refused_in_a_header():
    # the chosen member's index as the hold's units: a number read at admission, decided before the queue
    src = PROGRAM.read_text().replace("vllm_request(reqs[j], kv[j], engine[j], prompt, o, t0);",
                                      "hold reqs[j] (1 + j) { }")
    assert "hold reqs[j] (1 + j) { }" in src
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=src)
    lines = src.splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "hold reqs[j] (1 + j)" in t)
    at = next(i for i, t in enumerate(lines, 1) if "branch (queued(reqs[0]) > spill)" in t)
    assert str(info.value).startswith(
        f"<source>:{line}:21: error: `j` is set from live pool or stage state (under the branch at {at}:5, whose "
        "guard reads `queued(reqs[0])`) and read in a hold's header")


KEYED = """pool kv[2] { cap 100; }
pool q { cap 1; queue by (-used(kv[j])); }
stage s : fifo;
workload { arrive poisson(1); }
session {
  branch (queued(q) > 2) { set j = 1; } else { set j = 0; }
  hold q (1) { hold kv[j] (1) { run s (0.5); } }
}
run { horizon 50; }
"""


def test_a_queue_key_that_names_the_chosen_member_is_not_warned_of(capfd):
    # the key reads the member's state as it is at each selection; `j` names the member, as in a header
    serq_frontend.compile(source=KEYED)
    assert "warning" not in capfd.readouterr().err
    # `j` as a number in the key is the value the branch chose before the session queued: warned of, at it
    serq_frontend.compile(source=KEYED.replace("-used(kv[j])", "-used(kv[j]) + j"))
    assert capfd.readouterr().err.startswith(
        "<source>:2:42: warning: `j` is set from live pool or stage state (under the branch at 6:3, whose guard "
        "reads `queued(q)`) and read in pool `q`'s queue key")
