"""A third party's stage kinds that keep state across time, written from docs/hooks.md and installed as a
wheel leaves them (a ``*.dist-info`` with its ``entry_points.txt`` in a folder on ``sys.path``): a batch
server (``@batchk(k)``: up to k waiting jobs at once, a batch taking its longest job) and a FIFO server that
breaks down while it serves (``@breakdown(f = F, r = R)``), each checked against independent truth: the
built-in ``fifo(1)``'s report, byte for byte, for a batch of one; a hand trace for a batch of two; the
M/G/1 formula for the breakdowns. And what an author's kind may do to a run: loop in its own code under
``--max-wall``, or never complete a job under ``horizon inf``."""

from __future__ import annotations

import json
import sys
import time
import warnings

import pytest
import serq_frontend
import serq_sim
from eviction_cases import returning_sessions
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_report.json import encode_json
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

KINDS = '''import math
import time
from collections import deque

import numpy as np
from serq import hookimpl
from serq_sim import SimError
from serq_sim.policies import EvictionOrder, PreemptionPolicy
from serq_sim.stages import StageKind


class BatchStage(StageKind):
    """One server that serves up to k waiting jobs at once, in arrival order; a batch takes its longest job."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        params = node.kind.params
        k = params.get("k") if isinstance(params, dict) else (params or [None])[0]
        if not isinstance(k, float) or not 1 <= k < math.inf or k != int(k):
            raise SimError(f"stage {node.name}: @batchk takes a whole k of at least 1, not {params!r}")
        self.k = int(k)
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
        now = self.sim.now
        batch = [self.waiting.popleft() for _ in range(min(self.k, len(self.waiting)))]
        for job in batch:
            job.started = now
        self.serving = batch
        self.sim.at(now + max(j.work for j in batch), self._done, batch)

    def _done(self, batch):
        if batch is not self.serving:
            return
        self.acc()
        self.serving = []
        for job in batch:
            if job.stage is self:
                self.present -= 1
                job.stage = None
                self.sim.job_done(self, job)
        self._start()

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        if job in self.waiting:
            self.waiting.remove(job)

    def busy_level(self):
        return 1.0 if self.serving else 0.0


class BreakdownStage(StageKind):
    """One FIFO server that breaks down while it serves, after exponential busy times of rate f, and is
    repaired in an exponential time of mean r; the job in service resumes where it stopped."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        params = node.kind.params
        if not isinstance(params, dict) or set(params) != {"f", "r"}:
            raise SimError(f"stage {node.name}: @breakdown takes f and r, not {params!r}")
        self.f, self.r = params["f"], params["r"]
        self.rng = sim.rngs["session"]
        self.waiting = deque()
        self.serving = None
        self.left = 0.0
        self.token = 0

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.waiting.append(job)
        if self.serving is None:
            self._next()

    def _next(self):
        if not self.waiting:
            return
        self.acc()
        job = self.serving = self.waiting.popleft()
        job.started = self.sim.now
        self.left = job.work
        self._serve()

    def _serve(self):
        now = self.sim.now
        up = self.rng.expovariate(self.f)
        self.token += 1
        if up >= self.left:
            self.sim.at(now + self.left, self._done, self.token)
        else:
            self.left -= up
            self.sim.at(now + up, self._break, self.token)

    def _break(self, token):
        if token == self.token:
            self.sim.at(self.sim.now + self.rng.expovariate(1 / self.r), self._repaired, token)

    def _repaired(self, token):
        if token == self.token:
            self._serve()

    def _done(self, token):
        if token != self.token:
            return
        job = self.serving
        self.acc()
        self.serving = None
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)
        self._next()

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        if job is self.serving:
            self.serving = None
            self.token += 1
            self._next()
        else:
            self.waiting.remove(job)

    def busy_level(self):
        return 1.0 if self.serving is not None else 0.0


class Forever(StageKind):
    """Takes every job and never completes it, nor schedules anything."""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None


class Spin(Forever):
    """Takes its first job and works on it for 5 s of wall time (a loop of its own), then never completes it."""

    def attach(self, job):
        super().attach(job)
        end = time.monotonic() + 5
        while time.monotonic() < end:
            pass


class Uncounted(Forever):
    """An infinite server that counts no completed job out of present (case "done"), or no job that leaves
    (case "detach")."""

    case = "done"

    def attach(self, job):
        super().attach(job)
        job.started = self.sim.now
        self.sim.at(self.sim.now + job.work, self._done, job)

    def _done(self, job):
        if job.stage is not self:
            return
        self.acc()
        if self.case != "done":
            self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)

    def detach(self, job):
        self.acc()
        if self.case != "detach":
            self.present -= 1
        job.stage = None


#: what the order, the policy and the share below return (set by the test): as documented, or a numpy
#: number, NaN, a generator
MODE = ""


class Key(EvictionOrder):
    """The entry released last first (serq-example's MRU), its key in the MODE's type."""

    fixed_key = True
    needs_snapshot = False

    def key(self, entry):
        if MODE == "numpy":
            return (np.float64(-entry.seq), np.int64(1), np.bool_(False))
        if MODE == "nan":
            return (math.nan,)
        if MODE == "generator":
            return (x for x in (-entry.seq,))
        return (-entry.seq, 1, False)


class Victim(PreemptionPolicy):
    def victim(self, pool, grower):
        candidates = [s for s, _slot in self.sim.preempt_candidates(pool)]
        if MODE == "numpy":
            return np.int64(candidates[-1].serial)
        if MODE == "nan":
            return math.nan
        if MODE == "generator":
            return (s for s in candidates)
        return candidates[-1]


def share(flows, caps):
    if MODE == "numpy":
        return np.full(len(flows), 0.25, dtype=np.float32)
    if MODE == "nan":
        return [math.nan] * len(flows)
    if MODE == "generator":
        return (0.25 for _ in flows)
    return [0.25] * len(flows)


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("bkey", Key)


@hookimpl
def serq_sim_register_preemption_policies(register):
    register("bvictim", Victim)


@hookimpl
def serq_sim_register_share_policies(register):
    register("bshare", share)


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("batchk", BatchStage)
    register("breakdown", BreakdownStage)
    register("forever", Forever)
    register("spin", Spin)
    register("uncounted", Uncounted)
'''


