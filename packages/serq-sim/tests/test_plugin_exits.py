"""A plugin's ``sys.exit()`` (or a BaseException of its own) in an object it registered — a loader, a report
format, a sugar layer — is a failure naming the plugin and its line, not the command's exit: before, a
report format's ``sys.exit(0)`` ended ``serq run`` with status 0, no report and no message."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import serq_frontend
import serq_report
import serq_sim
from click.testing import CliRunner
from serq import hookimpl
from serq.cli import build_cli
from serq.errors import PluginError
from serq.loading import load_program
from serq.plugins import get_plugin_manager
from serq_frontend.sugar import SugarLayer

PROGRAM = "stage s : delay;\nworkload { arrive batch(2); }\nsession { run s (1); }\nrun { horizon 10; }\n"


class Farewell(BaseException):
    pass


class Quitter:
    def __init__(self, how: str):
        self.how = how

    def leave(self):
        if self.how == "exit 0":
            sys.exit(0)
        if self.how == "exit 3":
            sys.exit(3)
        raise Farewell("bye")

    @hookimpl
    def serq_register_loaders(self, register):
        register(".quit", lambda path, options: self.leave())

    @hookimpl
    def serq_report_register_formats(self, register):
        register("quit", lambda report, out: self.leave())

    @hookimpl
    def serq_frontend_register_sugar(self, register):
        register(SugarLayer("quit", "", {}, lambda module, ctx: self.leave()))


class FormatQuitter(Quitter):
    """Only the report format (its loader and sugar layer not registered)."""

    serq_register_loaders = None
    serq_frontend_register_sugar = None


HOWS = [("exit 0", "SystemExit: 0"), ("exit 3", "SystemExit: 3"), ("farewell", "Farewell: bye")]


def named(e, during: str, what: str) -> None:
    head = str(getattr(e, "value", e)).partition("\n")[0]
    assert head.startswith("error: plugin 'quitter'") and "failed in Quitter.leave" in head, head
    assert f"during {during}: {what} at " in head and head.endswith(f"{__file__}:{head.rsplit(':', 1)[1]}")


@pytest.mark.parametrize(("how", "what"), HOWS)
def test_a_loader_that_exits(tmp_path, how, what):
    pm = get_plugin_manager(plugins=[])
    pm.register(Quitter(how), name="quitter")
    (tmp_path / "x.quit").write_text("")
    with pytest.raises(PluginError) as e:
        load_program(pm, tmp_path / "x.quit")
    named(e, "its loader for .quit files", what)


@pytest.mark.parametrize(("how", "what"), HOWS)
def test_a_report_format_that_exits(how, what):
    pm = get_plugin_manager()
    report = serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)
    pm.register(Quitter(how), name="quitter")
    with pytest.raises(PluginError) as e:
        serq_report.render(report, "quit", pm=pm)
    named(e, "its report format quit", what)


@pytest.mark.parametrize(("how", "what"), HOWS)
def test_a_sugar_layer_that_exits(how, what):
    pm = get_plugin_manager()
    pm.register(Quitter(how), name="quitter")
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(source=PROGRAM, pm=pm)
    named(e, "the compile", what)


def test_serq_run_with_a_report_format_that_exits(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    pm = get_plugin_manager()
    pm.register(FormatQuitter("exit 0"), name="quitter")
    r = CliRunner().invoke(build_cli(pm), ["run", str(tmp_path / "p.sq"), "--format", "quit", "--no-progress"],
                           obj=pm)
    # not the status 0 of the plugin's exit: the command's one handler prints the PluginError, status 1
    assert isinstance(r.exception, PluginError) and r.stdout == ""
    named(r.exception, "its report format quit", "SystemExit: 0")


class Stuck:
    """A stage kind whose attach is where Ctrl-C lands (it would not return), and one subclassing a built-in
    kind whose constructor fails on the plugin's node."""

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        from serq_sim.stages import FifoStage, StageKind

        class Spinning(StageKind):
            def attach(self, job):
                raise KeyboardInterrupt  # (Ctrl-C while it spins)

        class Borrowed(FifoStage):
            pass

        register("spinning", Spinning)
        register("borrowed", Borrowed)


def test_ctrl_c_in_a_plugins_stage_kind_names_it_in_the_partial_report():
    pm = get_plugin_manager()
    pm.register(Stuck(), name="stuck")
    program = serq_frontend.compile(source=PROGRAM.replace(": delay", ": @spinning"), pm=pm)
    report = serq_sim.run(program, pm=pm)
    assert report.result.partial == "interrupted"
    note = [n for n in report.result.notes if n.startswith("note: interrupted")]
    line = Stuck.serq_sim_register_stage_kinds.__code__.co_firstlineno + 6
    # the statement the session ran (its `run s (1);`, line 3, column 11: the stage's attach is called from
    # it) and the plugin's code the interrupt came in
    col = PROGRAM.splitlines()[2].index("run") + 1
    assert note == [f"note: interrupted at <source>:3:{col}, session 0 (in plugin 'stuck': "
                    "Stuck.serq_sim_register_stage_kinds.<locals>.Spinning"
                    f".attach at {__file__}:{line}) at t=0; the figures cover what was simulated"], note


def test_a_kind_that_fails_in_a_method_it_inherits_is_the_plugins_failure():
    # no line of the plugin's raised (FifoStage's constructor read the servers of the plugin's node): the
    # plugin's object failed, named with serQ's line, not a traceback blaming serQ
    pm = get_plugin_manager()
    pm.register(Stuck(), name="stuck")
    program = serq_frontend.compile(source=PROGRAM.replace(": delay", ": @borrowed"), pm=pm)
    with pytest.raises(PluginError) as e:
        serq_sim.run(program, pm=pm)
    head = str(e.value).partition("\n")[0]
    assert head.startswith("error: plugin 'stuck' failed in Stuck.serq_sim_register_stage_kinds.<locals>.Borrowed.__init__ "
                           "(inherited from FifoStage.__init__) "
                           "during the run: AttributeError: "), head
    assert "serq_sim/stages.py:" in head


def test_ctrl_c_in_a_plugins_hook_names_it(tmp_path):
    site = tmp_path / "site"
    info = site / "stuck-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stuck\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nstuck = stuck_plugin\n")
    (site / "stuck_plugin.py").write_text("from serq import hookimpl\n\n\n@hookimpl\n"
                                          "def serq_sim_register_stage_kinds(register):\n"
                                          "    raise KeyboardInterrupt  # (Ctrl-C while it spins)\n")
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-m", "serq", "run", "p.sq", "--no-progress"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": str(site)})
    assert r.returncode == 130
    assert (f"serq: interrupted in plugin 'stuck' (from stuck 1.0): serq_sim_register_stage_kinds at "
            f"{site / 'stuck_plugin.py'}:6\n") in r.stderr, r.stderr
