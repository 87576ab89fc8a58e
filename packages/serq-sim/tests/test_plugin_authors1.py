"""What a third party's stage kind or policy, written from docs/hooks.md and installed as a wheel leaves it (a
``*.dist-info`` with its ``entry_points.txt`` in a folder on ``sys.path``), may get wrong that the engine took
as it was: an ``attach(job)`` that leaves ``job.stage`` unset (the engine detaches a preempted session's
job through it, so the job stayed in the stage), a factory that returns one object for two stage or pool
members, or one built for an earlier run (the report counted two stages' jobs in one and listed it under
one name twice), a preemption policy whose ``self_stop`` is no truth value. Each is one message naming the
plugin (serq_sim.guards)."""

from __future__ import annotations

import sys

import pytest
import serq_frontend
import serq_sim
from eviction_cases import returning_sessions
from serq.errors import PluginError
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)

HINT = "(run without it: SERQ_DISABLED_PLUGINS=acme, or uninstall serq-acme)"

KIND = '''from serq import hookimpl
from serq_sim.stages import StageKind


class Kind(StageKind):
    """An infinite server: every job is served at once, for its work."""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        job.started = self.sim.now
        self.sim.at(self.sim.now + job.work, self._done, job)

    def _done(self, job):
        if job.stage is not self:
            return
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
'''


def _install(site, source: str) -> None:
    info = site / "serq_acme-0.3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme = acme1_sim\n")
    (site / "acme1_sim.py").write_text(source)


