"""Known defects, round 30 (serq-sim).

A session that sent two requests through lib/vllm.sq with no `turn;` between them wrote both `request` rows with
turn 0, and nothing said so. A turn is what a `turn;` statement starts (language.txt: the workload's `turn` block
runs at every `turn;`; the records' `turn` is `turn_no`, the `turn;` statements the session has run), so the rows
keep that number, and the report warns (code `shared-turn`) of a table of requests whose rows share a session and
a turn. By hand: two sessions at 0, each two requests of prompt 4 and output 3 on an engine of two slots and cost 1,
each request three iterations: the first requests run from 0 to 3, the second from 3 to 6, four rows of turn 0.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.policies import EvictionOrder
from serq_sim.stages import StageKind
from tiers import same_json

TWO = """use "vllm.sq";
pool reqs { cap 2; admit via engine; }
pool kv { cap 100; block 1; evict lru; preempt lifo; }
stage engine : step { budget 100; cost 1; memory kv; }

workload {
  arrive batch(2);
  hidden o;
}

session {
  set prompt = 4;
  set o = 3;
  TURN
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  TURN
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}

run { horizon inf; }
"""

WARNING = ("warning: table `request` has 2 rows that share their session and turn with another row (2 rows of "
           "session 0 at turn 0, the first): a turn is what a `turn;` statement starts (the column `turn` is "
           "`turn_no`, the `turn;` statements the session has run), so the requests a session sends with no "
           "`turn;` between them are recorded in one turn, and session and turn do not tell them apart (a join "
           "with another table by session and turn pairs them wrongly); put `turn;` before each request, or "
           "record a column of the program's own that numbers them")


def _rows(turn: str, monkeypatch):
    program = serq_frontend.compile(source=TWO.replace("TURN", turn))
    r = same_json(program, monkeypatch)
    rows = serq_sim.run(program).records().sort_values(["time", "session"])
    return r, [(int(s), int(t), float(sent)) for s, t, sent in zip(rows["session"], rows["turn"], rows["sent"])]


def test_two_requests_in_one_turn_are_recorded_so_and_warned_of(monkeypatch):
    r, rows = _rows("", monkeypatch)
    assert rows == [(0, 0, 0.0), (1, 0, 0.0), (0, 0, 3.0), (1, 0, 3.0)]
    shared = [n for n, c in zip(r["notes"], r["codes"]) if c == "shared-turn"]
    assert shared == [WARNING]


def test_a_turn_before_each_request_numbers_them_and_nothing_is_said(monkeypatch):
    r, rows = _rows("turn;", monkeypatch)
    assert rows == [(0, 1, 0.0), (1, 1, 0.0), (0, 2, 3.0), (1, 2, 3.0)]
    assert "shared-turn" not in r["codes"]


# An ordinary exception raised by a plugin's code in the run (its stage kind, eviction order, preemption policy or
# share policy) was `failed in Boom.attach during the run: RuntimeError: … at FILE:LINE`, without the simulated
# time, the session or the declaration that named the plugin; a share policy's breach of its contract gave the
# time alone (`share NAME;` had no place in the IR: now `Program.share_span`, written only for a program that has
# a `share`). Each names them now, as a breach of an eviction order's key does (serq_sim.guards.failure).

class Boom(StageKind):
    """Completes a job after its work, and raises at an attach from t = 1 on."""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        if self.sim.now >= 1:
            raise RuntimeError("stage boom")
        self.sim.at(self.sim.now + job.work, self.finish, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None

    def finish(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)


class Keys(EvictionOrder):
    def key(self, entry):
        raise ValueError("key boom")


class Rough:
    """The plugin: a stage kind, an eviction order and share policies that fail."""

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("boom", Boom)

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        register("keys", Keys)

    @hookimpl
    def serq_sim_register_share_policies(self, register):
        def raising(flows, caps):
            raise ZeroDivisionError("share boom")

        def greedy(flows, caps):
            return [10.0] * len(flows)

        register("raising", raising)
        register("greedy", greedy)


PLUGIN = f"error: plugin '{__name__}.Rough'"
HINT = "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"

STAGE = """stage svc : @boom;
workload { arrive batch(2); }
session { run svc (1); run svc (1); }
run { horizon 100; }
"""

EVICT = """pool p { cap 10; evict @keys; }
stage d : delay;
workload { arrive batch(3); }
session { hold p (6) { run d (1); } cache (6); }
run { horizon 100; }
"""

SHARE = """stage a : ps(1);
stage b : ps(2);
share POLICY;
stage d : delay;
workload { arrive batch(2); }
session { run d (1); run a, b (1); }
run { horizon 100; }
"""


def _failure(tmp_path, source: str) -> list[str]:
    p = tmp_path / "p.sq"
    p.write_text(source)
    pm = get_plugin_manager(plugins=[Rough()])
    with pytest.raises(PluginError) as e:
        serq_sim.run(serq_frontend.compile(path=str(p), pm=pm), pm=pm)
    return str(e.value).replace(str(p), "p.sq").splitlines()


def _raised_at(function: str) -> str:
    lines = Path(__file__).read_text().splitlines()
    start = next(i for i, x in enumerate(lines) if x.strip().startswith(f"def {function}("))
    line = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("raise ")) + 1
    return f"{__file__}:{line}"


def test_a_stage_kind_that_raises_is_told_with_the_time_the_session_and_the_stage(tmp_path, monkeypatch):
    # both sessions' first runs attach at 0 and complete at 1; session 0's second attach, at 1, raises
    for tier in ("general", ""):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        assert _failure(tmp_path, STAGE) == [
            f"{PLUGIN} failed in Boom.attach during the run: RuntimeError: stage boom at {_raised_at('attach')} (at "
            "t=1, session 0)", HINT,
            "p.sq:1:1: note: stage svc is declared here", "  stage svc : @boom;", "  ^"]


def test_an_eviction_order_that_raises_is_told_with_the_time_and_its_pool(tmp_path):
    # sessions 0 and 1 hold 6 of 10 in turn; at 1 session 0's release caches 6 and session 1's admission must
    # evict it: the key is asked for then (no session's job is at hand)
    assert _failure(tmp_path, EVICT) == [
        f"{PLUGIN} failed in Keys.key during the run: ValueError: key boom at {_raised_at('key')} (at t=1)", HINT,
        "p.sq:1:1: note: pool p is declared here", "  pool p { cap 10; evict @keys; }", "  ^"]


def test_a_share_policy_that_raises_or_breaks_its_contract_is_told_at_the_share(tmp_path):
    # the flows start at 1, after each session's delay of 1: the policy is first asked with session 0's alone
    note = ["p.sq:3:1: note: share {} is declared here", "  share {};", "  ^"]
    assert _failure(tmp_path, SHARE.replace("POLICY", "raising")) == [
        f"{PLUGIN} failed in Rough.serq_sim_register_share_policies.<locals>.raising during the run: "
        f"ZeroDivisionError: share boom at {_raised_at('raising')} (at t=1)", HINT,
        *(x.format("raising") for x in note)]
    assert _failure(tmp_path, SHARE.replace("POLICY", "greedy")) == [
        f"{PLUGIN} failed in its share policy 'greedy': its rates at stage a add up to 10, above the stage's "
        "capacity 1: the flows at a stage carry at most its capacity (at t=1)", HINT,
        *(x.format("greedy") for x in note)]


def test_the_share_span_is_written_only_beside_a_share_and_is_a_span():
    without = serq_frontend.compile(source=EVICT.replace("evict @keys", "evict lru"))
    assert b"share" not in serq_ir.encode(without)
    with_share = serq_frontend.compile(source=SHARE.replace("POLICY", "maxmin"))
    assert with_share.share_span == ("<source>", 3, 1)
    assert b"share_span" not in serq_ir.encode(with_share, spans=False)
    assert serq_ir.strip_spans(with_share).share_span is None
    # an IR file written before the span runs as it did; its share policy's breach gives the time alone
    text = serq_ir.encode(with_share).replace(b',"share_span":["<source>",3,1]', b"")
    assert b"share_span" not in text and serq_ir.decode(text) == msgspec.structs.replace(with_share,
                                                                                         share_span=None)
    with pytest.raises(serq_ir.IRError, match=r"share_span"):
        serq_ir.decode(serq_ir.encode(with_share).replace(b'"share_span":["<source>",3,1]',
                                                          b'"share_span":["<source>",0,1]'))