@pytest.fixture
def pm(tmp_path, monkeypatch):
    """serq-acme's plugin ``acme`` installed in a folder on sys.path; a plugin manager of it."""
    info = tmp_path / "serq_acme-0.3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme = acme2_kinds\n")
    (tmp_path / "acme2_kinds.py").write_text(KINDS)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield get_plugin_manager()
    for name in set(sys.modules) - before:
        if name.startswith("acme2_"):
            del sys.modules[name]


def _compile(pm, source: str):
    return serq_frontend.compile(source=source, pm=pm)


MM1 = """stage s : fifo(1);
workload { arrive poisson(0.8); }
session {
  set t0 = now;
  run s (~exp(1));
  observe resp = now - t0;
  record job { sent = t0; response = now - t0; }
}
run { horizon 2000; }
"""


def test_a_batch_of_one_is_the_builtin_fifo_byte_for_byte(pm, monkeypatch):
    """A batch server whose batches hold one job is one FIFO server: the M/M/1 program (rho = 0.8) with
    @batchk(1) in place of fifo(1) gives fifo(1)'s report, byte for byte but for the program's name and
    digests, and its records; on the default tier (fifo's fast tier) and on the general engine alike."""
    def report(source):
        prog = _compile(pm, source)
        doc = same_json(prog, monkeypatch, pm=pm, seed=3)
        del doc["program"]
        rep = serq_sim.run(prog, pm=pm, seed=3)
        return doc, {c: [float(x) for x in v] for c, v in rep.record_table("job").arrays().items()}

    fifo, batch = report(MM1), report(MM1.replace("fifo(1)", "@batchk(1)"))
    assert json.dumps(batch) == json.dumps(fifo)
    assert fifo[0]["observes"]["resp"]["count"] > 1400  # (0.8 arrivals a unit over 2000)
    assert len(fifo[1]["response"]) == fifo[0]["observes"]["resp"]["count"]