@pytest.fixture
def install(tmp_path, monkeypatch):
    """Install the plugin module ``source`` as serq-acme's entry point ``acme``; a plugin manager of it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)

    def installed(source: str):
        _install(tmp_path, source)
        return get_plugin_manager()

    yield installed
    for name in set(sys.modules) - before:
        if name.startswith("acme1_"):
            del sys.modules[name]


def _run(pm, source: str):
    return serq_sim.run(serq_frontend.compile(source=source, pm=pm), pm=pm, seed=1)


def _failure(pm, source: str) -> list[str]:
    with pytest.raises(PluginError) as e:
        _run(pm, source)
    return str(e.value).splitlines()


REGISTER = '''

@hookimpl
def serq_sim_register_stage_kinds(register):
    register("k", {factory})
'''

PREEMPTED = """
pool a { cap 4; preempt lifo; }
stage s : @k;
stage d : delay;
workload { arrive batch(2); }
session {
  set t0 = now;
  branch (serial == 0) {
    hold a (2) { run s (3); grow a (2); run d (1); }
    observe r0 = now - t0;
  } else {
    run d (1);
    hold a (2) { run s (5); }
    observe r1 = now - t0;
  }
}
run { horizon 100; }
"""


def test_the_kind_runs_as_fifo_with_a_server_per_job(install):
    """Session 0 holds 2 from 0 and runs 3 on s; session 1 holds 2 from 1 and runs 5. At 3 session 0 grows
    by 2: 6 > 4, and lifo preempts session 1 (admitted last), whose job leaves s (detach); it is admitted
    again when session 0 ends its hold at 4 and runs its 5 anew: r0 = 4, r1 = 4 + 5 = 9, as under fifo(2)."""
    pm = install(KIND + REGISTER.format(factory="Kind"))
    for program in (PREEMPTED, PREEMPTED.replace("@k", "fifo(2)")):
        report = _run(pm, program)
        assert {k: o.mean for k, o in report.result.observes.items()} == {"r0": 4.0, "r1": 9.0}


def test_an_attach_that_leaves_job_stage_unset_is_named(install):
    """Before, the run went on: its events, which check job.stage is self as the contract asks, completed
    nothing, and the run ended with the warning that 2 sessions wait for ever at a stage that will never
    complete them. (A kind that completes without that check had the job of session 1, preempted at 3 and
    never detached, since the engine reaches a job's stage through job.stage, refused at its completion as a
    job that had left, which pointed at the completion rather than the attach.)"""
    source = KIND.replace("        job.stage = self\n", "", 1) + REGISTER.format(factory="Kind")
    assert _failure(install(source), PREEMPTED) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) failed in its stage s: attach(job) left job.stage None, "
        "not the stage itself: a kind sets job.stage = self in attach (the engine detaches a preempted or ended "
        "session's job through it) (at t=0, session 0)", HINT, "<source>:3:1: note: stage s is declared here",
        "  stage s : @k;", "  ^"]


def test_an_attach_that_completes_the_job_at_once_is_no_fault(install):
    """A job of no time: completed in attach (job_done), its stage left None. Both sessions end at 0."""
    source = KIND + '''

class AtOnce(Kind):
    def attach(self, job):
        job.started = self.sim.now
        self.sim.job_done(self, job)
''' + REGISTER.format(factory="AtOnce")
    report = _run(install(source), "stage s : @k;\nworkload { arrive batch(2); }\n"
                                   "session { set t0 = now; run s (3); observe r = now - t0; }\n"
                                   "run { horizon 10; }\n")
    assert (report.result.observes["r"].count, report.result.observes["r"].mean) == (2, 0.0)
    assert report.result.stages[0].completions == 2


FAMILY = """
stage s[2] : @k;
workload { arrive batch(4); }
session { set t0 = now; run s[serial % 2] (1 + serial); observe r = now - t0; }
run { horizon 100; }
"""


def test_one_object_for_two_members_is_named(install):
    """Before, the run went on: the report listed s[0] twice, each with the 4 completions of both members."""
    source = KIND + '''

made = {}


def factory(sim, node, member, flat):
    if node.name not in made:
        made[node.name] = Kind(sim, node, member, flat)
    return made[node.name]
''' + REGISTER.format(factory="factory")
    assert _failure(install(source), FAMILY) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) builds stage s[1] wrongly: its factory returned the object "
        "it built for stage s[0]: a factory builds a new StageKind for every member of every stage of its kind",
        HINT, "<source>:2:1: note: stage s[1] is declared here", "  stage s[2] : @k;", "  ^"]


def test_an_object_of_an_earlier_run_is_named(install):
    source = KIND + '''

made = {}


def factory(sim, node, member, flat):
    key = (node.name, member)
    if key not in made:
        made[key] = Kind(sim, node, member, flat)
    return made[key]
''' + REGISTER.format(factory="factory")
    pm = install(source)
    first = _run(pm, FAMILY)
    assert [s.completions for s in first.result.stages] == [2, 2]
    assert _failure(pm, FAMILY) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) builds stage s[0] wrongly: its factory returned an object "
        "built for another simulation: a factory builds a new StageKind for every member of every stage of its "
        "kind, in every run", HINT, "<source>:2:1: note: stage s[0] is declared here",
        "  stage s[2] : @k;", "  ^"]


ORDER = '''from serq import hookimpl
from serq_sim.policies import EvictionOrder


class MostRecent(EvictionOrder):
    fixed_key = True
    needs_snapshot = False

    def key(self, entry):
        return (-entry.seq,)


one = []


def factory(sim, pool, node):
    if not one:
        one.append(MostRecent(sim, pool, node))
    return one[0]


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("mru", factory)
'''


def test_one_eviction_order_for_two_pool_members_is_named(install):
    """Before, the order kept both pools' entries in one sorted list, and p[1]'s eviction at 5 was refused
    as picking an entry not cached there, which did not say why."""
    program = """
pool p[2] { cap 16; evict @mru; }
stage d : delay;
workload { arrive batch(6); }
session {
  set m = serial % 2;
  branch (serial < 4) {
    run d (serial);
    hold p[m] (8) { run d (1); } cache (8);
  } else {
    run d (5);
    hold p[m] (16) { run d (1); }
  }
}
run { horizon 100; }
"""
    assert _failure(install(ORDER), program) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) builds the eviction order of pool p[1] wrongly: its factory "
        "returned the object it built for pool p[0]: a factory builds a new EvictionOrder for every member of "
        "every pool that names it", HINT, "<source>:2:1: note: pool p[1] is declared here",
        "  pool p[2] { cap 16; evict @mru; }", "  ^"]


def test_an_eviction_order_of_an_earlier_run_is_named(install):
    """The factory's one order, built in the first run, given to the second: as a stage kind's (above)."""
    program = """
