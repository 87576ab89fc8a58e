"""A third party's stage kind that changes the session of the job it is handed (serq_sim.guards._session_problem;
docs/hooks.md, "When a plugin misbehaves").

A kind reads ``job.owner`` and the session's attributes ``job.owner.attrs``. One that set an attribute to what
is no number (``'abc'``, None) ended the run in a TypeError of the session's compiled code (``math.fmod``
of its ``x % 3``), one that emptied the list in an IndexError of the pool's ``queue by`` key, one that set the
session's ``serial`` to a string in a TypeError: a Python traceback of serQ's internals that named no plugin,
from ``serq run`` too. One that set ``job.owner = None`` had the job completed as a job of no session (a
spill's write): its session never went on, and the run reported 38 completions at the stage, none at the
next, with no word. Each is now the plugin's failure, naming it, the stage, the time and the session, on both
tiers; a number of another type (an int) is taken as the float the engine holds, and the run goes on. So for
an eviction order's ``key(entry)`` that changes ``entry.owner.attrs`` and a preemption policy's ``victim(pool,
grower)`` that changes the grower's (the same TypeError before)."""

from __future__ import annotations

import sys

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.policies import EvictionOrder, PreemptionPolicy
from serq_sim.stages import StageKind

pytestmark = pytest.mark.timeout(60)


class Changing(StageKind):
    """One unit of time at every job; what it does to the job's session is ``case``, at ``when``."""

    case = ""
    when = "attach"

    def _change(self, job):
        s = job.owner
        x = [a.name for a in self.sim.program.attributes].index("x")
        case = self.case
        if case == "an attribute of text":
            s.attrs[x] = "abc"
        elif case == "an attribute of None":
            s.attrs[x] = None
        elif case == "an attribute of an int":
            s.attrs[x] = 7
        elif case == "an attribute past the largest double":
            s.attrs[x] = 10 ** 400
        elif case == "the attributes emptied":
            del s.attrs[:]
        elif case == "the attributes replaced":
            s.attrs = list(s.attrs)
        elif case == "the serial of text":
            s.serial = "x"
        elif case == "the owner taken":
            job.owner = None

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        if self.when == "attach":
            self._change(job)
        self.sim.at(self.sim.now + 1, self.finish, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None

    def finish(self, job):
        if job.stage is not self:
            return
        if self.when == "finish":
            self._change(job)
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)


class Plugin:
    def __init__(self, case: str, when: str):
        self.case, self.when = case, when

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        def build(sim, node, member, flat):
            st = Changing(sim, node, member, flat)
            st.case, st.when = self.case, self.when
            return st

        register("changing", build)


#: the run at svc is line 15, the stage declared at line 5; x % 3 and the queue by key read x after it
PROGRAM = """pool p {
  cap 3;
  queue by (x);
}
stage svc : @changing;
stage d : fifo;

workload {
  arrive poisson(2);
}

session {
  set x = serial;
  set t0 = now;
  run svc (1);
  hold p (1) {
    run d (x % 3 + 0.1);
  }
  observe t = now - t0;
}

run { horizon 20; seed 1; }
"""

RAN = "the job completed (sim.job_done(svc, job)) after it "


def _run(case: str, when: str, tier: str, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    pm = get_plugin_manager(plugins=[Plugin(case, when)])
    return serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)


def _refused(case: str, when: str, monkeypatch) -> str:
    out = []
    for tier in ("", "general"):
        with pytest.raises(PluginError) as e:
            _run(case, when, tier, monkeypatch)
        out.append(str(e.value))
    assert out[0] == out[1]
    head, _, rest = out[0].partition(" failed in its stage svc: ")
    assert head.startswith("error: plugin '") and head.endswith(".Plugin'"), out[0]
    lines = rest.splitlines()
    assert lines[1:] == [
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process "
        "registers it)",
        "<source>:5:1: note: stage svc is declared here",
        "  stage svc : @changing;",
        "  ^"], out[0]
    return lines[0]