BATCH_HAND = """stage s : @batchk(k = 2);
workload { arrive batch(3); }
session { set t0 = now; run s (1 + serial); observe resp = now - t0; }
run { horizon 100; }
"""


def test_a_batch_of_two_by_hand(pm):
    """Works 1, 2, 3 at 0, in that order: the idle server takes the first job alone as it arrives (a batch
    of the one job waiting) and ends it at 1; the jobs of 2 and 3, waiting then, are the next batch, which
    ends at 1 + 3 = 4. Responses 1, 4, 4; waits 0, 1, 1; services 1, 3, 3; busy from 0 to 4."""
    report = serq_sim.run(_compile(pm, BATCH_HAND), pm=pm, seed=1)
    assert [float(v) for v in report.observe("resp").values] == [1.0, 4.0, 4.0]
    st = report.result.stages[0]
    assert (st.completions, st.wait, st.service, st.utilisation) == (3, 2 / 3, 7 / 3, 4 / 100)


BREAKDOWNS = """let F = 0.2;
let R = 1;
stage s : @breakdown(f = F, r = R);
workload { arrive poisson(0.5); }
session { set t0 = now; run s (1); observe resp = now - t0; }
run { horizon inf; arrivals 40000; }
"""


def test_breakdowns_while_serving_are_an_mg1_queue_of_the_completion_times(pm):
    """A job of work D = 1 is interrupted by N ~ Poisson(f D) breakdowns, each repaired in R ~ exp(mean r):
    its completion time C has E[C] = D (1 + f r) = 1.2 and Var C = f D E[R^2] = 0.2 * 2 = 0.4, so E[C^2] =
    1.84. The stage is an M/G/1 queue of C: with lambda = 0.5, rho = 0.6, the mean wait is lambda E[C^2] /
    (2 (1 - rho)) = 1.15 (Pollaczek-Khinchine), the response 2.35. The run's 95 % interval over 40 000
    arrivals covers it, and is narrow."""
    result = serq_sim.run(_compile(pm, BREAKDOWNS), pm=pm, seed=1).result
    resp, st = result.observes["resp"], result.stages[0]
    assert resp.count == 40000
    assert resp.ci < 0.1
    assert abs(resp.mean - 2.35) <= resp.ci, (resp.mean, resp.ci)
    assert abs(st.wait - 1.15) <= resp.ci and abs(st.service - 1.2) <= 0.02, (st.wait, st.service)
    assert abs(st.utilisation - 0.6) <= 0.02


def test_a_plugins_kind_under_the_invariants_check_gives_the_same_report(pm, monkeypatch):
    prog = _compile(pm, BREAKDOWNS.replace("arrivals 40000", "arrivals 2000"))
    plain = same_json(prog, monkeypatch, pm=pm, seed=2)
    checked = json.loads(encode_json(serq_sim.run(prog, pm=pm, seed=2, check_invariants=True)))
    assert checked == plain


SPIN = """stage s : @spin;
workload { arrive batch(1); }
session { run s (1); }
run { horizon 10; }
"""


def test_max_wall_stops_a_run_inside_a_plugins_own_code(pm):
    """The kind's attach works for 5 s of its own: --max-wall 0.3 let it (the bound was read between events
    and within serQ's own work only), and a kind that loops for ever ran until Ctrl-C. It stops at the
    bound, the note naming the plugin and its line."""
    t0 = time.monotonic()
    report = serq_sim.run(_compile(pm, SPIN), pm=pm, seed=1, max_wall=0.3)
    spent = time.monotonic() - t0
    assert report.result.partial == "max-wall", report.result.notes
    assert spent < 2.5, spent
    note = next(n for n in report.result.notes if "wall time" in n)
    line = KINDS.splitlines().index("        while time.monotonic() < end:") + 1
    assert "(--max-wall 0.3) within the code of plugin 'acme' (from serq-acme 0.3.0): Spin.attach at " in note, note
    assert note.split(" at t=")[0].endswith(f"acme2_kinds.py:{line}") or \
        note.split(" at t=")[0].endswith(f"acme2_kinds.py:{line + 1}"), note


