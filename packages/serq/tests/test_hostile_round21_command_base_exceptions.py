"""A plugin's command that raises a BaseException of its own, neither ``SystemExit`` (its exit status) nor
Ctrl-C: ``GeneratorExit``, or a class of the plugin's deriving from BaseException. docs/hooks.md, "When a
plugin misbehaves", makes it the plugin's failure, named, as in a hook, the run, a loader, a report format
or a sugar layer; from a command ``serq`` printed a Python traceback (serq.cli's handler named only an
Exception)."""

from __future__ import annotations

import pytest
from host_helpers import run_serq

pytestmark = pytest.mark.timeout(60)

HINT = "(run without it: SERQ_DISABLED_PLUGINS=basecmd, or uninstall basecmdplug)"

MODULE = '''import click
from serq import hookimpl


class Farewell(BaseException):
    pass


@click.command("bye")
def bye():
    raise Farewell("the command leaves")


@click.command("gen")
def gen():
    raise GeneratorExit("closed")


@click.command("fine")
def fine():
    click.echo("fine")


@hookimpl
def serq_register_commands(register):
    for command in (bye, gen, fine):
        register(command)
'''


@pytest.fixture
def site(tmp_path):
    info = tmp_path / "basecmdplug-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: basecmdplug\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text("[serq]\nbasecmd = r21_basecmd\n")
    (tmp_path / "r21_basecmd.py").write_text(MODULE)
    return tmp_path


@pytest.mark.parametrize(("command", "shown", "line"), [
    ("bye", "Farewell: the command leaves", 11),
    ("gen", "GeneratorExit: closed", 16),
])
def test_a_commands_own_base_exception_is_one_message_naming_the_plugin(site, command, shown, line):
    r = run_serq(command, env={"PYTHONPATH": str(site)}, cwd=site)
    assert "Traceback" not in r.stderr, r.stderr
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.splitlines() == [
        f"error: plugin 'basecmd' (from basecmdplug 0.3) failed in {command}: {shown} at "
        f"{site / 'r21_basecmd.py'}:{line}",
        HINT]


def test_the_plugins_other_command_runs(site):
    r = run_serq("fine", env={"PYTHONPATH": str(site)}, cwd=site)
    assert (r.returncode, r.stdout, r.stderr) == (0, "fine\n", "")
