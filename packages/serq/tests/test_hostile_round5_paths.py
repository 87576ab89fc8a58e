"""Command-line values that named nothing serq uses, taken silently with status 0.

* ``-`` as a path: ``serq run p.sq -o -`` wrote the report to a new file named ``-`` in the current folder
  (other tools read it as standard output), and as an input it was looked up as a file. It is a usage
  error of every path parameter (``serq.options.Path``, as the empty name is); ``./-`` names such a file.
* ``serq ir FILE --schema`` printed the schema and ignored FILE (and ``--set``, ``--seed``, ``--no-spans`` …
  beside ``--schema``): a usage error naming what is not for it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); observe x = now; record r { y = now; } }
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
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args, command, param", [
    (["run", "p.sq", "-o", "-"], "run", "'-o' / '--output'"),
    (["run", "p.sq", "--dump", "-"], "run", "'--dump'"),
    (["run", "p.sq", "--trace", "-"], "run", "'--trace'"),
    (["check", "-"], "check", "'FILE'"),
    (["fmt", "-"], "fmt", "'FILES...'"),
    (["sweep", "p.sq", "-o", "-"], "sweep", "'-o' / '--out'"),
    (["plot", "p.sq", "-o", "-"], "plot", "'-o' / '--out'"),
])
def test_a_dash_is_no_file(tmp_path, serq_in_process, args, command, param):
    # (run's --dump and --trace in the test's process; the first of each command as a child process)
    r = _serq(tmp_path, *args, here=serq_in_process if args[2:3] in (["--dump"], ["--trace"]) else None)
    assert r.returncode == 2, r.stderr
    assert r.stderr == (f"error: invalid value for {param}: '-' names no file: serq reads and writes files by "
                        f"name, never standard input or output by '-' (./- names a file called -) "
                        f"(see 'serq {command} --help')\n")
    assert r.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_a_file_named_dash_is_named_by_its_folder(tmp_path):
    r = _serq(tmp_path, "run", "p.sq", "-o", "./-")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "-").read_text().startswith("run: horizon 5")


@pytest.mark.parametrize("args, what", [(["p.sq"], "FILE"), (["--no-spans"], "--no-spans"),
                                        (["--set", "a=1"], "--set"), (["--seed", "0"], "--seed"),
                                        (["--warmup", "0"], "--warmup"), (["--arrivals", "2"], "--arrivals")])
def test_schema_takes_nothing_for_a_program(tmp_path, serq_in_process, args, what):
    # (in the test's process; serq ir --schema alone, below, as a child process)
    r = _serq(tmp_path, "ir", "--schema", *args, here=serq_in_process)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (f"error: --schema prints the IR's JSON Schema, of no program: {what} is not for it "
                        "(see 'serq ir --help')\n")


def test_schema_alone_prints_it(tmp_path):
    r = _serq(tmp_path, "ir", "--schema")
    assert r.returncode == 0 and '"$defs"' in r.stdout, r.stderr
