"""A third party's distribution written from docs/hooks.md alone and installed as a wheel leaves it (a
``*.dist-info`` with its ``entry_points.txt`` in a folder on ``sys.path``), serq-acme4: a stage kind that
takes a random vacation after each job (``@rvac(V)``, drawn from the run's session stream) and says the work
it holds (``work(s)``, which a program's router reads), a JSON Lines report format (one line a sample of every
observe), a command that sweeps the program through serq_sweep's API, and a stage kind whose factory never
returns. Each checked against a hand trace or the run's own documented stream; and the factory that never
returns under ``--max-wall``, which hung the run (the alarm that stops a plugin's code was set only once the
events ran), is one message naming the plugin, from ``serq_sim.run``, ``serq run`` and a sweep's workers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_report
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.rand import streams
from tiers import same_json

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
HINT = "(run without it: SERQ_DISABLED_PLUGINS=acme4, or uninstall serq-acme4)"

PLUGIN = '"""serq-acme4: a server that takes a random vacation after each job, a factory that never returns, a JSON\nLines report format and a command that sweeps the vacation\'s mean."""\nimport json\nfrom collections import deque\n\nimport click\nfrom serq import hookimpl\nfrom serq_sim import SimError\nfrom serq_sim.stages import StageKind\n\n\nclass RVac(StageKind):\n    """``@rvac(V)``: one server, jobs in arrival order; after each job a vacation of mean V (exponential,\n    the run\'s session stream). ``work()`` is the work of the jobs present."""\n\n    def __init__(self, sim, node, member, flat):\n        super().__init__(sim, node, member, flat)\n        p = node.kind.params\n        if not isinstance(p, list) or len(p) != 1 or not 0 <= float(p[0]) < float("inf"):\n            raise SimError(f"stage {node.name}: @rvac takes one mean vacation, a number at least 0, not {p}")\n        self.mean = float(p[0])\n        self.rng = sim.rngs["session"]\n        self.waiting = deque()\n        self.serving = None\n        self.away = False\n\n    def attach(self, job):\n        self.acc()\n        job.stage = self\n        self.present += 1\n        self.waiting.append(job)\n        self._next()\n\n    def detach(self, job):\n        self.acc()\n        job.stage = None\n        self.present -= 1\n        if job is self.serving:\n            self.serving = None\n            self._next()\n        else:\n            self.waiting.remove(job)\n\n    def _next(self):\n        if self.serving is None and not self.away and self.waiting:\n            job = self.serving = self.waiting.popleft()\n            job.started = self.sim.now\n            self.sim.at(self.sim.now + job.work, self._done, job)\n\n    def _done(self, job):\n        if job.stage is not self:\n            return\n        self.acc()\n        self.serving = None\n        self.present -= 1\n        job.stage = None\n        self.sim.job_done(self, job)\n        if self.mean > 0:\n            self.away = True\n            self.sim.at(self.sim.now + self.rng.expovariate(1 / self.mean), self._back, None)\n        else:\n            self._next()\n\n    def _back(self, _):\n        self.away = False\n        self._next()\n\n    def busy_level(self):\n        return 0.0 if self.serving is None else 1.0\n\n    def work(self):\n        return sum(j.work for j in self.waiting) + (0.0 if self.serving is None else self.serving.work)\n\n\nclass Stall(RVac):\n    """``@stall(V)``: a factory whose set-up never ends."""\n\n    def __init__(self, sim, node, member, flat):\n        while True: pass\n\n\ndef jsonl(report, out):\n    """One JSON object a line per observe sample, observe by observe in the program\'s order."""\n    for name, o in report.observes.items():\n        for v, t, s, k in zip(o.values.tolist(), o.times.tolist(), o.sessions.tolist(), o.turns.tolist()):\n            out.write(json.dumps({"observe": name, "t": t, "session": s, "turn": k, "value": v}) + "\\n")\n\n\n@click.command("vacsweep")\n@click.argument("file")\n@click.option("--means", default="0,1")\n@click.pass_obj\ndef vacsweep(pm, file, means):\n    """Sweep the let V of FILE over MEANS and print each point\'s mean of the observe t."""\n    import serq_sweep\n\n    table = serq_sweep.sweep(file, sets={"V": [float(m) for m in means.split(",")]}, workers=0, pm=pm)\n    for v, t in zip(table["V"], table["observes.t.mean"]):\n        click.echo(f"V={v:g} t={t:.6g}")\n\n\n@hookimpl\ndef serq_sim_register_stage_kinds(register):\n    register("rvac", RVac)\n    register("stall", Stall)\n\n\n@hookimpl\ndef serq_report_register_formats(register):\n    register("jsonl", jsonl)\n\n\n@hookimpl\ndef serq_register_commands(register):\n    register(vacsweep)\n'

