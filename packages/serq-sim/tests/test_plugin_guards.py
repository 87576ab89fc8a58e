"""A third party's stage kind, eviction order, preemption policy or share policy that breaks its contract
(serq_sim.guards, docs/hooks.md "When a plugin misbehaves"): one PluginError naming the plugin, what it
registered and what it did, instead of a traceback from deep in the engine, a clock that goes back, a pool
whose units are counted twice, or a run that never ends.

Each case was, before the checks: an AttributeError or a KeyError in the engine (a victim or a pick that
is no session or entry, a stale entry), a TypeError in a sort (a key of None), silently wrong figures (a
key of strings taken, a share policy's missing rates leaving flows at their old rate, a negative or NaN
rate, an event in the past giving a service of -5, a job completed twice counted twice, a requeue of
'middle' taken as 'head'), or a run that hung (a stage kind that marks itself in every settle)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.policies import EvictionOrder, PreemptionPolicy
from serq_sim.stages import StageKind


class Odd(StageKind):
    """A stage kind that does, at every attach, what its case says."""

    case = ""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        case = self.case
        if case == "marks itself for ever":
            self.mark()
        elif case == "an event in the past":
            self.sim.at(self.sim.now - 5, self.finish, job)
        elif case == "an event at NaN":
            self.sim.at(float("nan"), self.finish, job)
        elif case == "completes twice":
            self.sim.at(self.sim.now + 1, self.finish, job)
            self.sim.at(self.sim.now + 1, self.finish, job)
        else:
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

    def settle(self):
        if self.case == "marks itself for ever":
            self.mark()


class Victims(PreemptionPolicy):
    requeue = "tail"
    case = ""

    def victim(self, pool, grower):
        if self.case == "a victim that is no session":
            return object()
        if self.case == "a victim that holds nothing there":
            return self.outsider
        c = self.sim.preempt_candidates(pool)
        return c[0][0] if c else None


class Keys(EvictionOrder):
    case = ""
    stale = None

    def key(self, entry):
        return {"a key of None": None, "a key of text": "abc", "a key of a list": [entry.seq]}.get(
            self.case, (entry.seq,))

    def pick(self, pool):
        got = super().pick(pool)
        if self.case == "a pick of no entry":
            return "the oldest"
        if self.case == "a pick of an entry evicted before":
            if self.stale is None:
                self.stale = got
            return self.stale
        return got


class Hostile:
    """The plugin: what it registers misbehaves as ``case`` says."""

    def __init__(self, case: str):
        self.case = case

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        case = self.case

        def odd(sim, node, member, flat):
            if case == "a factory that builds no stage":
                return 42
            stage = Odd(sim, node, member, flat)
            stage.case = case
            return stage

        register("odd", odd)

    @hookimpl
    def serq_sim_register_preemption_policies(self, register):
        case = self.case

        def victims(sim, pool, node):
            policy = Victims(sim, pool, node)
            policy.case = case
            if case == "a requeue of 'middle'":
                policy.requeue = "middle"
            return policy

        register("victims", victims)

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        case = self.case

        def keys(sim, pool, node):
            order = Keys(sim, pool, node)
            order.case = case
            return order

        register("keys", keys)

    @hookimpl
    def serq_sim_register_share_policies(self, register):
        case = self.case

        def share(flows, caps):
            return {"one rate short": [1.0] * (len(flows) - 1), "a NaN rate": [float("nan")] * len(flows),
                    "a negative rate": [-1.0] * len(flows), "no rates": None}.get(case, [0.5] * len(flows))

        register("odd", share)


HEAD = "error: plugin 'test_plugin_guards.Hostile' "


def run(case: str, source: str):
    pm = get_plugin_manager(plugins=[Hostile(case)])
    return serq_sim.run(serq_frontend.compile(source=source, pm=pm), pm=pm)


def refused(case: str, source: str) -> str:
    with pytest.raises(PluginError) as e:
        run(case, source)
    msg = str(e.value)
    head, _, hint = msg.partition("\n")
    assert head.replace("packages.serq-sim.tests.", "").startswith(HEAD), msg
    assert hint.startswith(
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"), msg
    return head


STAGE = """stage svc : @odd;
workload { arrive batch(2); }
session { set t0 = now; run svc (1); observe t = now - t0; }
run { horizon 100; }
"""


def test_the_stage_kind_as_it_should_be():
    r = run("", STAGE)
    assert r.observe("t").values.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(("case", "what"), [
    ("an event in the past", "failed in Odd.attach during the run: ContractError: sim.at(-5.0, …): an event "
                             "before now (t=0): the clock cannot go back at "),
    ("an event at NaN", "failed in Odd.attach during the run: ContractError: sim.at(nan, …): NaN is not a time at "),
    ("completes twice", "failed in Odd.finish during the run: ContractError: sim.job_done(svc, job): the job of "
                        "session 0 is not its session's current run (completed twice, or after it left the stage"),
    ("a factory that builds no stage", "builds stage svc wrongly: its factory returned 42, not a "
                                       "serq_sim.stages.StageKind"),
])
def test_a_stage_kind_that_breaks_its_contract(case, what):
    assert what in refused(case, STAGE)


def test_a_stage_kind_that_marks_itself_for_ever_is_stopped_by_the_no_progress_guard():
    pm = get_plugin_manager(plugins=[Hostile("marks itself for ever")])
    # the plugin is named, as every other fault of its kind is (test_plugin_authors1.py)
    with pytest.raises(PluginError, match=r"failed in its stage svc: no progress: more than 1000000 settles at one "
                       r"instant without simulated time passing \(a stage kind that marks itself again in every "
                       r"settle: stage svc \(@odd\)\) \(at t=0\)"):
        serq_sim.run(serq_frontend.compile(source=STAGE, pm=pm), pm=pm)


PREEMPT = """pool a { cap 10; preempt @victims; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold a (4) { run d (2); grow a (4); run d (1); }
  } else {
    branch (serial == 1) { run d (1); hold a (4) { run d (10); } } else { run d (50); hold a (1) { run d (1); } }
  }
}
run { horizon 100; }
"""


def test_a_preemption_policy_as_it_should_be():
    assert run("", PREEMPT).pool("a").preemptions == 2


@pytest.mark.parametrize(("case", "what"), [
    ("a victim that is no session", "returned an object of type object, which is not one of the candidates"),
    ("a requeue of 'middle'", "builds the preemption policy of pool a wrongly: requeue is 'middle', not 'head' "
                              "or 'tail'"),
])
def test_a_preemption_policy_that_breaks_its_contract(case, what):
    head = refused(case, PREEMPT)
    assert what in head
    if "victim" in case:
        assert "failed in its preemption policy 'victims' (pool a): victim(pool, grower) " in head
        assert head.endswith("(sim.preempt_candidates(pool)), the grower, or None (at t=2, session 0)")


def test_a_victim_that_holds_nothing_of_the_pool_is_refused():
    class Outsider(Hostile):
        @hookimpl
        def serq_sim_register_preemption_policies(self, register):
            def victims(sim, pool, node):
                policy = Victims(sim, pool, node)
                policy.case = "a victim that holds nothing there"
                policy.outsider = sim  # filled in below: a live session that holds nothing of the pool

                def pick(pool, grower):
                    outside = [s for s in sim_sessions(sim) if s is not grower and not s.holds]
                    policy.outsider = outside[0]
                    return Victims.victim(policy, pool, grower)

                policy.victim = pick
                return policy

            register("victims", victims)

    def sim_sessions(sim):
        # the sessions live at this instant: the third is in its `run d (50)`, holding nothing
        return [st_job.owner for st in sim.stages for st_job in getattr(st, "jobs", [])] or \
            [j.owner for _t, _s, _cb, j in sim.heap if getattr(j, "owner", None) is not None]

    pm = get_plugin_manager(plugins=[Outsider("")])
    with pytest.raises(PluginError, match=r"returned session 2, which is not one of the candidates"):
        serq_sim.run(serq_frontend.compile(source=PREEMPT, pm=pm), pm=pm)


EVICT = """pool p { cap 24; evict @keys; }
stage d : delay;
workload { arrive batch(4); }
session {
  hold p (8) { run d (serial); } cache (8);
  run d (10);
  hold p (16) { run d (1); }
}
run { horizon 100; }
"""


def test_an_eviction_order_as_it_should_be():
    assert run("", EVICT).pool("p").evicted_entries == 3


@pytest.mark.parametrize(("case", "what"), [
    ("a key of None", "key(entry) returned None, not a tuple of numbers (at t=0)"),
    ("a key of text", "key(entry) returned 'abc', not a tuple of numbers (at t=0)"),
    ("a key of a list", "key(entry) returned [0], not a tuple of numbers (at t=0)"),
    ("a pick of no entry", "pick(pool) returned 'the oldest', not an entry of the pool (at t=0)"),
    ("a pick of an entry evicted before", "pick(pool) returned an entry that is not cached in the pool now "
                                          "(evicted or consumed before) (at t=10)"),
])
def test_an_eviction_order_that_breaks_its_contract(case, what):
    head = refused(case, EVICT)
    assert head.endswith("failed in its eviction order 'keys' (pool p): " + what), head


SHARE = """stage a : ps(1);
stage b : ps(2);
share odd;
workload { arrive batch(2); }
session { set t0 = now; run a, b (1); observe t = now - t0; }
run { horizon 100; }
"""


def test_a_share_policy_as_it_should_be():
    assert run("", SHARE).observe("t").values.tolist() == [2.0, 2.0]


@pytest.mark.parametrize(("case", "what"), [
    ("one rate short", "it returned 1 rate(s) for 2 flow(s): one rate per flow (at t=0)"),
    ("no rates", "it returned None for 2 flow(s): one rate per flow (at t=0)"),
    ("a NaN rate", "it returned the rate nan: a rate is a number at least 0 (or inf) (at t=0)"),
    ("a negative rate", "it returned the rate -1.0: a rate is a number at least 0 (or inf) (at t=0)"),
])
def test_a_share_policy_that_breaks_its_contract(case, what):
    head = refused(case, SHARE)
    assert head.endswith("failed in its share policy 'odd': " + what), head


def test_an_exception_in_a_plugins_code_names_it_and_keeps_the_exception_as_its_cause():
    class Raising(Hostile):
        @hookimpl
        def serq_sim_register_share_policies(self, register):
            def share(flows, caps):
                raise ZeroDivisionError("the share broke")

            register("odd", share)

    pm = get_plugin_manager(plugins=[Raising("")])
    with pytest.raises(PluginError) as e:
        serq_sim.run(serq_frontend.compile(source=SHARE, pm=pm), pm=pm)
    assert "Raising' failed in test_an_exception_in_a_plugins_code_names_it_and_keeps_the_exception_as_its_cause" \
           ".<locals>.Raising.serq_sim_register_share_policies.<locals>.share during the run: ZeroDivisionError: " \
           "the share broke at " in str(e.value)
    assert isinstance(e.value.__cause__, ZeroDivisionError)
