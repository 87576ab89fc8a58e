"""A third party's stage kind, eviction order with state and preemption policy, written from docs/hooks.md alone and installed as
a wheel leaves them (a ``*.dist-info`` with its ``entry_points.txt`` in a folder on ``sys.path``):
``@wps``, processor sharing whose shares are in proportion to each job's session's attribute ``w`` (the
session read through ``job.owner.attrs`` at the slot of ``w`` in ``sim.program.attributes``), and
``@leasthits``, the cached entry of the session hit least often first (a hit counted in ``on_remove`` of an
entry the order did not pick), ``@mostkv``, the candidate holding most units preempted, and ``@bserve(B, T)``, up to B waiting jobs served
at once in a batch of time T whatever their works. Each checked by hand on both tiers; the plugin's mistakes (a weight of 0, a
program without ``w``) and a program naming them where they are not installed are one message each."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_frontend import CompileError
from serq_report.json import encode_json
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

PLUGIN = '''"""serq-p3: a weighted processor-sharing stage kind and an eviction order of the least hits."""
import math
from collections import deque

from serq import hookimpl
from serq_sim import SimError
from serq_sim.policies import EvictionOrder, PreemptionPolicy
from serq_sim.stages import StageKind


class WeightedPs(StageKind):
    """Processor sharing of capacity 1, each job's share in proportion to its session's attribute `w`."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        names = [a.name for a in sim.program.attributes]
        if "w" not in names:
            raise SimError(f"stage {node.name}: @wps weights by the attribute w, which the program does not have")
        self.slot = names.index("w")
        self.jobs = []  # [job, left]
        self.last = 0.0
        self.gen = 0

    def _advance(self):
        now = self.sim.now
        tot = sum(self._w(j) for j, _ in self.jobs)
        for e in self.jobs:
            e[1] -= (now - self.last) * self._w(e[0]) / tot
        self.last = now

    def _w(self, job):
        return job.owner.attrs[self.slot]

    def _plan(self):
        self.gen += 1
        if not self.jobs:
            return
        tot = sum(self._w(j) for j, _ in self.jobs)
        t = min(left * tot / self._w(j) for j, left in self.jobs)
        self.sim.at(self.sim.now + t, self._fire, self.gen)

    def _fire(self, gen):
        if gen != self.gen:
            return
        self._advance()
        e = min(self.jobs, key=lambda e: e[1])
        self.acc()
        self.jobs.remove(e)
        self.present -= 1
        e[0].stage = None
        self.sim.job_done(self, e[0])
        self._plan()

    def attach(self, job):
        if self.jobs:
            self._advance()
        else:
            self.last = self.sim.now
        self.acc()
        self.present += 1
        job.stage = self
        job.started = self.sim.now
        self.jobs.append([job, job.work])
        self._plan()

    def detach(self, job):
        self._advance()
        self.acc()
        self.present -= 1
        job.stage = None
        self.jobs = [e for e in self.jobs if e[0] is not job]
        self._plan()

    def busy_level(self):
        return 1.0 if self.jobs else 0.0


class LeastHits(EvictionOrder):
    """The entry of the session whose cache was hit least often first (ties in release order); a hit is an
    entry of the session's taken out of the cache other than by this order's eviction (its admission)."""

    needs_snapshot = False

    def __init__(self, sim, pool, node):
        super().__init__(sim, pool, node)
        self.hits = {}
        self.picked = None

    def pick(self, pool):
        self.picked = super().pick(pool)
        return self.picked

    def on_remove(self, entry):
        super().on_remove(entry)
        if entry is not self.picked and entry.owner is not None:
            self.hits[entry.owner.serial] = self.hits.get(entry.owner.serial, 0) + 1

    def key(self, entry):
        return (self.hits.get(entry.owner.serial, 0) if entry.owner is not None else 0,)