pool p { cap 16; evict @mru; }
stage d : delay;
workload { arrive batch(2); }
session { run d (serial); hold p (8) { run d (1); } cache (8); }
run { horizon 100; }
"""
    pm = install(ORDER)
    assert _run(pm, program).result.pools[0].admissions == 2
    assert _failure(pm, program) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) builds the eviction order of pool p wrongly: its factory "
        "returned an object built for another simulation: a factory builds a new EvictionOrder for every member "
        "of every pool that names it, in every run", HINT, "<source>:2:1: note: pool p is declared here",
        "  pool p { cap 16; evict @mru; }", "  ^"]


POLICY = '''from serq import hookimpl
from serq_sim.policies import PreemptionPolicy


class Last(PreemptionPolicy):
    requeue = "tail"
    self_stop = {value}

    def victim(self, pool, grower):
        candidates = self.sim.preempt_candidates(pool)
        return candidates[-1][0] if candidates else None


@hookimpl
def serq_sim_register_preemption_policies(register):
    register("last", Last)
'''

# PREEMPTED with the plugin's policy choosing the victim, and every run on the delay
GROW = PREEMPTED.replace("preempt lifo", "preempt @last").replace("stage s : @k;\n", "").replace("run s (", "run d (")


@pytest.mark.parametrize(("value", "shown"), [("'sometimes'", "'sometimes'"), ("0", "0"), ("None", "None")])
def test_a_self_stop_that_is_no_truth_value_is_named(install, value, shown):
    """self_stop is read as a truth value where a grower on a step stage preempts itself: 'sometimes' (or
    'no') stopped the serving as True does, without a word."""
    assert _failure(install(POLICY.format(value=value)), GROW) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) builds the preemption policy of pool a wrongly: self_stop is "
        f"{shown}, not True or False", HINT, "<source>:2:1: note: pool a is declared here",
        "  pool a { cap 4; preempt @last; }", "  ^"]


def test_a_self_stop_of_false_is_taken(install):
    """The same preemption as lifo's (the last admitted, session 1, at 3): r0 = 4, r1 = 4 + 5."""
    report = _run(install(POLICY.format(value="False")), GROW)
    assert {k: o.mean for k, o in report.result.observes.items()} == {"r0": 4.0, "r1": 9.0}


SPY = '''from serq import hookimpl

calls = []


def spy(flows, caps):
    calls.append(([list(f) for f in flows], list(caps)))
    return [min(caps[k] for k in f) / len(flows) for f in flows]


@hookimpl
def serq_sim_register_share_policies(register):
    register("spy", spy)
'''


def test_a_share_policy_numbers_the_stages_of_its_call(install):
    """docs/hooks.md: the stage numbers are the call's own, the flows' stages in the order they name them,
    and caps has theirs alone; not the program's order (d, f[0], f[1], a, b[0], b[1])."""
    pm = install(SPY)
    _run(pm, "stage d : delay;\nstage f[2] : fifo;\nstage a : ps(0.5);\nstage b[2] : ps(2);\nshare spy;\n"
             "workload { arrive batch(1); }\nsession { run b[1], a (1); }\nrun { horizon 100; }\n")
    calls = sys.modules["acme1_sim"].calls
    assert calls[0] == ([[0, 1]], [2.0, 0.5])


