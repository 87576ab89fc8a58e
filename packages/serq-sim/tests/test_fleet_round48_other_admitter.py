"""A run on a step family's member inside a hold whose first pool another member admits, the member computed at
run time, is warned of once a statement, at its first such run, naming the statement's place, the time and the
session (serq_sim.fleet, code `other-admitter`; docs/language.md, "A run on another member's engine"); the run
goes on as written, the same on both tiers, and a program whose runs are on the member that admits them says
nothing and runs as before. The linker refuses the constant case (serq-frontend's
test_fleet_round48_other_admitter)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from conform import run
from serq_report.json import encode_json

pytestmark = pytest.mark.timeout(60)

FLEET = """pool reqs[2] { cap 8; admit via engine; }
pool kv[2] { cap 4000; block 16; }
stage engine[2] : step { budget 256; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  set j = serial % 2;
  hold reqs[j] (1), kv[K] (16) { BODY }
}
run { horizon 50; }
"""


def warned(report) -> list[str]:
    return [n for n in report.notes if "which `engine" in n]


def test_a_run_on_another_member_than_the_one_that_admitted_its_hold_is_warned_of(monkeypatch):
    # sessions 0 and 2 wait in reqs[0], which engine[0] admits at t=0; session 1 in reqs[1], which engine[1]
    # admits at t=0; each holds kv[0] and runs on engine[0] (its memory's member: no other-memory warning).
    # The decode, a statement of its own, at its first run: session 1's 10-token prefill joined engine[0]
    # after that engine planned its first iteration, [0, 1], for sessions 0 and 2, so it is the iteration
    # [1, 2] (cost 1), and the decode starts at 2.
    src = FLEET.replace("kv[K]", "kv[0]").replace("BODY", "prefill on engine[0] (10) growing kv[0]; "
                                                           "decode on engine[0] (2);")
    report, _ = run(src, monkeypatch)
    tail = ("`engine[1]`'s waiting loop admitted the request, with its budget and its slots, and `engine[0]` "
            "serves it; run the request on the member that admits it")
    assert warned(report) == [
        "warning: the run at <source>:7:34 on `engine[0]` is inside a hold of `reqs[1]`, which `engine[1]` admits "
        "(first at t=0, session 1): " + tail,
        "warning: the run at <source>:7:75 on `engine[0]` is inside a hold of `reqs[1]`, which `engine[1]` admits "
        "(first at t=2, session 1): " + tail,
    ]
    assert [n.code for n in report.notes if n in warned(report)] == ["other-admitter"] * 2
    assert not [n for n in report.notes if "another member's memory" in n]


def test_the_memory_and_the_admitter_are_told_apart(monkeypatch):
    # session 1 holds reqs[1] and kv[1] and runs on engine[0]: both warnings, the memory's first
    src = FLEET.replace("kv[K]", "kv[j]").replace("BODY", "run engine[0] decode (3);")
    report, _ = run(src, monkeypatch)
    codes = [n.code for n in report.notes if getattr(n, "code", None) in ("other-memory", "other-admitter")]
    assert codes == ["other-memory", "other-admitter"]


def test_each_run_on_the_member_that_admits_it_says_nothing_and_runs_as_before(monkeypatch):
    own = FLEET.replace("kv[K]", "kv[j]").replace("BODY", "prefill on engine[j] (10) growing kv[j]; "
                                                          "decode on engine[j] (2);")
    report, _ = run(own, monkeypatch)
    assert [n for n in report.notes if n.startswith("warning")] == []
    # the check reads and changes nothing: the same report as the statements with the stage chosen by a branch
    # (no member index on the run, so no check compiled)
    branched = own.replace("prefill on engine[j] (10) growing kv[j]; decode on engine[j] (2);",
                           "branch (j == 0) { prefill on engine[0] (10) growing kv[j]; decode on engine[0] (2); } "
                           "else { prefill on engine[1] (10) growing kv[j]; decode on engine[1] (2); }")
    p1 = serq_frontend.compile(source=own, sets={}, defs={})
    p2 = serq_frontend.compile(source=branched, sets={}, defs={})
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    assert encode_json(serq_sim.run(p1)) == encode_json(serq_sim.run(p2))