class BatchServe(StageKind):
    """Up to B waiting jobs served at once, in arrival order; every batch takes T whatever its works."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        p = node.kind.params
        if not (isinstance(p, list) and len(p) == 2 and all(isinstance(x, float) for x in p)
                and p[0] >= 1 and p[0] == int(p[0]) and 0 < p[1] < math.inf):
            raise SimError(f"stage {node.name}: @bserve takes (B, T), a whole B of at least 1 and a time T above 0")
        self.b, self.t = int(p[0]), p[1]
        self.waiting = deque()
        self.serving = []

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.waiting.append(job)
        if not self.serving:
            self._start()

    def _start(self):
        if not self.waiting:
            return
        self.acc()
        while self.waiting and len(self.serving) < self.b:
            job = self.waiting.popleft()
            job.started = self.sim.now
            self.serving.append(job)
        self.sim.at(self.sim.now + self.t, self._done, list(self.serving))

    def _done(self, batch):
        if batch != self.serving:
            return
        self.acc()
        self.serving = []
        for job in batch:
            self.present -= 1
            job.stage = None
            self.sim.job_done(self, job)
        self._start()

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        if job in self.serving:
            self.serving.remove(job)
        else:
            self.waiting.remove(job)

    def busy_level(self):
        return len(self.serving) / self.b

    def queue(self):
        return float(len(self.waiting))

    def busy(self):
        return float(len(self.serving))


class MostKv(PreemptionPolicy):
    """The candidate holding most units of the pool (ties: the last admitted); back at the queue's head."""

    requeue = "head"

    def victim(self, pool, grower):
        best = None
        for s, slot in self.sim.preempt_candidates(pool):
            if best is None or slot.alloc >= best[0]:
                best = (slot.alloc, s)
        return None if best is None else best[1]


@hookimpl
def serq_sim_register_preemption_policies(register):
    register("mostkv", MostKv)


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("wps", WeightedPs)
    register("bserve", BatchServe)


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("leasthits", LeastHits)