def test_a_refusal_of_the_programs_arguments_is_put_at_its_declaration(install, tmp_path):
    """docs/hooks.md: a plugin refusing its arguments raises SimError naming the stage; the message was
    ``error: stage s: …`` alone, where every other mistake in a program is at its line and column."""
    source = KIND + '''

class Strict(Kind):
    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        if node.kind.params != [1.0]:
            from serq_sim import SimError

            raise SimError(f"stage {node.name}: @k takes 1, not {node.kind.params!r}")
''' + REGISTER.format(factory="Strict")
    pm = install(source)
    program = tmp_path / "strict.sq"
    program.write_text("stage d : delay;\nstage s : @k(2);\nworkload { arrive batch(1); }\n"
                       "session { run s (1); }\nrun { horizon 10; }\n")
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(program, pm=pm), pm=pm)
    assert str(e.value).splitlines() == [f"{program}:2:1: error: stage s: @k takes 1, not [2.0]",
                                         "  stage s : @k(2);", "  ^"]
    program.write_text(program.read_text().replace("@k(2)", "@k(1)"))
    assert serq_sim.run(serq_frontend.compile(program, pm=pm), pm=pm).result.stages[1].completions == 1


LIMITED = KIND + '''
from serq_sim import SimError


class Limited(Kind):
    """Refuses a job of more than 1 when it arrives, and wears out at its second completion."""

    done = 0

    def attach(self, job):
        if job.work > 1:
            raise SimError(f"stage {self.name}: a job of {job.work} is over its limit 1")
        super().attach(job)

    def _done(self, job):
        self.done += 1
        if self.done == 2:
            raise SimError(f"stage {self.name}: worn out")
        super()._done(job)
''' + REGISTER.format(factory="Limited")


@pytest.mark.parametrize(("works", "expected"), [
    ("3 - 2 * serial", ["{p}:3:25: error: at t=0, session 0: stage s: a job of 3.0 is over its limit 1",
                        "  session {{ set t0 = now; run s (3 - 2 * serial); observe r = now - t0; }}",
                        "                          ^"]),
    ("1", ["{p}:1:1: error: at t=1: stage s: worn out", "  stage s : @k;", "  ^"]),
])
def test_a_refusal_in_the_run_is_placed_as_the_runs_errors_are(install, tmp_path, works, expected):
    """A SimError a plugin's kind raises in the run was its message alone, 'error: stage s: …', where the run's
    own errors say where, when and which session: at the run statement of the job its attach refuses, and
    at the stage's declaration with the time for one raised in its own event (it was 'FILE: error: at t=1: …',
    no line)."""
    pm = install(LIMITED)
    program = tmp_path / "limited.sq"
    program.write_text("stage s : @k;\nworkload { arrive batch(2); }\n"
                       f"session {{ set t0 = now; run s ({works}); observe r = now - t0; }}\nrun {{ horizon 10; }}\n")
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(program, pm=pm), pm=pm)
    assert str(e.value).splitlines() == [line.format(p=program) for line in expected]


NO_SUPER = '''from serq import hookimpl
from serq_sim.policies import EvictionOrder, PreemptionPolicy
from serq_sim.stages import StageKind


class Order(EvictionOrder):
    fixed_key = True

    def __init__(self, sim, pool, node):
        self.sim = sim  # (no super().__init__(sim, pool, node))

    def key(self, entry):
        return (-entry.seq,)


class Policy(PreemptionPolicy):
    def __init__(self, sim, pool, node):
        self.limit = 1

    def victim(self, pool, grower):
        return None


class Kind(StageKind):
    def __init__(self, sim, node, member, flat):
        self.sim = sim

    def attach(self, job):
        pass

    def detach(self, job):
        pass


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("order", Order)


@hookimpl
def serq_sim_register_preemption_policies(register):
    register("policy", Policy)


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("k", Kind)
'''