@pytest.mark.parametrize(("case", "what"), [
    ("an attribute of text", "set the attribute x of session 0 to 'abc', not a number: a kind reads "
                             "job.owner.attrs, and may set one to a number in place (at t=0, session 0)"),
    ("an attribute of None", "set the attribute x of session 0 to None, not a number: a kind reads "
                             "job.owner.attrs, and may set one to a number in place (at t=0, session 0)"),
    ("an attribute past the largest double",
     "set the attribute x of session 0 to " + repr(10 ** 400)[:57] + "..., beyond the largest double: a kind "
     "reads job.owner.attrs, and may set one to a number in place (at t=0, session 0)"),
    ("the attributes emptied", "left the session's attributes job.owner.attrs with 0 value(s), where the program "
                               "has 6: a kind reads them, and may set one to a number in place (at t=0, session 0)"),
    ("the attributes replaced", "replaced the session's attributes job.owner.attrs by another object: a kind reads "
                                "them, and may set one to a number in place (at t=0, session 0)"),
    ("the serial of text", "set the serial of session 0 to 'x': a kind reads a session, it does not change its "
                           "number (at t=0)"),
    ("the owner taken", "set job.owner to None, where the job arrived with session 0: a kind reads job.owner, it "
                        "does not change it (at t=0, session 0)"),
])
def test_a_session_changed_in_attach_is_the_plugins_failure(case, what, monkeypatch):
    assert _refused(case, "attach", monkeypatch) == "attach(job) " + what


@pytest.mark.parametrize(("case", "what"), [
    ("an attribute of text", "set the attribute x of session 0 to 'abc', not a number: a kind reads "
                             "job.owner.attrs, and may set one to a number in place (at t=1, session 0)"),
    ("the owner taken", "set job.owner to None, where the job arrived with session 0: a kind reads job.owner, it "
                        "does not change it (at t=1, session 0)"),
])
def test_a_session_changed_before_its_job_completes_is_the_plugins_failure(case, what, monkeypatch):
    assert _refused(case, "finish", monkeypatch) == RAN + what


def test_a_kind_that_changes_nothing_and_one_that_sets_an_int_run(monkeypatch):
    # every session arrives at 0 + gaps, spends 1 at svc, then d: x % 3 + 0.1 alone, 7 % 3 + 0.1 = 1.1 with x 7;
    # the first session (t=0) meets an empty pool and d: 1 + (0 % 3 + 0.1) = 1.1, and 1 + 1.1 = 2.1 with x 7
    for tier in ("", "general"):
        plain = _run("", "attach", tier, monkeypatch)
        seven = _run("an attribute of an int", "attach", tier, monkeypatch)
        assert plain.observe("t").values[0] == pytest.approx(1.1)
        assert seven.observe("t").values[0] == pytest.approx(2.1)


