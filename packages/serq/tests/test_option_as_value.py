"""An option that takes a value, followed where its value belongs by another option of the command, is a
usage error naming the option whose value was left out, in every command (``serq.cli.once_only``).

``serq plot r.csv --cdf -o cdf.svg`` (``--cdf`` written without the metric's name) said ``missing option
'-o' / '--out'`` of a command line that gives ``-o``: click took ``-o`` as ``--cdf``'s value, and then
missed the picture. ``serq run p.sq --set --json`` took ``--json`` as the ``--set``. A value that only
starts with ``-`` is still the option's (``--warmup -1`` is refused for its number), as is anything written
``--opt=value``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); observe x = now; }
run { horizon 5; seed 1; }
"""


def _serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "r.csv").write_text("session,turn,time,sent,first_token,last_token,output\n0,1,2,0,1,2,2\n")
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("args", "said"), [
    (["plot", "r.csv", "--cdf", "-o", "c.svg"],
     "error: --cdf takes a value, and -o where it belongs is an option of this command: give --cdf its value "
     "before -o (see 'serq plot --help')\n"),
    (["run", "p.sq", "--set", "--json"],
     "error: --set takes a value, and --json where it belongs is an option of this command: give --set its "
     "value before --json (see 'serq run --help')\n"),
    (["run", "p.sq", "-o", "--records", "r2.csv"],
     "error: -o takes a value, and --records where it belongs is an option of this command: give -o its value "
     "before --records (see 'serq run --help')\n"),
    # an option of two values (--over NAME RANGE), its second left out
    (["sweep", "p.sq", "--find", "observes.x.mean <= 3", "--over", "lam", "--seeds", "1..2"],
     "error: --over takes a value, and --seeds where it belongs is an option of this command: give --over its "
     "value before --seeds (see 'serq sweep --help')\n"),
])
def test_an_option_where_a_value_belongs_is_named(tmp_path, args, said):
    r = _serq(tmp_path, *args)
    assert (r.returncode, r.stderr, r.stdout) == (2, said, "")
    assert not (tmp_path / "c.svg").exists() and not (tmp_path / "r2.csv").exists()


def test_values_that_start_with_a_dash_are_the_options_own(tmp_path):
    # a negative number is the option's value, refused for what it is
    r = _serq(tmp_path, "run", "p.sq", "--warmup", "-1")
    assert r.returncode == 2 and "'--warmup': -1 is not a finite number of seconds" in r.stderr, r.stderr
    # --opt=value is a value whatever it says: --set's own rule refuses it
    r = _serq(tmp_path, "run", "p.sq", "--set=--json")
    assert r.returncode == 2 and "--set" in r.stderr and "where it belongs" not in r.stderr, r.stderr
    # flags between options, and options in any order, are as before
    r = _serq(tmp_path, "run", "p.sq", "--json", "--seed", "2", "--no-progress")
    assert r.returncode == 0 and '"seed": 2' in r.stdout, r.stderr
    # the right command line draws
    r = _serq(tmp_path, "plot", "r.csv", "--cdf", "e2el", "-o", "c.svg")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "c.svg").exists()
