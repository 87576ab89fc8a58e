"""A run on a step family's member that holds another member's memory, the member computed at run time
(lib/vllm.sq's `vllm_request(reqs[j], kv[j], engine[0], …)`), is warned of once a statement, at its first
such run, naming the statement's place, the time and the session (serq_sim.fleet, code `other-memory`;
docs/language.md, "A run on another member's memory"); the run goes on as written, and a program whose runs
hold their own member's memory says nothing and runs as before. The linker refuses the constant case
(serq-frontend's test_fleet_round47_other_memory)."""

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
  hold reqs[j] (1), kv[j] (16) { BODY }
}
run { horizon 50; }
"""


def warned(report) -> list[str]:
    return [n for n in report.result.notes if "another member's memory" in n]


def test_a_run_growing_another_members_memory_is_warned_of_at_its_first_run(monkeypatch):
    # sessions 0 and 2 hold kv[0] and run on engine[0], their own; session 1 holds kv[1] and runs there too
    report, _ = run(FLEET.replace("BODY", "prefill on engine[0] (10) growing kv[j]; decode on engine[0] (2);"),
                    monkeypatch)
    assert warned(report) == [
        "warning: the run at <source>:7:34 on `engine[0]` holds `kv[1]`, another member's memory (first at t=0, "
        "session 1): `engine[0]`'s memory is `kv[0]`, so its iterations count none of that KV (`kv_decode`, "
        "`kv_prefill`), and a growth of `kv[1]` preempts among the residents of the engine whose memory it is; "
        "run the request on the member whose memory it holds",
        # the decode, a statement of its own, at its first run: session 1 was admitted by engine[1] (reqs[1]'s
        # stage) and its prefill joined engine[0] after that engine planned its first iteration, [0, 1], for
        # sessions 0 and 2 that it admitted itself; its 10 tokens are the iteration [1, 2] (cost 1), so its
        # decode starts at 2
        "warning: the run at <source>:7:75 on `engine[0]` holds `kv[1]`, another member's memory (first at t=2, "
        "session 1): `engine[0]`'s memory is `kv[0]`, so its iterations count none of that KV (`kv_decode`, "
        "`kv_prefill`), and a growth of `kv[1]` preempts among the residents of the engine whose memory it is; "
        "run the request on the member whose memory it holds",
    ]
    assert [n.code for n in report.notes if "another member's memory" in n] == ["other-memory"] * 2


def test_each_run_on_its_own_members_memory_says_nothing_and_runs_as_before(monkeypatch):
    own = FLEET.replace("BODY", "prefill on engine[j] (10) growing kv[j]; decode on engine[j] (2);")
    report, obs = run(own, monkeypatch)
    assert warned(report) == []
    # the check reads and changes nothing: the same report as the statements with the stage chosen by a
    # branch (no member index on the run, so no check compiled)
    branched = own.replace("prefill on engine[j] (10) growing kv[j]; decode on engine[j] (2);",
                           "branch (j == 0) { prefill on engine[0] (10) growing kv[j]; decode on engine[0] (2); } "
                           "else { prefill on engine[1] (10) growing kv[j]; decode on engine[1] (2); }")
    p1 = serq_frontend.compile(source=own, sets={}, defs={})
    p2 = serq_frontend.compile(source=branched, sets={}, defs={})
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    assert encode_json(serq_sim.run(p1)) == encode_json(serq_sim.run(p2))


def test_a_run_inside_a_hold_of_another_member_is_warned_of_too(monkeypatch):
    report, _ = run(FLEET.replace("BODY", "run engine[1 - j] decode (3);"), monkeypatch)
    said = warned(report)
    # session 0 holds kv[0] and runs on engine[1], first at 0
    assert len(said) == 1 and said[0].startswith(
        "warning: the run at <source>:7:34 on `engine[1]` holds `kv[0]`, another member's memory (first at t=0, "
        "session 0): `engine[1]`'s memory is `kv[1]`")