def test_serq_run_says_it_in_one_message(tmp_path, monkeypatch, serq_in_process):
    info = tmp_path / "serq_changing-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-changing\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nchanging = r53_changing\n")
    (tmp_path / "r53_changing.py").write_text(
        "from serq import hookimpl\n"
        "from serq_sim.stages import StageKind\n\n\n"
        "class Changing(StageKind):\n"
        "    def attach(self, job):\n"
        "        self.acc()\n"
        "        self.present += 1\n"
        "        job.stage = self\n"
        "        job.owner.attrs[[a.name for a in self.sim.program.attributes].index('x')] = 'abc'\n"
        "        self.sim.at(self.sim.now + 1, self.finish, job)\n\n"
        "    def detach(self, job):\n"
        "        self.acc()\n"
        "        self.present -= 1\n"
        "        job.stage = None\n\n"
        "    def finish(self, job):\n"
        "        self.acc()\n"
        "        self.present -= 1\n"
        "        job.stage = None\n"
        "        self.sim.job_done(self, job)\n\n\n"
        "@hookimpl\n"
        "def serq_sim_register_stage_kinds(register):\n"
        "    register('changing', Changing)\n")
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    try:
        for tier in ("", "general"):
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
            r = serq_in_process("run", "p.sq", "--no-progress", "-o", "out.json")
            assert (r.returncode, r.stdout) == (1, "")
            assert r.stderr == (
                "error: plugin 'changing' (from serq-changing 0.1.0) failed in its stage svc: attach(job) set the "
                "attribute x of session 0 to 'abc', not a number: a kind reads job.owner.attrs, and may set "
                "one to a number in place (at t=0, session 0)\n"
                "(run without it: SERQ_DISABLED_PLUGINS=changing, or uninstall serq-changing)\n"
                "p.sq:5:1: note: stage svc is declared here\n"
                "  stage svc : @changing;\n"
                "  ^\n")
            assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
                ["p.sq", "r53_changing.py", "serq_changing-0.1.0.dist-info"] + (
                    ["__pycache__"] if (tmp_path / "__pycache__").exists() else []))
    finally:
        sys.modules.pop("r53_changing", None)


class Keys(EvictionOrder):
    change = True

    def key(self, entry):
        if self.change and entry.owner is not None:
            entry.owner.attrs[[a.name for a in self.sim.program.attributes].index("x")] = "abc"
        return (entry.seq,)


class Victims(PreemptionPolicy):
    requeue = "tail"

    def victim(self, pool, grower):
        grower.attrs[[a.name for a in self.sim.program.attributes].index("x")] = None
        c = self.sim.preempt_candidates(pool)
        return c[-1][0] if c else None


class Policies:
    def __init__(self, evict: bool):
        self.evict = evict

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        def keys(sim, pool, node):
            order = Keys(sim, pool, node)
            order.change = self.evict
            return order

        register("keys", keys)

    @hookimpl
    def serq_sim_register_preemption_policies(self, register):
        register("victims", Victims)


#: 40 units in blocks of 4: holds of 10 cached at their end and grown by 8, so the pool evicts and preempts
POOLED = """pool kv { cap 40; block 4; evict @keys; preempt @victims; }
stage d : fifo(4);
workload { arrive poisson(2); }
session {
  set x = serial;
  hold kv (10) {
    run d (1);
    grow kv (8);
    run d (x % 3 + 0.1);
  } cache (10);
  hold kv (10) reuse (10) {
    run d (x % 2 + 0.1);
  } cache (10);
  observe y = x % 5;
}
run { horizon 50; seed 1; }
"""


@pytest.mark.parametrize(("evict", "what"), [
    (True, "failed in its eviction order 'keys' (pool kv): key(entry) set the attribute x of session 0 to 'abc', "
           "not a number: an order reads entry.owner.attrs, and may set one to a number in place (at t=2.1)"),
    (False, "failed in its preemption policy 'victims' (pool kv): victim(pool, grower) set the attribute x of "
            "session 4 to None, not a number: a policy reads grower.attrs, and may set one to a number in place "
            "(at t=4.31481, session 4)"),
])
def test_an_order_or_a_policy_that_changes_a_session_is_its_plugins_failure(evict, what, monkeypatch):
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        pm = get_plugin_manager(plugins=[Policies(evict)])
        with pytest.raises(PluginError) as e:
            serq_sim.run(serq_frontend.compile(source=POOLED, pm=pm), pm=pm)
        out.append(str(e.value))
    assert out[0] == out[1]
    head, _, rest = out[0].partition(".Policies' ")
    assert head.startswith("error: plugin '"), out[0]
    assert rest.splitlines()[0] == what
    assert rest.splitlines()[2:] == ["<source>:1:1: note: pool kv is declared here",
                                     "  pool kv { cap 40; block 4; evict @keys; preempt @victims; }", "  ^"]