@pytest.mark.parametrize(("program", "what", "attribute", "base", "call"), [
    ("pool p { cap 4; evict @order; }", "the eviction order of pool p", "pool", "EvictionOrder",
     "super().__init__(sim, pool, node)"),
    ("pool p { cap 4; preempt @policy; }", "the preemption policy of pool p", "sim", "PreemptionPolicy",
     "super().__init__(sim, pool, node)"),
    ("stage s : @k;", "stage s", "node", "StageKind", "super().__init__(sim, node, member, flat)"),
    # a family's member is named as the member (report.member_label's words), as the other faults of a build are
    ("pool p[2] { cap 4; evict @order; }", "the eviction order of pool p[0]", "pool", "EvictionOrder",
     "super().__init__(sim, pool, node)"),
    ("pool p[2] { cap 4; preempt @policy; }", "the preemption policy of pool p[0]", "sim", "PreemptionPolicy",
     "super().__init__(sim, pool, node)"),
    ("stage s[2] : @k;", "stage s[0]", "node", "StageKind", "super().__init__(sim, node, member, flat)"),
])
def test_an_init_that_does_not_call_its_bases_is_named(install, program, what, attribute, base, call):
    """The order's was a traceback (serQ's guard read order.pool first: AttributeError, no frame of the
    plugin's); the policy and the kind were named only at their first use, by an attribute error in the
    middle of the run."""
    pm = install(NO_SUPER)
    source = (f"{program}\nstage d : delay;\nworkload {{ arrive batch(1); }}\n"
              "session { run d (1); }\nrun { horizon 10; }\n")
    cls = {"EvictionOrder": "Order", "PreemptionPolicy": "Policy", "StageKind": "Kind"}[base]
    assert _failure(pm, source) == [
        f"error: plugin 'acme' (from serq-acme 0.3.0) builds {what} wrongly: its {cls} has no attribute "
        f"{attribute!r}, which {base}.__init__ sets: its __init__ does not call {call}", HINT, f"<source>:1:1: note: {what.rpartition(' of ')[2]} is declared here",
        f"  {program}", "  ^"]


ABSTRACT = '''from serq import hookimpl
from serq_sim.stages import StageKind


class NoAttach(StageKind):
    def detach(self, job):
        pass


class Starting(StageKind):
    wants_start = True

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self

    def idle(self):
        return True


class NoDetach(StageKind):
    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        job.started = self.sim.now
        self.sim.at(self.sim.now + job.work, self._done, job)

    def _done(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("noattach", NoAttach)
    register("starting", Starting)
    register("nodetach", NoDetach)
'''


@pytest.mark.parametrize(("kind", "cls", "method"), [("noattach", "NoAttach", "attach(job)"),
                                                     ("starting", "Starting", "try_start()")])
def test_a_kind_without_a_method_every_run_calls_is_named_when_built(install, kind, cls, method):
    """Both were named mid-run, by the base's bare NotImplementedError: 'failed in Starting.try_start
    (inherited from StageKind.try_start) during the run: NotImplementedError: at …/stages.py:268'."""
    source = f"stage s : @{kind};\nworkload {{ arrive batch(1); }}\nsession {{ run s (1); }}\nrun {{ horizon 10; }}\n"
    assert _failure(install(ABSTRACT), source) == [
        f"error: plugin 'acme' (from serq-acme 0.3.0) builds stage s wrongly: its {cls} does not implement {method}, "
        f"which the engine calls (the base class's StageKind.{method.partition('(')[0]} raises NotImplementedError)",
        HINT, "<source>:1:1: note: stage s is declared here", f"  stage s : @{kind};", "  ^"]


def test_a_kind_without_detach_runs_a_program_that_never_detaches(install):
    """detach(job) is called only when a session leaves the stage early (a preemption): a kind without it
    runs a program without one. Two jobs of 1 and 2 from 0: completions at 1 and 2."""
    source = ("stage s : @nodetach;\nworkload { arrive batch(2); }\n"
              "session { set t0 = now; run s (1 + serial); observe r = now - t0; }\nrun { horizon 10; }\n")
    report = _run(install(ABSTRACT), source)
    assert (report.result.observes["r"].count, report.result.observes["r"].mean) == (2, 1.5)


def test_a_kind_that_marks_itself_for_ever_names_its_plugin(install):
    """The no-progress guard of the settle named the stage and its kind ('stage s (@k)'), not the plugin to
    run without, as every other fault of a plugin's kind is."""
    source = KIND + '''

class Restless(Kind):
    def attach(self, job):
        super().attach(job)
        self.mark()

    def settle(self):
        self.mark()
''' + REGISTER.format(factory="Restless")
    assert _failure(install(source), "stage s : @k;\nworkload { arrive batch(1); }\nsession { run s (1); }\n"
                                     "run { horizon 10; }\n") == [
        "error: plugin 'acme' (from serq-acme 0.3.0) failed in its stage s: no progress: more than 1000000 settles "
        "at one instant without simulated time passing (a stage kind that marks itself again in every settle: "
        "stage s (@k)) (at t=0)", HINT, "<source>:1:1: note: stage s is declared here", "  stage s : @k;", "  ^"]