FOREVER = """stage s : @forever;
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run s (1); }
  else { run d (1); run s (2); }
}
run { horizon inf; }
"""


def test_runs_a_kind_never_completes_under_an_endless_horizon_are_named(pm):
    """@forever completes nothing and schedules nothing: under horizon inf the run ends when no event is
    left (at 1, the delay's), not waiting, and the warning names the stage, its plugin and the two run
    statements the three sessions wait in (it named the stage and the plugin alone)."""
    report = serq_sim.run(_compile(pm, FOREVER), pm=pm, seed=1)  # (a run that waited would meet the test's timeout)
    assert report.result.end == 1.0
    lines = FOREVER.splitlines()
    first, second = (f"<source>:{i + 1}:{lines[i].index(run) + 1}" for i, run in ((4, "run s (1)"), (5, "run s (2)")))
    assert [n for n in report.result.notes if "wait for ever" in n] == [
        "warning: 3 sessions wait for ever at the end of the run (no event is left that could wake them): 3 at "
        "stage s, whose kind @forever of the plugin acme (serq-acme 0.3.0) will never complete them (sessions 0, 1, "
        f"2, in the runs at {first}, {second})"]


EVICT = returning_sessions("@bkey", 16, 8, 8)

PREEMPT = """pool a { cap 10; preempt @bvictim; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { run d (1); hold a (2) { run d (1); grow a (5); run d (2); } }
  else { hold a (4) { run d (10); } }
}
run { horizon 100; }
"""

SHARE = """stage a : ps(0.5);
stage b : ps(2);
share bshare;
workload { arrive batch(2); }
session { set t0 = now; run a, b (1); observe r = now - t0; }
run { horizon 100; }
"""

HINT = "(run without it: SERQ_DISABLED_PLUGINS=acme, or uninstall serq-acme)"

#: the note of the declaration a failure at a program's pool or stage ends with (a share policy's, since round
#: 30, at the program's `share`), its line quoted with a caret at its first column
DECLARED = {EVICT: ["<source>:1:1: note: pool p is declared here", "  pool p { cap 16; evict @bkey; }", "  ^"],
            PREEMPT: ["<source>:1:1: note: pool a is declared here", "  pool a { cap 10; preempt @bvictim; }", "  ^"],
            SHARE: ["<source>:3:1: note: share bshare is declared here", "  share bshare;", "  ^"]}


@pytest.mark.parametrize(("program", "mode", "refused"), [
    # an eviction order's key: numpy's numbers are numbers, its bool a bool (refused before, as no number);
    # a generator is no tuple
    (EVICT, "numpy", None),
    (EVICT, "generator", "failed in its eviction order 'bkey' (pool p): key(entry) returned an object of type "
                         "generator, not a tuple of numbers (at t=1)"),
    # a preemption policy's victim is a session: a number of numpy's or NaN is none, nor a generator of them
    (PREEMPT, "numpy", "failed in its preemption policy 'bvictim' (pool a): victim(pool, grower) returned an object "
                       "of type int64, which is not one of the candidates (sim.preempt_candidates(pool)), the "
                       "grower, or None (at t=2, session 2)"),
    (PREEMPT, "nan", "failed in its preemption policy 'bvictim' (pool a): victim(pool, grower) returned nan, which "
                     "is not one of the candidates (sim.preempt_candidates(pool)), the grower, or None (at t=2, session 2)"),
    (PREEMPT, "generator", "failed in its preemption policy 'bvictim' (pool a): victim(pool, grower) returned an "
                           "object of type generator, which is not one of the candidates "
                           "(sim.preempt_candidates(pool)), the grower, or None (at t=2, session 2)"),
    # a share policy's rates: a numpy array of float32 is numbers; a NaN is no rate; a generator no list
    (SHARE, "numpy", None),
    (SHARE, "nan", "failed in its share policy 'bshare': it returned the rate nan: a rate is a number at least 0 "
                   "(or inf) (at t=0)"),
    (SHARE, "generator", "failed in its share policy 'bshare': it returned an object of type generator for 2 "
                         "flow(s): one rate per flow (at t=0)"),
])
def test_what_a_policy_returns_outside_its_contract(pm, program, mode, refused):
    """docs/hooks.md: a key is a tuple of numbers, a victim a candidate, the grower or None, the rates one
    number at least 0 per flow (numpy's numbers taken as Python's). What is within is the documented
    answer's report; what is not, one message naming the plugin."""
    plugin = sys.modules["acme2_kinds"]
    prog = _compile(pm, program)
    if refused is None:
        plugin.MODE = mode
        got = encode_json(serq_sim.run(prog, pm=pm, seed=1))
        plugin.MODE = ""
        assert got == encode_json(serq_sim.run(prog, pm=pm, seed=1))
        return
    plugin.MODE = mode
    with pytest.raises(PluginError) as e:
        serq_sim.run(prog, pm=pm, seed=1)
    assert str(e.value).splitlines() == [f"error: plugin 'acme' (from serq-acme 0.3.0) {refused}", HINT,
                                         *DECLARED[program]]


