"""A third party's distribution written from docs/hooks.md and docs/language.md alone, installed as a
wheel leaves it (its package and a ``*.dist-info`` with ``METADATA`` and ``entry_points.txt`` in a folder on
``sys.path``), registering one of each: a stage kind (``@vacation(V)``, a FIFO server that takes vacations of
length V whenever it is empty), an eviction order (``@mru``, the entry released last first), a preemption
policy (``@mostunits``, the candidate holding the most units), a share policy (``equal``), a report format
(``markdown``) and a command (``serq acme uses FILE``). Each is checked against a figure worked out by hand or
a closed form, and the format against the JSON report of the same run; and a hook implementation pluggy
refuses is put at the plugin's own line, not pluggy's."""

from __future__ import annotations

import json
import sys

import pytest
import serq_frontend
import serq_report
import serq_sim
from host_helpers import returning_sessions, run_serq
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)

ACME = '''"""ACME's serQ plugin."""

import json
import math
from collections import deque

import click
from serq import hookimpl
from serq_sim import SimError
from serq_sim.policies import EvictionOrder, PreemptionPolicy
from serq_sim.stages import StageKind


class VacationStage(StageKind):
    """One exhaustive FIFO server; whenever it is empty (from 0) it takes vacations of length V, one after
    another, and resumes at the end of the first vacation that finds a job waiting."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        params = node.kind.params
        v = params.get("vacation") if isinstance(params, dict) else (params or [None])[0]
        if not isinstance(v, float) or not 0 < v < math.inf:
            raise SimError(f"stage {node.name}: @vacation takes one length above 0, not {params!r}")
        self.v = v
        self.waiting = deque()
        self.serving = None
        self.empty_since = 0.0
        self.start_at = None

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.waiting.append(job)
        if self.serving is None and self.start_at is None:
            k = max(1, math.ceil((self.sim.now - self.empty_since) / self.v))  # the vacation under way ends
            self.start_at = self.empty_since + k * self.v
            self.sim.at(self.start_at, self._resume, self.start_at)

    def _resume(self, when):
        if self.start_at != when:
            return
        self.start_at = None
        self._next()

    def _next(self):
        if not self.waiting:
            self.empty_since = self.sim.now
            return
        self.acc()
        job = self.serving = self.waiting.popleft()
        job.started = self.sim.now
        self.sim.at(self.sim.now + job.work, self._done, job)

    def _done(self, job):
        if job is not self.serving or job.stage is not self:
            return
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
            self._next()
        else:
            self.waiting.remove(job)

    def busy_level(self):
        return 1.0 if self.serving is not None else 0.0

    def queue(self):
        return float(len(self.waiting))

    def busy(self):
        return self.busy_level()


class MostRecent(EvictionOrder):
    fixed_key = True
    needs_snapshot = False

    def key(self, entry):
        return (-entry.seq,)


class MostUnits(PreemptionPolicy):
    requeue = "tail"

    def victim(self, pool, grower):
        best = None
        for s, slot in self.sim.preempt_candidates(pool):
            if best is None or slot.alloc > best[0]:  # ties: the first admitted
                best = (slot.alloc, s)
        return None if best is None else best[1]


def share_equal(flows, caps):
    count = {}
    for f in flows:
        for k in f:
            count[k] = count.get(k, 0) + 1
    r = min(caps[k] / count[k] for k in count) if count else 0.0
    return [r] * len(flows)


def markdown(report, out):
    result = report.result
    out.write("| observe | count | mean |\\n|---|---:|---:|\\n")
    for name, obs in result.observes.items():
        out.write(f"| {name} | {obs.count} | {obs.mean!r} |\\n")
    out.write("\\n| stage | completions | utilisation | wait |\\n|---|---:|---:|---:|\\n")
    for st in result.stages:
        label = st.name if st.index is None else f"{st.name}[{st.index}]"
        out.write(f"| {label} | {st.completions} | {st.utilisation!r} | {st.wait!r} |\\n")


@click.group("acme")
def acme():
    """ACME's tools for serQ programs."""


@acme.command("uses")
@click.argument("file", type=click.Path(dir_okay=False))
@click.pass_obj
def uses(pm, file):
    """List what a program takes from plugins."""
    from serq.loading import load_program
    from serq_ir import nodes as N

    program = load_program(pm, file)
    for st in program.stages:
        if isinstance(st.kind, N.Extension):
            click.echo(f"stage {st.name} @{st.kind.name} {json.dumps(st.kind.params)}")
    for p in program.pools:
        for what in ("evict", "preempt"):
            node = getattr(p, what, None)
            if isinstance(node, N.Extension):
                click.echo(f"pool {p.name} {what} @{node.name} {json.dumps(node.params)}")


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("vacation", VacationStage)


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("mru", MostRecent)


@hookimpl
def serq_sim_register_preemption_policies(register):
    register("mostunits", MostUnits)


@hookimpl
def serq_sim_register_share_policies(register):
    register("equal", share_equal)


@hookimpl
def serq_report_register_formats(register):
    register("markdown", markdown)


@hookimpl
def serq_register_commands(register):
    register(acme)
'''


