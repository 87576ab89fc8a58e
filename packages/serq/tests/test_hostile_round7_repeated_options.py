"""An option of one value given twice is a usage error, in every command.

``serq run p.sq --seed 1 --seed 2`` ran the seed 2 (click keeps the last value), while ``--set x=1 --set x=2``
is an error: a script that adds ``--seed`` to a command line that had one ran another experiment than it
said. The rule is put once, in the ``serq`` group (``serq.cli.once_only``), so every command of every part
(a plugin's too, and the ``serq vllm`` group's) has it. Options of several values (``--set``, ``--show``,
``--figure``), counted ones and flags (``--json --json``) are not refused.

Also: click's parser raised "option '--seed' requires an argument" without its command, and the message
pointed at ``serq --help`` instead of ``serq run --help``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from serq.cli import main, once_only

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); observe x = now; }
run { horizon 5; seed 1; }
"""


def _serq(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``tmp_path`` (``p.sq`` written there), as a child process; given ``here``
    (serq_in_process), serq.cli.main in the test's process, in that folder (a test of what is said)."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("args", "said"), [
    (["run", "p.sq", "--seed", "1", "--seed", "2"], "error: --seed is given twice (1 and 2)"),
    (["run", "p.sq", "--horizon", "1", "--horizon", "2", "--horizon", "3"],
     "error: --horizon is given 3 times (1, 2 and 3)"),
    (["run", "p.sq", "-o", "a.txt", "--output", "b.txt"], "error: -o/--output is given twice (a.txt and b.txt)"),
    (["run", "p.sq", "--warmup", "1", "--warmup", "1"], "error: --warmup is given twice (1 and 1)"),
    (["run", "p.sq", "--format", "json", "--format", "text"], "error: --format is given twice"),
    (["ir", "p.sq", "--arrivals", "2", "--arrivals", "3"], "error: --arrivals is given twice"),
    (["sweep", "p.sq", "--seeds", "1", "--seeds", "2"], "error: --seeds is given twice"),
    (["sweep", "p.sq", "--over", "a", "1:2", "--over", "b", "1:3"], "error: --over is given twice (a 1:2 and b 1:3)"),
    (["compare", "p.sq", "--workers", "0", "--workers", "1"], "error: --workers is given twice"),
    (["fit", "steps.jsonl", "--name", "a", "--name", "b"], "error: --name is given twice"),
    (["vllm", "real", "x.json", "--timeout", "1", "--timeout", "2"], "error: --timeout is given twice"),
    (["vllm", "target", "p.sq", "--set", "x=1"], None),  # (--set is several values: not this rule)
])
def test_an_option_of_one_value_given_twice_is_a_usage_error(tmp_path, serq_in_process, args, said):
    # (run's and the second sweep's in the test's process; the first of each other command as a child process,
    # as run's in the tests below)
    r = _serq(tmp_path, *args, here=serq_in_process if args[0] == "run" or "--over" in args else None)
    if said is None:
        assert "given twice" not in r.stderr, r.stderr
        return
    assert r.returncode == 2, r.stderr
    line, = r.stderr.splitlines()
    command = " ".join(a for a in args[:2] if a in ("run", "ir", "sweep", "compare", "fit", "vllm", "real"))
    assert line.startswith(said) and line.endswith(f"; it takes one value: give it once (see 'serq {command} --help')"), \
        line
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()


def test_a_flag_given_twice_and_options_of_several_values_are_taken(tmp_path):
    r = _serq(tmp_path, "run", "p.sq", "--json", "--json", "--no-progress", "--no-progress", "--set", "x=1")
    assert "given twice" not in r.stderr  # (--set x: the program has no let x; that error, not this rule)
    r = _serq(tmp_path, "run", "p.sq", "--json", "--json", "--no-progress", "--no-progress")
    assert r.returncode == 0, r.stderr


def test_a_missing_value_names_the_command_it_is_of(tmp_path, serq_in_process):
    r = _serq(tmp_path, "run", "p.sq", "--seed", here=serq_in_process)
    assert r.returncode == 2 and r.stderr == "error: option '--seed' requires an argument (see 'serq run --help')\n"
    r = _serq(tmp_path, "vllm", "real", "x.json", "--timeout")
    assert r.returncode == 2 and r.stderr.endswith("(see 'serq vllm real --help')\n"), r.stderr


def test_a_plugins_command_has_the_rule_too():
    # what a part registers is its own click command: the group applies the rule as it looks it up
    @click.command("mine")
    @click.option("--level", type=int, default=0)
    def mine(level):
        click.echo(f"level {level}")

    once_only(mine)
    runner = CliRunner()
    ok = runner.invoke(mine, ["--level", "2"], standalone_mode=False)
    assert ok.exception is None and ok.output == "level 2\n"
    bad = runner.invoke(mine, ["--level", "2", "--level", "3"], standalone_mode=False)
    assert isinstance(bad.exception, click.UsageError)
    assert str(bad.exception) == "--level is given twice (2 and 3); it takes one value: give it once"
    assert once_only(mine) is mine  # applied again: the same command, checked once


def test_the_rule_in_process(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(SystemExit) as e:
        main(["check", "p.sq"])
    assert e.value.code == 0
    with pytest.raises(SystemExit) as e:
        main(["ir", "p.sq", "--seed", "3", "--seed", "3"])
    assert e.value.code == 2
    assert "error: --seed is given twice (3 and 3)" in capsys.readouterr().err