VAC = """let V = 1;
stage s : @rvac(V);
workload { arrive batch(4); }
session { set t0 = now; run s (1); observe t = now - t0; observe done = now; }
run { horizon inf; }
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    """serq-acme4 0.4.0 installed in a folder on sys.path; its folder."""
    root = tmp_path / "site"
    info = root / "serq_acme4-0.4.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme4\nVersion: 0.4.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme4 = acme4_kinds\n")
    (root / "acme4_kinds.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(root))
    before = set(sys.modules)
    yield root
    for name in set(sys.modules) - before:
        if name.startswith("acme4_"):
            del sys.modules[name]


def serq(site, *args, cwd=None):
    env = {**__import__("os").environ, "PYTHONPATH": str(site)}
    return subprocess.run([SERQ, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=100)


def compiled(tmp_path, text, pm, **sets):
    path = tmp_path / "P.sq"
    path.write_text(text)
    return serq_frontend.compile(path, pm=pm, sets=sets)


def expected_times(mean, seed, n=4):
    """Four jobs of work 1 at 0, one server: job k starts when job k-1 is done and the vacation after it
    is over, the vacations the session stream's draws in turn (docs/hooks.md: ``sim.rngs["session"]``)."""
    rng = streams(seed)["session"]
    t, out = 0.0, []
    for k in range(n):
        t += 1.0
        out.append(t)
        if k < n - 1 and mean > 0:
            t += rng.expovariate(1 / mean)
    return out


@pytest.mark.parametrize(("mean", "seed"), [(0.0, 1), (1.0, 1), (2.5, 7)])
def test_the_vacation_server_by_hand_on_both_tiers(site, tmp_path, monkeypatch, mean, seed):
    pm = get_plugin_manager()
    prog = compiled(tmp_path, VAC, pm, V=mean)
    doc = same_json(prog, monkeypatch, pm=pm, seed=seed)
    r = serq_sim.run(prog, pm=pm, seed=seed)
    assert r.observe("t").values.tolist() == pytest.approx(expected_times(mean, seed))
    assert doc["stages"][0]["completions"] == 4
    if mean == 0:
        assert r.observe("t").values.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_same_seed_same_bytes_and_another_seed_other_draws(site, tmp_path):
    pm = get_plugin_manager()
    prog = compiled(tmp_path, VAC, pm)

    def text(seed, fmt):
        return serq_report.render(serq_sim.run(prog, pm=pm, seed=seed), fmt, pm=pm)

    assert text(3, "json") == text(3, "json")
    assert text(3, "jsonl") == text(3, "jsonl")
    assert text(3, "jsonl") != text(4, "jsonl")


ROUTED = """stage s[2] : @rvac(0);
workload { arrive batch(3); }
session { set w = serial == 0 ? 3 : 1; choose j in 2 by (work(s[j])); observe pick = j; set t0 = now; run s[j] (w);
          observe t = now - t0; }
run { horizon inf; }
"""