'''


@pytest.fixture
def pm(tmp_path, monkeypatch):
    """serq-p3's plugin ``p3`` installed in a folder on sys.path; a plugin manager of it."""
    info = tmp_path / "serq_p3-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-p3\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\np3 = p3_kinds\n")
    (tmp_path / "p3_kinds.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield get_plugin_manager()
    for name in set(sys.modules) - before:
        if name.startswith("p3_"):
            del sys.modules[name]


def _compile(tmp_path, pm, text):
    path = tmp_path / "P.sq"
    path.write_text(text)
    return serq_frontend.compile(path, pm=pm)


WPS = """stage svc : @wps;
workload { arrive batch(2); }
session { set w = WEIGHT; set t0 = now; run svc (1); observe t = now - t0; }
run { horizon 100; }
"""


def test_weighted_shares_by_hand(pm, tmp_path, monkeypatch):
    """Two jobs of work 1 at 0, weights 1 and 3: rates 1/4 and 3/4, so session 1 is done at 4/3, when session 0
    has 1 - 1/3 left, alone at rate 1: done at 2. Mean sojourn (4/3 + 2) / 2 = 5/3; the stage is busy 2 of 100."""
    prog = _compile(tmp_path, pm, WPS.replace("WEIGHT", "1 + 2 * serial"))
    doc = same_json(prog, monkeypatch, pm=pm, seed=1)
    assert doc["observes"]["t"]["count"] == 2
    assert doc["observes"]["t"]["mean"] == pytest.approx(5 / 3, rel=1e-12)
    (svc,) = doc["stages"]
    assert svc["completions"] == 2
    assert svc["utilisation"] == pytest.approx(2 / 100, rel=1e-12)
    assert svc["service"] == pytest.approx(5 / 3, rel=1e-12)  # started at arrival: all of it is service
    # equal weights are processor sharing: both done at 2
    doc = same_json(_compile(tmp_path, pm, WPS.replace("WEIGHT", "5")), monkeypatch, pm=pm, seed=1)
    assert doc["observes"]["t"]["mean"] == pytest.approx(2.0, rel=1e-12)


def test_a_weight_of_zero_is_the_plugins_failure_at_its_stage(pm, tmp_path):
    prog = _compile(tmp_path, pm, WPS.replace("WEIGHT", "0"))
    with pytest.raises(PluginError) as e:
        serq_sim.run(prog, pm=pm, seed=1)
    msg = str(e.value)
    assert msg.startswith("error: plugin 'p3' (from serq-p3 0.1.0) failed in WeightedPs.")
    assert "during the run: ZeroDivisionError: float division by zero at " in msg
    assert "p3_kinds.py:" in msg and "(at t=0, session 0)" in msg
    assert "(run without it: SERQ_DISABLED_PLUGINS=p3, or uninstall serq-p3)" in msg
    assert msg.endswith("P.sq:1:1: note: stage svc is declared here\n  stage svc : @wps;\n  ^")
    assert "Traceback" not in msg


def test_a_program_without_the_attribute_is_refused_at_the_stage(pm, tmp_path):
    prog = _compile(tmp_path, pm, WPS.replace("set w = WEIGHT; ", ""))
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog, pm=pm, seed=1)
    assert str(e.value).splitlines() == [
        f"{tmp_path / 'P.sq'}:1:1: error: stage svc: @wps weights by the attribute w, which the program does not have",
        "  stage svc : @wps;", "  ^"]


LEAST_HITS = """pool p { cap 12; evict ORDER; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold p (4) { run d (1); } cache (4);
    run d (1);
    hold p (4) { observe again0 = cached; run d (1); } cache (4);
    run d (10);
    hold p (4) { observe hit0 = cached; run d (1); } cache (4);
  } else {
    branch (serial == 1) {
      run d (2);
      hold p (4) { run d (2); } cache (4);
      run d (10);
      hold p (4) { observe hit1 = cached; run d (1); } cache (4);
    } else {
      run d (5);
      hold p (8) { run d (1); }
    }
  }
}
run { horizon 100; }
"""


@pytest.mark.parametrize(("order", "hits"), [("@leasthits", (4.0, 4.0, 0.0)), ("lru", (4.0, 0.0, 4.0))])
def test_the_entry_of_the_least_hits_goes_first(pm, tmp_path, monkeypatch, order, hits):
    """Session 0 caches 4 at 1 and takes it back at 2 (a hit), caching 4 again at 3; session 1 caches 4 at 4,
    never hit. At 5 session 2 holds 8 of 12 with 8 cached: one entry goes. lru evicts session 0's (released
    at 3, before 4); @leasthits session 1's (0 hits against 1). So session 0 finds 4 at 13 and session 1
    nothing at 14, the other way round under lru."""
    prog = _compile(tmp_path, pm, LEAST_HITS.replace("ORDER", order))
    doc = same_json(prog, monkeypatch, pm=pm, seed=1)
    assert tuple(doc["observes"][k]["mean"] for k in ("again0", "hit0", "hit1")) == hits


MANY = """pool p { cap 64; block 4; evict @leasthits; }
stage s : fifo(2);
workload { arrive poisson(0.2); }
session {
  set n = 0;
  set t0 = now;
  loop {
    hold p (8 + ~uniform(0, 24)) { run s (~exp(1)); } cache (8);
    run s (~exp(2));
    set n = n + 1;
    branch (n >= 3) { observe sojourn = now - t0; end; }
  }
}
run { horizon 200; }
"""


def test_same_seed_same_bytes_with_the_plugins_order(pm, tmp_path, monkeypatch):
    prog = _compile(tmp_path, pm, MANY)
    first = encode_json(serq_sim.run(prog, pm=pm, seed=7))
    assert encode_json(serq_sim.run(prog, pm=pm, seed=7)) == first
    assert encode_json(serq_sim.run(prog, pm=pm, seed=8)) != first
    doc = same_json(prog, monkeypatch, pm=pm, seed=7)
    assert doc["observes"]["sojourn"]["count"] > 20
    assert doc["pools"][0]["evicted_entries"] > 10  # the order is asked


@pytest.mark.parametrize(("line", "col", "what"), [
    ("pool p { cap 4; evict @leasthits; }", 23, "pool `p`: unknown eviction order `@leasthits`"),
    ("stage s : @wps;", 11, "stage `s`: unknown stage kind `@wps`"),
    ("pool p { cap 4; preempt @mostkv(requeue = 1); }", 25, "pool `p`: unknown preemption policy `@mostkv`"),
    ("share weighted;", 1, "`share weighted`: unknown share policy `weighted`"),
])
def test_a_name_no_installed_plugin_registers_is_told_at_its_place(tmp_path, line, col, what):
    path = tmp_path / "Q.sq"
    path.write_text(line + "\nstage d : delay;\nworkload { arrive batch(1); }\nsession { run d (1); }\nrun { horizon 1; }\n")
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(path, pm=get_plugin_manager())
    first, source, caret = str(e.value).splitlines()[:3]
    assert first.startswith(f"{path}:1:{col}: error: {what} (no plugin registers ")
    assert source == "  " + line
    assert caret == " " * (col + 1) + "^"


@pytest.mark.parametrize(("example", "builtin", "mine", "counted", "blocks", "horizon"), [
    ("multi-turn/vllm_chat.sq", "preempt lifo", "preempt @mostkv", "preemptions", 300.0, 300.0),
    # (replica.sq's conversations grow turn by turn: on 300 blocks to 300 s some outgrow the pool and preempt
    # themselves again and again to the horizon, language.txt §3's livelock, thousands of preemptions a run;
    # 800 blocks to 100 s preempt a few times)
    ("multi-turn/replica.sq", "preempt lifo", "preempt @mostkv", "preemptions", 800.0, 100.0),
    ("multi-turn/offload.sq", "evict lru", "evict @leasthits", "evicted_entries", 300.0, 300.0),
])
def test_the_plugins_policies_on_a_step_engine_agree_on_both_tiers(pm, tmp_path, monkeypatch, example, builtin,
                                                                   mine, counted, blocks, horizon):
    """vLLM-like programs of the examples with the plugin's policy in place of the built-in one: the default tier
    and the general engine give the same bytes, the same seed the same bytes again, and the policy is asked."""
    text = (EXAMPLES / example).read_text()
    assert builtin in text
    path = tmp_path / "P.sq"
    path.write_text(text.replace(builtin, mine))
    prog = serq_frontend.compile(path, pm=pm, sets={"blocks": blocks})
    doc = same_json(prog, monkeypatch, pm=pm, seed=3, horizon=horizon)
    assert encode_json(serq_sim.run(prog, pm=pm, seed=3, horizon=horizon)) == encode_json(
        serq_sim.run(prog, pm=pm, seed=3, horizon=horizon))
    assert sum(p[counted] for p in doc["pools"]) > 0


BSERVE = """stage svc : @bserve(2, 1);
workload { arrive batch(5); }
session { set t0 = now; observe q = queue(svc); observe b = busy(svc); run svc (1 + serial); observe t = now - t0; }
run { horizon 10; }
"""


def test_a_batch_server_of_a_fixed_time_by_hand(pm, tmp_path, monkeypatch):
    """Five sessions at 0 in serial order. Session 0 finds the server idle: its batch is itself alone, 0 to 1;
    sessions 1 and 2 go 1 to 2, 3 and 4 go 2 to 3, whatever their works. At their arrivals they see waiting
    0, 0, 1, 2, 3 and in service 0, 1, 1, 1, 1; sojourns 1, 2, 2, 3, 3; waits 0, 1, 1, 2, 2. The server is
    half busy (one job of two) from 0 to 1 and busy from 1 to 3: utilisation 2.5 / 10; present 5, 4, 2 in
    the three units: 1.1."""
    doc = same_json(_compile(tmp_path, pm, BSERVE), monkeypatch, pm=pm, seed=1)
    obs = {k: (o["count"], o["mean"]) for k, o in doc["observes"].items()}
    assert obs == {"q": (5, pytest.approx(1.2)), "b": (5, pytest.approx(0.8)), "t": (5, pytest.approx(2.2))}
    (svc,) = doc["stages"]
    assert (svc["completions"], svc["utilisation"], svc["present"], svc["wait"], svc["service"]) == (
        5, pytest.approx(0.25), pytest.approx(1.1), pytest.approx(1.2), pytest.approx(1.0))


@pytest.mark.parametrize("args", ["(2)", "(0, 1)", "(2, inf)", "(1.5, 1)"])
def test_a_batch_servers_arguments_refused_are_the_users_message(pm, tmp_path, args):
    prog = _compile(tmp_path, pm, BSERVE.replace("(2, 1)", args))
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog, pm=pm, seed=1)
    assert str(e.value).splitlines() == [
        f"{tmp_path / 'P.sq'}:1:1: error: stage svc: @bserve takes (B, T), a whole B of at least 1 and a time T "
        "above 0", f"  stage svc : @bserve{args};", "  ^"]


def test_a_run_of_infinite_work_at_a_plugins_kind_is_not_the_plugins_fault(pm, tmp_path, monkeypatch):
    """Two sessions of weight 1 at @wps under horizon inf, works inf and 1: session 1 is done at 2, session 0
    waits for ever. The warning said the plugin's kind "will never complete them", naming it as at fault for the
    program's infinite work; it now says so as at serQ's own stages, naming the work."""
    src = WPS.replace("WEIGHT", "1").replace("run svc (1)", "run svc (serial == 0 ? 1 / 0 : 1)").replace(
        "horizon 100", "horizon inf")
    doc = same_json(_compile(tmp_path, pm, src), monkeypatch, pm=pm, seed=1)
    assert (doc["end"], doc["ended"], doc["observes"]["t"]["count"]) == (2.0, 1, 1)
    assert ("1 at stage svc, which will never complete them: their runs' work is infinite (session 0, in the run at "
            f"{tmp_path / 'P.sq'}:3:") in doc["notes"][1]
    assert "plugin" not in doc["notes"][1]