def test_an_eviction_key_of_nan_evicts_as_the_scan_does(pm):
    """docs/hooks.md: a NaN key turns the pool over to the scan, which keeps the first entry it meets when
    no key is less than another (NaN compares false): the first released, session 0's, as lru does; under
    the documented key (the entry released last first) session 1's goes."""
    plugin = sys.modules["acme2_kinds"]
    prog = _compile(pm, EVICT)
    plugin.MODE = "nan"
    nan = {name: obs.mean for name, obs in serq_sim.run(prog, pm=pm, seed=1).result.observes.items()}
    plugin.MODE = ""
    mru = {name: obs.mean for name, obs in serq_sim.run(prog, pm=pm, seed=1).result.observes.items()}
    assert (nan, mru) == ({"hit0": 0.0, "hit1": 8.0}, {"hit0": 8.0, "hit1": 0.0})


UNCOUNTED = """pool a { cap 2; preempt by (admission); }
stage s : @uncounted;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold a (1) { run s (10); } }
  else { run s (0.5); run d (0.5); hold a (1) { grow a (1); run d (1); } }
}
run { horizon 100; }
"""


@pytest.mark.parametrize(("case", "why"), [
    # session 1's job of 0.5 completes at 0.5, session 0's (of 10) still there: present 2, one job at s
    ("done", "failed in Uncounted._done during the run: ContractError: sim.job_done(s, job): the stage's count "
             "present is 2 with 1 job(s) at it once this one completes: a completion counts its job out of present "
             "first (self.present -= 1; job.stage = None; sim.job_done(self, job)) at "),
    # at 1 session 1's grow preempts session 0 (the first admitted), whose job of 10 leaves s: present 1, no job
    ("detach", "failed in its stage s: its count present is 1 once detach(job) returned, with 0 job(s) at the "
               "stage: detach(job) counts the job out of present (self.present -= 1) (at t=1, session 0)"),
])
def test_a_kind_that_does_not_count_its_jobs_out_of_present(pm, case, why):
    """present is how many jobs the stage holds: the report's present (and utilisation by Little's law), and
    the program's queue(s), read it. A kind that never counted a completed job out reported a present of 49
    for an infinite server at load 1 (1 by Little's law), and nothing said so."""
    sys.modules["acme2_kinds"].Uncounted.case = case
    with pytest.raises(PluginError) as e:
        serq_sim.run(_compile(pm, UNCOUNTED), pm=pm, seed=1)
    first, hint, *note = str(e.value).splitlines()
    assert first.startswith(f"error: plugin 'acme' (from serq-acme 0.3.0) {why}") and hint == HINT, first
    assert note == ["<source>:2:1: note: stage s is declared here", "  stage s : @uncounted;", "  ^"]
    if case == "done":  # at the plugin's call
        lines = KINDS.splitlines()
        call = lines.index("        self.sim.job_done(self, job)", lines.index("class Uncounted(Forever):")) + 1
        assert first.endswith(f"acme2_kinds.py:{call} (at t=0.5, session 1)"), first