BOOL_KEY = '''from serq import hookimpl
from serq_sim.policies import EvictionOrder


class ByParity(EvictionOrder):
    fixed_key = True
    needs_snapshot = False
    odd_first = {odd_first}

    def key(self, entry):
        return ((entry.seq % 2 == 1) != self.odd_first, entry.seq)


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("parity", ByParity)
'''

CACHED_TWICE = returning_sessions("@parity", 16, 8, 8)


@pytest.mark.parametrize(("odd_first", "hits"), [(True, {"hit0": 8.0, "hit1": 0.0}),
                                                 (False, {"hit0": 0.0, "hit1": 8.0})])
def test_a_key_of_bools_ranks_false_first(install, odd_first, hits):
    """Session 0's entry is released first (seq 0), session 1's second (seq 1); at 3 one of them goes. A key
    (seq is even, seq) ranks session 1's (False, 1) first: it goes, and session 0 hits its 8 at 11. Before, a
    bool in a key was refused: 'key(entry) returned (True, 0), not a tuple of numbers'."""
    report = _run(install(BOOL_KEY.format(odd_first=odd_first)), CACHED_TWICE)
    assert {k: o.mean for k, o in report.result.observes.items()} == hits


def test_job_done_given_its_arguments_swapped_is_named_so(install):
    """sim.job_done(job, self) was "AttributeError: 'Swapped' object has no attribute 'owner'" at the call."""
    source = KIND + '''

class Swapped(Kind):
    def _done(self, job):
        if job.stage is not self:
            return
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(job, self)
''' + REGISTER.format(factory="Swapped")
    [first, hint, note, quoted, caret] = _failure(install(source), "stage s : @k;\nworkload { arrive batch(1); }\n"
                                                    "session { run s (1); }\nrun { horizon 10; }\n")
    assert first.startswith("error: plugin 'acme' (from serq-acme 0.3.0) failed in Swapped._done during the run: "
                            "ContractError: sim.job_done(stage, job) was given an object of type Swapped for its "
                            "job, not a serq_sim.stages.Job: the stage and the job swapped at "), first
    line = source.splitlines().index("        self.sim.job_done(job, self)") + 1  # the plugin's call
    # what it gave for the stage is the job; the stage whose method asked is found on the traceback (round 30)
    assert first.endswith(f"acme1_sim.py:{line} (at t=1, session 0)") and hint == HINT, first
    assert [note, quoted, caret] == ["<source>:1:1: note: stage s is declared here", "  stage s : @k;", "  ^"]


def test_sessions_a_plugins_kind_never_completes_are_told_at_its_stage(install):
    """A kind that schedules no completion: with no event left, sessions 0 and 1 wait for ever at s. The
    warning said '2 at a stage that will never complete them', naming neither the stage nor the plugin; the
    session of the delay (2) ends at 1."""
    source = KIND + '''

class Forgetful(Kind):
    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
''' + REGISTER.format(factory="Forgetful")
    report = _run(install(source), "stage s : @k;\nstage d : delay;\nworkload { arrive batch(3); }\n"
                                   "session { branch (serial == 2) { run d (1); } else { run s (1); } }\n"
                                   "run { horizon inf; }\n")
    assert [n for n in report.result.notes if "wait for ever" in n] == [
        "warning: 2 sessions wait for ever at the end of the run (no event is left that could wake them): 2 at "
        "stage s, whose kind @k of the plugin acme (serq-acme 0.3.0) will never complete them (sessions 0, 1, in the "
        "run at <source>:4:54)"]  # (the run s (1) of the session's line 4)
    assert report.result.stages[1].completions == 1