class Entries(EvictionOrder):
    """An order by release, whose key changes the entry it ranks as ``case`` says."""

    case = ""

    def key(self, entry):
        if self.case == "a size of NaN":
            entry.size = float("nan")
        elif self.case == "a size of 1e9":
            entry.size = 1e9
        elif self.case == "no owner":
            entry.owner = None
        elif self.case == "a seq of text":
            entry.seq = "x"
        return (entry.seq,)


class EntryPlugin:
    def __init__(self, case: str):
        self.case = case

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        def entries(sim, pool, node):
            order = Entries(sim, pool, node)
            order.case = self.case
            return order

        register("keys", entries)

    @hookimpl
    def serq_sim_register_preemption_policies(self, register):
        register("victims", Victims)


@pytest.mark.parametrize(("case", "what"), [
    # the first entry ranked: session 0's, 8 units (its hold of 10 cached in blocks of 4: 2 whole blocks)
    ("a size of NaN", "size from 8.0 to nan"),
    ("a size of 1e9", "size from 8.0 to 1000000000.0"),
    ("no owner", "owner from session 0 to None"),
    ("a seq of text", "seq from 0 to 'x'"),
])
def test_an_order_that_changes_an_entry_is_its_plugins_failure(case, what, monkeypatch):
    # before: a size of NaN left the pool caching NaN and evicting nothing, 1e9 evicted 352 units of entries
    # that held 40, without a word; no owner was an AttributeError traceback of serq_sim.guards
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        pm = get_plugin_manager(plugins=[EntryPlugin(case)])
        with pytest.raises(PluginError) as e:
            serq_sim.run(serq_frontend.compile(source=POOLED.replace("preempt @victims", "preempt lifo"), pm=pm),
                         pm=pm)
        out.append(str(e.value))
    assert out[0] == out[1]
    _, _, rest = out[0].partition(".EntryPlugin' ")
    assert rest.splitlines()[0] == (
        f"failed in its eviction order 'keys' (pool kv): key(entry) changed the entry's {what}: an order reads the "
        "pool's entries, it does not change them (the pool's books are kept by them) (at t=2.1)")


class Books(PreemptionPolicy):
    """The last candidate preempted; the pool's books changed first as ``case`` says."""

    requeue = "tail"
    case = ""

    def victim(self, pool, grower):
        if self.case == "used":
            pool.used = 0.0
        elif self.case == "cap":
            pool.cap = 1e9
        c = self.sim.preempt_candidates(pool)
        return c[-1][0] if c else None


class BooksPlugin:
    def __init__(self, case: str):
        self.case = case

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        register("keys", Entries)

    @hookimpl
    def serq_sim_register_preemption_policies(self, register):
        def books(sim, pool, node):
            policy = Books(sim, pool, node)
            policy.case = self.case
            return policy

        register("victims", books)


@pytest.mark.parametrize(("case", "what"), [("used", "used from 36.0 to 0.0"), ("cap", "cap from 40.0 to 1000000000.0")])
def test_a_policy_that_changes_the_pools_books_is_its_plugins_failure(case, what, monkeypatch):
    # before: pool.used = 0 had the pool's books wrong (a mean used of 9.02 with a mean of 22.95 holders of at
    # least 10 units each), pool.cap = 1e9 had it hold a mean of 455 units of a cap of 40, without a word
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        pm = get_plugin_manager(plugins=[BooksPlugin(case)])
        with pytest.raises(PluginError) as e:
            serq_sim.run(serq_frontend.compile(source=POOLED, pm=pm), pm=pm)
        out.append(str(e.value))
    assert out[0] == out[1]
    _, _, rest = out[0].partition(".BooksPlugin' ")
    # the first growth that does not fit: session 4's grow by 8 at t=4.31481, 36 of the 40 units used
    assert rest.splitlines()[0] == (
        f"failed in its preemption policy 'victims' (pool kv): victim(pool, grower) changed the pool's {what}: a "
        "policy reads the pool, it does not change it (the engine keeps its books) (at t=4.31481, session 4)")