ASYNC = '''from serq import hookimpl
from serq_sim.policies import PreemptionPolicy
from serq_sim.stages import StageKind


class Kind(StageKind):
    HEADER attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        BODY

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None


class Victim(PreemptionPolicy):
    async def victim(self, pool, grower):
        return grower


def share(flows, caps):
    return [1.0] * len(flows)


async def share_later(flows, caps):
    return [1.0] * len(flows)


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("k", Kind)


@hookimpl
def serq_sim_register_preemption_policies(register):
    register("v", Victim)


@hookimpl
def serq_sim_register_share_policies(register):
    register("s", SHARE)
'''


@pytest.mark.parametrize(("header", "body", "share", "program", "why"), [
    ("async def", "pass", "share", "stage s : @k;\nworkload { arrive batch(1); }\nsession { run s (1); }\n"
     "run { horizon 10; }\n", "builds stage s wrongly: Kind.attach is a coroutine function (async def), whose call "
     "as attach(job) returns a coroutine, which nothing awaits, and runs none of its body"),
    ("def", "yield", "share", "stage s : @k;\nworkload { arrive batch(1); }\nsession { run s (1); }\n"
     "run { horizon 10; }\n", "builds stage s wrongly: Kind.attach is a generator function (it yields), whose call "
     "as attach(job) returns a generator, which nothing iterates, and runs none of its body"),
    ("def", "pass", "share", PREEMPT.replace("@bvictim", "@v"), "builds the preemption policy of pool a wrongly: "
     "Victim.victim is a coroutine function (async def), whose call as victim(pool, grower) returns a coroutine, "
     "which nothing awaits, and runs none of its body"),
    ("def", "pass", "share_later", SHARE.replace("bshare", "s"), "registers a share policy wrongly in "
     "serq_sim_register_share_policies: share policy 's': acme2_async.share_later is a coroutine function (async "
     "def), whose call as policy(flows, caps) returns a coroutine, which nothing awaits, and runs none of its body"),
])
def test_an_async_or_generator_method_of_the_contract_is_refused_when_built(tmp_path, monkeypatch, header, body, share,
                                                                         program, why):
    """serQ calls the contract's methods and uses what they return: an async def's call returns a coroutine
    nothing awaits, a generator function's a generator, and neither runs its body. An async attach was
    refused mid-run as 'attach(job) left job.stage None' (its body never set it), beside Python's 'coroutine
    ... was never awaited' warning; an async victim as 'returned an object of type coroutine'. Both are the
    plugin's mistake when the simulation is built (serq.plugins.call_problem)."""
    site = tmp_path / "async"
    info = site / "serq_acme-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme = acme2_async\n")
    source = ASYNC.replace("HEADER", header).replace("BODY", body).replace("SHARE", share)
    (site / "acme2_async.py").write_text(source)
    monkeypatch.syspath_prepend(str(site))
    try:
        with warnings.catch_warnings(), pytest.raises(PluginError) as e:
            warnings.simplefilter("error")  # (a coroutine never awaited: Python's RuntimeWarning)
            pm = get_plugin_manager()
            serq_sim.run(_compile(pm, program), pm=pm, seed=1)
        declared = {"builds stage": ["<source>:1:1: note: stage s is declared here", "  stage s : @k;", "  ^"],
                    "builds the p": ["<source>:1:1: note: pool a is declared here", "  pool a { cap 10; preempt @v; }",
                                     "  ^"]}.get(why[:12], [])
        assert str(e.value).splitlines() == [f"error: plugin 'acme' (from serq-acme 0.3.0) {why}", HINT, *declared]
    finally:
        sys.modules.pop("acme2_async", None)