def test_a_router_reads_the_work_the_kind_says_it_holds(site, tmp_path, monkeypatch):
    """Three sessions at 0 in serial order. Session 0 (work 3) finds both members holding 0 and takes the
    first, s[0]; session 1 (work 1) reads 3 at s[0], 0 at s[1], and takes s[1]; session 2 reads 3 and 1 and
    takes s[1] too, behind session 1: done at 1 and 2, session 0 at 3."""
    pm = get_plugin_manager()
    prog = compiled(tmp_path, ROUTED, pm)
    doc = same_json(prog, monkeypatch, pm=pm, seed=1)
    r = serq_sim.run(prog, pm=pm, seed=1)
    assert dict(zip(r.observe("pick").sessions.tolist(), r.observe("pick").values.tolist())) == {0: 0, 1: 1, 2: 1}
    assert r.observe("t").values.tolist() == [1.0, 2.0, 3.0]
    assert [st["completions"] for st in doc["stages"]] == [1, 2]


@pytest.mark.parametrize(("value", "shown"), [("float('nan')", "nan"), ("None", "None"), ("-2.0", "-2.0")])
def test_a_work_that_is_no_amount_names_the_plugin_the_stage_and_the_time(site, tmp_path, value, shown):
    import acme4_kinds

    class Liar(acme4_kinds.RVac):
        def work(self):
            return eval(value)

    class Wrong:
        @hookimpl
        def serq_sim_register_stage_kinds(self, register):
            register("liar", Liar)

    pm = get_plugin_manager(plugins=[Wrong()])
    prog = compiled(tmp_path, ROUTED.replace("@rvac(0)", "@liar(0)"), pm)
    with pytest.raises(PluginError) as e:
        serq_sim.run(prog, pm=pm, seed=1)
    first, hint, note, line, caret, *read = str(e.value).splitlines()
    # read by session 0's choose at t=0 (test_known_defects_round44_plugin_reads): the session and the statement
    assert first == (f"error: plugin '{Wrong.__module__}.{Wrong.__qualname__}' failed in its stage s[0]: work() returned {shown}, not a "
                     "number at least 0 (at t=0, session 0)")
    assert note == f"{tmp_path / 'P.sq'}:1:1: note: stage s[0] is declared here"
    assert (line, caret) == ("  stage s[2] : @liar(0);", "  ^")
    assert read[0] == f"{tmp_path / 'P.sq'}:3:40: note: session 0 read it here"


def test_the_json_lines_are_every_observes_samples(site, tmp_path):
    """``report.observes`` holds every observe, an instant's (``observe done = now;``, which the figures of
    ``report.result.observes`` leave out) too: the format writes a line a sample of each."""
    pm = get_plugin_manager()
    r = serq_sim.run(compiled(tmp_path, VAC, pm, V=0), pm=pm, seed=1)
    assert "done" not in r.result.observes
    lines = [json.loads(x) for x in serq_report.render(r, "jsonl", pm=pm).splitlines()]
    assert lines == [{"observe": name, "t": t, "session": k, "turn": 0, "value": v}
                     for name in ("t", "done") for k, (t, v) in enumerate(
                         [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0), (4.0, 4.0)])]


