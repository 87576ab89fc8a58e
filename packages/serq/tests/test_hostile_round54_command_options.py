"""A third party's command two of whose parameters take one option's name (``@click.option("--x", "-x")``
and ``@click.option("--x", "-y", "x2")``): click gives ``--x`` to the last of them, and warned of it in
Python's words at each of its parses, four ``UserWarning: The parameter --x is used more than once`` with
the lines of serQ's code that parsed. It is one line now, when the command is parsed, naming the command,
its plugin and what ``--x`` sets (serq.cli._option_clash); the command runs as before. ``serq --help``, which
lists it, says nothing of it."""

from __future__ import annotations

import os
import subprocess
import sys

import click
from serq.cli import _option_clash

PLUGIN = """
import click
from serq import hookimpl


@click.command("hello")
@click.option("--x", "-x")
@click.option("--x", "-y", "x2")
def hello(x, x2):
    click.echo(f"x={x} x2={x2}")


@hookimpl
def serq_register_commands(register):
    register(hello)
"""

WARNING = ("warning: the command 'hello' (registered by clash54 (serq-clash54 0.1.0)) gives the option --x to "
           "two of its parameters, x and x2: --x sets x2 alone")


def serq(tmp_path, *args):
    site = tmp_path / "site"
    info = site / "serq_clash54-0.1.0.dist-info"
    if not info.exists():
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-clash54\nVersion: 0.1.0\n")
        (info / "entry_points.txt").write_text("[serq]\nclash54 = clash54_command\n")
        (site / "clash54_command.py").write_text(PLUGIN)
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run([sys.executable, "-m", "serq", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_clash_is_one_line_naming_the_plugin(tmp_path):
    r = serq(tmp_path, "hello", "-x", "1", "--x", "5")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "x=1 x2=5\n"
    assert r.stderr == WARNING + "\n"
    r = serq(tmp_path, "--help")
    assert r.returncode == 0 and "hello" in r.stdout
    assert r.stderr == ""


def test_what_is_a_clash():
    @click.command("a")
    @click.option("--x", "-x")
    @click.option("--y", "-x", "y")
    def a(x, y):
        pass

    assert _option_clash(a, None) == ("warning: the command 'a' gives the option -x to two of its parameters, x "
                                      "and y: -x sets y alone")

    @click.command("b")
    @click.option("--flag/--no-flag")
    @click.option("--x", "-x")
    def b(flag, x):
        pass

    assert _option_clash(b, "p (d 1)") is None