def _install(site, dist: str, name: str, module: str, source: str) -> None:
    """What a wheel of ``dist`` leaves in ``site``: its module and its ``*.dist-info``."""
    info = site / f"{dist.replace('-', '_')}-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text(f"[serq]\n{name} = {module}\n")
    (site / f"{module}.py").write_text(source)


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    before = set(sys.modules)
    yield site
    for name in set(sys.modules) - before:
        if name.startswith("acme1_"):
            del sys.modules[name]


@pytest.fixture
def acme(site):
    _install(site, "serq-acme", "acme", "acme1_plugin", ACME)
    return site


def _run(pm, source: str, **kw):
    return serq_sim.run(serq_frontend.compile(source=source, pm=pm), pm=pm, seed=1, **kw)


def _means(report) -> dict[str, float]:
    return {name: obs.mean for name, obs in report.result.observes.items()}


VACATION_HAND = """
stage s : @vacation(2);
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    set t0 = now;
    run s (1);
    observe r0 = now - t0;
  } else {
    run d (6);
    set t1 = now;
    run s (1);
    observe r1 = now - t1;
  }
}
run { horizon 100; }
"""


def test_the_vacation_server_by_hand(acme):
    """The server is on vacation from 0 to 2: session 0's job, there at 0, is served from 2 to 3 (r0 = 3).
    Empty at 3, the server takes vacations 3-5 and 5-7; session 1's job arrives at 6 and is served from 7
    to 8 (r1 = 2). The stage's mean wait is (2 + 1) / 2."""
    report = _run(get_plugin_manager(), VACATION_HAND)
    assert _means(report) == {"r0": 3.0, "r1": 2.0}
    stage = report.result.stages[0]
    assert (stage.name, stage.completions, stage.wait, stage.service) == ("s", 2, 1.5, 1.0)


def test_the_vacation_server_is_an_md1_queue_with_multiple_vacations(acme):
    """M/D/1 with multiple vacations of fixed length V (the decomposition of Fuhrmann and Cooper): the mean
    wait is the M/D/1's, lambda D^2 / (2 (1 - rho)), plus E[V^2] / (2 E[V]) = V / 2. With lambda = 0.5,
    D = 1, V = 2: 0.5 + 1 = 1.5, and the response 2.5; within the run's 95 % interval, twice over."""
    source = ("let V = 2;\nlet L = 0.5;\nstage s : @vacation(vacation = V);\nworkload { arrive poisson(L); }\n"
              "session { set t0 = now; run s (1); observe resp = now - t0; }\n"
              "run { horizon inf; arrivals 40000; }\n")
    report = _run(get_plugin_manager(), source)
    resp = report.result.observes["resp"]
    assert resp.count == 40000
    assert abs(resp.mean - 2.5) <= 2 * resp.ci, (resp.mean, resp.ci)
    assert abs(report.result.stages[0].wait - 1.5) <= 2 * resp.ci


def test_a_vacation_length_the_kind_refuses_is_the_users_message(acme):
    with pytest.raises(serq_sim.SimError, match=r"@vacation takes one length above 0, not \[0\.0\]"):
        _run(get_plugin_manager(), VACATION_HAND.replace("@vacation(2)", "@vacation(0)"))


MRU = returning_sessions("@mru", 16, 8, 8)


def test_the_most_recently_released_entry_goes_first(acme):
    """Session 0 leaves 8 cached at 1, session 1 8 at 3: the pool (16) is full of cache. Session 2's hold
    of 8 at 3 evicts one entry: under @mru session 1's (released last), so session 0 hits its 8 at 11 and
    session 1 nothing at 13; under lru the other way round."""
    pm = get_plugin_manager()
    assert _means(_run(pm, MRU)) == {"hit0": 8.0, "hit1": 0.0}
    assert _means(_run(pm, MRU.replace("evict @mru", "evict lru"))) == {"hit0": 0.0, "hit1": 8.0}