def test_the_file_suffix_chooses_the_format_and_the_command_sweeps(site, tmp_path):
    (tmp_path / "P.sq").write_text(VAC)
    done = serq(site, "run", "P.sq", "--set", "V=0", "-o", "r.jsonl", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert [json.loads(x)["value"] for x in (tmp_path / "r.jsonl").read_text().splitlines()] == [1, 2, 3, 4] * 2
    done = serq(site, "vacsweep", "P.sq", "--means", "0,2.5", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    mean = sum(expected_times(2.5, 1)) / 4
    assert done.stdout == f"V=0 t=2.5\nV=2.5 t={mean:.6g}\n"


STALL = VAC.replace("@rvac(V)", "@stall(V)").replace("horizon inf", "horizon 10")
STALLED = ("error: plugin 'acme4' (from serq-acme4 0.4.0) failed in Stall.__init__ during the run: WallAtSetUp: it "
           "did not return within --max-wall 0.3 while the simulation was built (its factory's code), so the run "
           "never began at {}:{}")


def stall_line(site):
    return next(i for i, x in enumerate((site / "acme4_kinds.py").read_text().splitlines(), 1)
                if x.strip() == "while True: pass")


def test_a_factory_that_never_returns_is_stopped_by_max_wall(site, tmp_path):
    pm = get_plugin_manager()
    prog = compiled(tmp_path, STALL, pm)
    with pytest.raises(PluginError) as e:
        serq_sim.run(prog, pm=pm, seed=1, max_wall=0.3)
    assert str(e.value) == STALLED.format(site / "acme4_kinds.py", stall_line(site)) + "\n" + HINT
    (tmp_path / "S.sq").write_text(STALL)
    done = serq(site, "run", "S.sq", "--max-wall", "0.3", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == STALLED.format(site / "acme4_kinds.py", stall_line(site)) + "\n" + HINT + "\n"


def test_a_factory_that_never_returns_is_its_rows_error_in_a_sweeps_workers(site, tmp_path):
    (tmp_path / "S.sq").write_text(STALL)
    done = serq(site, "sweep", "S.sq", "--max-wall", "0.3", "--workers", "2", "--set", "V=1,2", "-o", "t.csv",
                cwd=tmp_path)
    assert done.returncode == 1
    import csv

    with (tmp_path / "t.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["V"], r["status"]) for r in rows] == [("1", "error"), ("2", "error")]
    for r in rows:
        assert r["message"] == STALLED.format(site / "acme4_kinds.py", stall_line(site)) + "\n" + HINT


def test_a_format_name_another_plugin_registers_names_both(site, tmp_path):
    """serq-acme4 registers ``jsonl``; a second plugin registering it too is one message naming both plugins
    and how to run without either, when the formats are collected (a report is written): the installed one
    by SERQ_DISABLED_PLUGINS, the one this process registers by leaving it out (SERQ_DISABLED_PLUGINS, which
    the message named it by, does not block an object registered in-process)."""

    class Other:
        @hookimpl
        def serq_report_register_formats(self, register):
            register("jsonl", lambda report, out: out.write("{}\n"))

    pm = get_plugin_manager(plugins=[Other()])
    r = serq_sim.run(compiled(tmp_path, VAC, pm, V=0), pm=pm, seed=1)
    with pytest.raises(PluginError) as e:
        serq_report.render(r, "jsonl", pm=pm)
    other = f"{Other.__module__}.{Other.__qualname__}"
    assert str(e.value).splitlines() == [
        f"error: report format 'jsonl' is registered twice: by acme4 (serq-acme4 0.4.0) and by {other}",
        f"(run without one of them: SERQ_DISABLED_PLUGINS=acme4 or leave {other} out of the plugins this process "
        "registers, or uninstall one; `serq plugins` lists them)"]


class Never:
    """A preemption policy that never chooses a victim: every grower that does not fit waits."""

    @hookimpl
    def serq_sim_register_preemption_policies(self, register):
        from serq_sim.policies import PreemptionPolicy

        class Wait(PreemptionPolicy):
            def victim(self, pool, grower):
                return None

        register("wait", Wait)


WAIT = """pool p { cap 4; preempt @wait; }
stage d : delay;
workload { arrive batch(2); }
session { hold p (1) { grow p (serial == 0 ? 2 : 3); run d (1); } observe t = now; }
run { horizon inf; }
"""


def test_a_policy_that_never_chooses_makes_the_grower_wait_for_room(tmp_path, monkeypatch):
    """Session 0 holds 1 and grows 2 (3 of 4), session 1 holds 1 (4 of 4) and its grow of 3 does not fit: the
    policy chooses no victim, so it waits until session 0 releases at 1, then runs to 2."""
    pm = get_plugin_manager(plugins=[Never()])
    prog = compiled(tmp_path, WAIT, pm)
    doc = same_json(prog, monkeypatch, pm=pm, seed=1)
    assert serq_sim.run(prog, pm=pm, seed=1).observe("t").values.tolist() == [1.0, 2.0]
    assert doc["pools"][0]["preemptions"] == 0


def test_a_grower_the_policy_never_chooses_for_is_told_naming_it(tmp_path, monkeypatch):
    """One session grows to 11 units of a pool of 4: the policy chooses no victim, and no event is left. The
    warning said '1 growing at p (session 0)', naming neither the policy nor its plugin."""
    pm = get_plugin_manager(plugins=[Never()])
    prog = compiled(tmp_path, WAIT.replace("batch(2)", "batch(1)").replace("serial == 0 ? 2 : 3", "10"), pm)
    doc = same_json(prog, monkeypatch, pm=pm, seed=1)
    plugin = f"{Never.__module__}.{Never.__qualname__}"
    assert doc["notes"] == [f"warning: 1 session waits for ever at the end of the run (no event is left that could "
                            f"wake them): 1 growing at p, where the preemption policy @wait of the plugin {plugin} "
                            "chose no victim (session 0)"]


class Largest:
    """docs/hooks.md's ``LargestFirst``, whole: the largest entry first, ties in release order."""

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        from serq_sim.policies import EvictionOrder

        class LargestFirst(EvictionOrder):
            fixed_key = True
            reads_size = True
            needs_snapshot = False

            def key(self, entry):
                return (-entry.size,)

        register("largest", LargestFirst)


SPILL = """pool kv { cap 4; evict @largest; spill cpu via link (size) when (1); }
pool cpu { cap 10; }
stage d : delay;
stage link : fifo;
workload { arrive batch(3); }
session {
  branch (serial < 2) { hold kv (serial == 0 ? 1 : 3) { run d (1); } cache (serial == 0 ? 1 : 3); run d (5);
                        observe a = cachedin(kv); observe b = cachedin(cpu); }
  else { run d (2); hold kv (3) { run d (1); } }
}
run { horizon 20; }
"""


def test_the_plugins_order_chooses_what_spills_to_the_named_tier(tmp_path, monkeypatch):
    """At 1 sessions 0 and 1 cache 1 and 3 units in kv (4 of 4). At 2 session 2's hold of 3 evicts: the largest
    entry first, session 1's 3 units, one entry, which the spill writes to cpu over link (work 3: 2 to 5).
    At 6 session 0 still has its 1 unit in kv and none in cpu; session 1 none in kv and 3 in cpu."""
    pm = get_plugin_manager(plugins=[Largest()])
    prog = compiled(tmp_path, SPILL, pm)
    doc = same_json(prog, monkeypatch, pm=pm, seed=1)
    r = serq_sim.run(prog, pm=pm, seed=1)
    assert [(s, v) for s, v in zip(r.observe("a").sessions.tolist(), r.observe("a").values.tolist())] == [(0, 1), (1, 0)]
    assert [(s, v) for s, v in zip(r.observe("b").sessions.tolist(), r.observe("b").values.tolist())] == [(0, 0), (1, 3)]
    kv, cpu = doc["pools"]
    assert (kv["spills"], kv["evicted_entries"], kv["evicted_units"]) == (1, 1, 3.0)
    assert doc["stages"][1]["name"] == "link" and doc["stages"][1]["completions"] == 1
    assert cpu["evicted_entries"] == 0


class Refuses:
    """A preemption policy whose victim is no session."""

    @hookimpl
    def serq_sim_register_preemption_policies(self, register):
        from serq_sim.policies import PreemptionPolicy

        class Wait(PreemptionPolicy):
            def victim(self, pool, grower):
                return "nobody"

        register("wait", Wait)


def test_a_plugin_this_process_registers_is_told_to_be_left_out(tmp_path, monkeypatch):
    """An object given in plugins= has no entry point: SERQ_DISABLED_PLUGINS=module.Class, which its message
    told, leaves it registered and failing as before; the message says to leave it out."""
    name = f"{Refuses.__module__}.{Refuses.__qualname__}"
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", name)
    pm = get_plugin_manager(plugins=[Refuses()])
    with pytest.raises(PluginError) as e:
        serq_sim.run(compiled(tmp_path, WAIT, pm), pm=pm, seed=1)
    first, hint = str(e.value).splitlines()[:2]
    assert first.startswith(f"error: plugin '{name}' failed in its preemption policy 'wait' (pool p): victim(pool, "
                            "grower) returned 'nobody', which is not one of the candidates")
    assert hint == ("(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this "
                    "process registers it)")
