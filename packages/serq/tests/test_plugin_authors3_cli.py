"""Third parties' plugins written from docs/hooks.md alone, installed as a wheel leaves them (a package and
a ``*.dist-info`` with its ``METADATA`` and ``entry_points.txt`` in a folder on ``PYTHONPATH``), run through
``serq``: a command that prints a program's pools (``serq pools FILE``, loading the program as ``serq run``
does, ``--set`` included), a Markdown table format registered as ``md`` (so ``-o report.md`` writes it), and
two distributions whose sugar layers write one statement, told in one message naming the later plugin."""

from __future__ import annotations

import json

import pytest
from host_helpers import run_serq

pytestmark = pytest.mark.timeout(120)

ACME = '''import click
from serq import hookimpl


@click.command("pools")
@click.argument("file")
@click.option("--set", "sets", multiple=True, help="NAME=VALUE")
@click.pass_obj
def pools_command(pm, file, sets):
    """Print a program's pools: name, members, capacity, block."""
    from serq.errors import UserError
    from serq.loading import LoadOptions, load_program

    values = {}
    for s in sets:
        name, eq, value = s.partition("=")
        try:
            values[name] = float(value)
        except ValueError:
            raise UserError(f"error: --set {s}: not NAME=NUMBER") from None
    program = load_program(pm, file, LoadOptions(sets=values))
    for p in program.pools:
        click.echo(f"{p.name} {p.size} {p.cap} {p.block}")


def markdown(report, out):
    out.write("| stage | completions | utilisation |\\n|---|---:|---:|\\n")
    for s in report.result.stages:
        out.write(f"| {s.name} | {s.completions} | {s.utilisation:.6g} |\\n")


@hookimpl
def serq_register_commands(register):
    register(pools_command)


@hookimpl
def serq_report_register_formats(register):
    register("md", markdown)
'''

SUGAR = '''from dataclasses import dataclass
from typing import Any

from serq import hookimpl
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer

LAYER, RULE, VALUE = "LAYER_", "s_LAYER_", VALUE_


@dataclass(slots=True, eq=False)
class STally(A.Node):
    name: Any
    pos: Any
    EXPRS = ()


def build(ctx, pos, children):
    return STally(str(children[0]), pos)


def rewrite(module, ctx):
    def tally(s):
        return [A.SObserve(s.name, A.Num(VALUE, s.pos), s.pos)] if isinstance(s, STally) else None

    return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, tally)) for i in module.items],
                    module.file)


@hookimpl
def serq_frontend_register_sugar(register):
    register(SugarLayer(LAYER, '%extend stmt: "tally" NAME ";" -> ' + RULE + "\\n", {RULE: build}, rewrite))
'''


def _install(folder, dist: str, name: str, module: str, text: str) -> None:
    info = folder / f"{dist.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[serq]\n{name} = {module}\n")
    (folder / f"{module}.py").write_text(text)


PROGRAM = """let N = 2;
pool kv[N] { cap 64; block 16; }
pool b { cap 3; }
stage s : fifo(1);
workload { arrive batch(2); }
session { hold kv[0] (1) { run s (1); } }
run { horizon 10; }
"""


@pytest.fixture
def site(tmp_path):
    folder = tmp_path / "site"
    _install(folder, "serq-acme", "acme", "acme3_plugin", ACME)
    (tmp_path / "P.sq").write_text(PROGRAM)
    return {"PYTHONPATH": str(folder)}


def test_the_command_prints_the_pools_with_the_sets_applied(site, tmp_path):
    got = run_serq("pools", str(tmp_path / "P.sq"), "--set", "N=3", env=site)
    assert (got.returncode, got.stdout, got.stderr) == (0, "kv 3 64.0 16.0\nb 1 3.0 None\n", "")
    got = run_serq("pools", str(tmp_path / "P.sq"), "--set", "M=3", env=site)
    assert (got.returncode, got.stdout) == (1, "")
    assert got.stderr == f"{tmp_path / 'P.sq'}: error: --set M: the program has no `let M`\n"
    got = run_serq("pools", str(tmp_path / "P.sq"), "--set", "N=x", env=site)
    assert (got.returncode, got.stderr) == (1, "error: --set N=x: not NAME=NUMBER\n")


def test_a_format_named_as_its_files_are_suffixed_is_chosen_by_the_file(site, tmp_path):
    """Two sessions of work 1 at a fifo(1): done at 1 and 2, busy 2 of 10."""
    out = tmp_path / "report.md"
    got = run_serq("run", str(tmp_path / "P.sq"), "-o", str(out), env=site)
    assert (got.returncode, got.stdout) == (0, "")
    assert out.read_text() == "| stage | completions | utilisation |\n|---|---:|---:|\n| s | 2 | 0.2 |\n"


def test_two_plugins_writing_one_statement_are_one_message(tmp_path):
    folder = tmp_path / "site"
    for dist, name, value in (("serq-one", "one", "1.0"), ("serq-two", "two", "2.0")):
        _install(folder, dist, name, f"sugar3_{name}", SUGAR.replace("LAYER_", name).replace("VALUE_", value))
    (tmp_path / "T.sq").write_text("stage d : delay;\nworkload { arrive batch(1); }\nsession { tally n; }\n"
                                   "run { horizon 1; }\n")
    got = run_serq("run", str(tmp_path / "T.sq"), env={"PYTHONPATH": str(folder)})
    assert (got.returncode, got.stdout) == (1, "")
    first, second = got.stderr.splitlines()
    assert first.startswith("error: plugin 'two' (from serq-two 0.1.0) registers the sugar layer 'two', whose grammar "
                            "does not build beside the sugar layer 'one' of one (serq-one 0.1.0): GrammarError: ")
    assert second == "(run without it: SERQ_DISABLED_PLUGINS=two, or uninstall serq-two)"
    alone = run_serq("run", str(tmp_path / "T.sq"), "--format", "json",
                     env={"PYTHONPATH": str(folder), "SERQ_DISABLED_PLUGINS": "two"})
    assert alone.returncode == 0, alone.stderr
    n = json.loads(alone.stdout)["observes"]["n"]
    assert (n["count"], n["mean"]) == (1, 1.0)  # one's statement, observing 1