MOST = """
pool a { cap 10; preempt @mostunits; }
stage d : delay;
workload { arrive batch(3); }
session {
  set t0 = now;
  branch (serial == 0) {
    hold a (2) { run d (10); }
  } else {
    branch (serial == 1) {
      hold a (5) { observe st1 = now - t0; run d (10); }
    } else {
      run d (1);
      hold a (2) { run d (1); grow a (3); run d (2); }
      observe done2 = now - t0;
    }
  }
}
run { horizon 100; }
"""


def test_the_candidate_holding_most_units_is_preempted(acme):
    """At 2 session 2 grows by 3 on a pool holding 2 + 5 + 2 of 10: the candidates hold 2, 5 and 2, and
    session 1 (5) is the victim. Session 2 grows (7 held), ends its hold at 4 and frees 5: session 1,
    requeued, is admitted again at 4 (st1 observed at 0 and 4, mean 2). Under lifo the grower itself, the
    last admitted, is the victim, and session 2 does not end by 4."""
    pm = get_plugin_manager()
    report = _run(pm, MOST)
    assert _means(report) == {"st1": 2.0, "done2": 4.0}
    assert report.result.observes["st1"].count == 2
    lifo = _means(_run(pm, MOST.replace("@mostunits", "lifo")))
    assert lifo["st1"] == 0.0 and lifo["done2"] > 4.0


EQUAL = """
stage a : ps(0.5);
stage b : ps(2);
stage c : ps(100);
share equal;
workload { arrive batch(2); }
session {
  set t0 = now;
  branch (serial == 0) {
    run a, b (1);
    observe r0 = now - t0;
  } else {
    run b, c (1);
    observe r1 = now - t0;
  }
}
run { horizon 100; }
"""


def test_the_equal_share_gives_every_flow_the_least_stage_share(acme):
    """Flows (a, b) and (b, c): a is held by one flow (0.5), b by two (2 / 2 = 1), c by one (100): both get
    0.5, and both works of 1 end at 2. Under maxmin the first gets 0.5 (a) and the second the rest of b,
    1.5: it ends at 2/3 and the first at 2."""
    pm = get_plugin_manager()
    assert _means(_run(pm, EQUAL)) == {"r0": 2.0, "r1": 2.0}
    maxmin = _means(_run(pm, EQUAL.replace("share equal", "share maxmin")))
    assert maxmin["r0"] == 2.0 and maxmin["r1"] == pytest.approx(2 / 3, rel=1e-12)


def test_the_markdown_report_has_the_json_reports_figures(acme):
    pm = get_plugin_manager()
    report = _run(pm, VACATION_HAND)
    md = serq_report.render(report, "markdown", pm=pm)
    doc = json.loads(serq_report.render(report, "json", pm=pm))
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()
            if line.startswith("| ") and not line.startswith(("| observe", "| stage"))]
    observes = {r[0]: (int(r[1]), float(r[2])) for r in rows if len(r) == 3}
    stages = {r[0]: (int(r[1]), float(r[2]), float(r[3])) for r in rows if len(r) == 4}
    assert observes == {k: (v["count"], v["mean"]) for k, v in doc["observes"].items()}
    assert stages == {s["name"]: (s["completions"], s["utilisation"], s["wait"]) for s in doc["stages"]}
    assert observes["r0"] == (1, 3.0) and stages["s"][0] == 2


def test_the_command_and_what_it_registers_are_listed(acme, tmp_path):
    env = {"PYTHONPATH": str(acme)}
    helped = run_serq("--help", env=env)
    assert helped.returncode == 0, helped.stderr
    assert any(line.split()[:1] == ["acme"] for line in helped.stdout.splitlines()), helped.stdout
    listed = run_serq("plugins", env=env)
    assert listed.returncode == 0, listed.stderr
    mine = [p for p in json.loads(listed.stdout) if p["name"] == "acme"]
    assert len(mine) == 1
    assert (mine[0]["distribution"], mine[0]["version"], mine[0]["module"]) == ("serq-acme", "0.3.0", "acme1_plugin")
    assert mine[0]["registers"] == {"commands": ["acme"], "stage kinds": ["vacation"], "eviction orders": ["mru"],
                                    "preemption policies": ["mostunits"], "share policies": ["equal"],
                                    "report formats": ["markdown"]}
    program = tmp_path / "most.sq"
    program.write_text(MOST.replace("pool a { cap 10; preempt @mostunits; }",
                                    "pool a { cap 10; evict @mru; preempt @mostunits; }\nstage v : @vacation(2);"))
    used = run_serq("acme", "uses", str(program), env=env)
    assert used.returncode == 0, used.stderr
    assert used.stdout.splitlines() == ["stage v @vacation [2.0]", "pool a evict @mru null",
                                        "pool a preempt @mostunits null"]


REFUSED = '''from serq import hookimpl


def rate(flows, caps):
    return [1.0] * len(flows)


@hookimpl
def serq_sim_register_share_policies(reg):
    reg("one", rate)
'''


def test_a_hook_implementation_pluggy_refuses_is_put_at_its_definition(site):
    """A parameter the spec does not have (``reg`` for ``register``): pluggy refuses the plugin in its own
    code, and the message put it at pluggy's line (``pluggy/_manager.py:448``), which says nothing to the
    plugin's author; it is at the implementation's definition."""
    _install(site, "serq-acme-refused", "refused", "acme1_refused", REFUSED)
    r = run_serq("--version", env={"PYTHONPATH": str(site)})
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stdout == ""
    assert r.stderr.splitlines() == [
        "error: plugin 'refused' (from serq-acme-refused 0.3.0) cannot be loaded (acme1_refused): "
        "PluginValidationError: Plugin 'refused' for hook 'serq_sim_register_share_policies' hookimpl definition: "
        "serq_sim_register_share_policies(reg) Argument(s) {'reg'} are declared in the hookimpl but can not be "
        f"found in the hookspec at {site / 'acme1_refused.py'}:8",
        "(run without it: SERQ_DISABLED_PLUGINS=refused, or uninstall serq-acme-refused)"]


def test_a_wrapper_that_is_no_generator_is_put_at_its_definition(site):
    _install(site, "serq-acme-refused", "refused", "acme1_wrapper",
             "from serq import hookimpl\n\n\n@hookimpl(wrapper=True)\ndef serq_register_commands(register):\n"
             "    return None\n")
    with pytest.raises(PluginError) as e:
        get_plugin_manager()
    first = str(e.value).splitlines()[0]
    assert first.endswith("Declared as wrapper=True or hookwrapper=True but function is not a generator function "
                          f"at {site / 'acme1_wrapper.py'}:4"), first


TELLS = '''import click
from serq import hookimpl
from serq.errors import UserError


@click.command("tell")
@click.argument("n", type=int)
def tell(n):
    """Tell the user of a mistake, in each way a command may."""
    if n == 1:
        raise UserError("in.acme:3:1: error: not an acme program")
    if n == 2:
        raise click.BadParameter("takes 0 to 4", param_hint="N")
    if n == 3:
        raise click.ClickException("acme cannot do that")
    click.echo("told")


@hookimpl
def serq_register_commands(register):
    register(tell)
'''


@pytest.mark.parametrize(("n", "status", "stderr"), [
    ("0", 0, []),
    ("1", 1, ["in.acme:3:1: error: not an acme program"]),
    ("2", 2, ["error: invalid value for N: takes 0 to 4 (see 'serq tell --help')"]),
    # click's show() wrote "Error: acme cannot do that", the one message of serq's not in its form
    ("3", 1, ["error: acme cannot do that"]),
])
def test_a_command_tells_its_users_mistake_as_serqs_own_do(site, n, status, stderr):
    _install(site, "serq-acme-tell", "tell", "acme1_tell", TELLS)
    r = run_serq("tell", n, env={"PYTHONPATH": str(site)})
    assert (r.returncode, r.stderr.splitlines()) == (status, stderr), r
    assert r.stdout == ("told\n" if n == "0" else "")


@pytest.mark.parametrize(("args", "first"), [
    (("run", "P.sq"), "P.sq:1:11: error: stage `s`: unknown stage kind `@vacation` (no plugin registers stage kinds; "
                      "built in: fifo, ps, delay, step)"),
    (("run", "Q.sq", "--format", "markdown"), "error: --format markdown: unknown report format (installed: text, json, "
                                              "csv)"),
    (("acme", "uses", "P.sq"), "error: no such command 'acme'"),
])
def test_a_name_a_disabled_third_party_may_register_says_it_is_disabled(acme, tmp_path, args, first):
    """With serq-acme switched off, what only it registers was 'unknown' and 'no plugin registers stage kinds'
    with nothing else: the user who switched it off (or forgot to turn it on) was not told."""
    (tmp_path / "P.sq").write_text(VACATION_HAND.lstrip())
    (tmp_path / "Q.sq").write_text(MRU.replace("evict @mru", "evict lru").lstrip())
    r = run_serq(*args, env={"PYTHONPATH": str(acme), "SERQ_DISABLED_PLUGINS": "acme"}, cwd=tmp_path)
    assert r.returncode in (1, 2) and r.stdout == "", r
    assert "Traceback" not in r.stderr, r.stderr
    line = r.stderr.splitlines()[0]
    assert line.startswith(first + "; the installed plugin 'acme' (serq-acme 0.3.0) is disabled by SERQ_DISABLED_PLUGINS "
                           "(take 'acme' out of SERQ_DISABLED_PLUGINS to enable it), and may register it"), line
    if args[0] == "acme":  # enabled, the same command runs
        enabled = run_serq(*args, env={"PYTHONPATH": str(acme)}, cwd=tmp_path)
        assert enabled.returncode == 0, enabled.stderr


def test_an_infinite_argument_reaches_the_plugin_as_the_string_inf(acme, tmp_path):
    """docs/hooks.md: a number of a plugin's params is a float, an infinite one the string "inf" or "-inf"."""
    program = tmp_path / "inf.sq"
    program.write_text("stage s : @vacation(inf);\nstage t : @vacation(vacation = -inf, k = 2);\n"
                       "workload { arrive batch(1); }\nsession { run s (1); }\nrun { horizon 10; }\n")
    kinds = [s.kind for s in serq_frontend.compile(program, pm=get_plugin_manager()).stages]
    assert [(k.name, k.params) for k in kinds] == [("vacation", ["inf"]), ("vacation", {"vacation": "-inf", "k": 2.0})]


CLASS_PLUGIN = '''from serq import hookimpl


def plain(report, out):
    out.write("plain\\n")


class Plugin:
    @hookimpl
    def serq_report_register_formats(self, register):
        register("plain", plain)


class Static:
    @staticmethod
    @hookimpl
    def serq_report_register_formats(register):
        register("plain", plain)


plugin = Plugin()
'''


@pytest.mark.parametrize(("target", "refused"), [("Plugin", True), ("plugin", False), ("Static", False)])
def test_an_entry_point_naming_a_class_with_methods_is_refused_at_its_line(site, tmp_path, target, refused):
    """'acme1_cls:Plugin' names the class: pluggy called its method without an instance when the hook was
    first called, 'TypeError: Plugin.serq_report_register_formats() missing 1 required positional argument:
    'register'' in a Python traceback. An instance, or a class whose hooks are static methods, is fine."""
    info = site / "serq_acme_cls-0.3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme-cls\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text(f"[serq]\ncls = acme1_cls:{target}\n")
    (site / "acme1_cls.py").write_text(CLASS_PLUGIN)
    program = tmp_path / "d.sq"
    program.write_text("stage d : delay;\nworkload { arrive batch(1); }\nsession { run d (1); }\nrun { horizon 5; }\n")
    r = run_serq("run", str(program), "--format", "plain", env={"PYTHONPATH": str(site)})
    if not refused:
        assert (r.returncode, r.stdout) == (0, "plain\n"), r
        return
    assert r.returncode == 1 and r.stdout == "", r
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [
        "error: plugin 'cls' (from serq-acme-cls 0.3.0) cannot be loaded (acme1_cls:Plugin): PluginValidationError: "
        "the hook serq_report_register_formats is a method of the class Plugin, which serQ calls without an "
        "instance: a plugin is an instance of it (plugin = Plugin()), or the hook is a @staticmethod "
        f"at {site / 'acme1_cls.py'}:9",
        "(run without it: SERQ_DISABLED_PLUGINS=cls, or uninstall serq-acme-cls)"]


class _MethodsPlugin:
    @hookimpl
    def serq_register_commands(self, register):
        pass


def test_a_class_given_in_process_is_named_by_its_name():
    """get_plugin_manager(plugins=[Class]) named the plugin 'builtins.type', the class of a class."""
    with pytest.raises(PluginError) as e:
        get_plugin_manager(plugins=[_MethodsPlugin])
    assert str(e.value).splitlines() == [
        f"error: plugin '{__name__}._MethodsPlugin' cannot be registered: the hook serq_register_commands is a "
        "method of the class _MethodsPlugin, which serQ calls without an instance: a plugin is an instance of it "
        "(plugin = _MethodsPlugin()), or the hook is a @staticmethod",
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"]
    get_plugin_manager(plugins=[_MethodsPlugin()])  # an instance is registered
