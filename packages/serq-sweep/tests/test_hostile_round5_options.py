"""``serq compare -o`` is checked before any run, and ``serq sweep``'s options that do nothing where they are
given are refused, as ``--records`` beside ``--find`` and ``--over`` without ``--find`` are.

* ``serq compare … -o missing/c.csv`` (a folder that does not exist, a path under ``/dev`` that does not
  exist) ran every run of both arms and printed the comparison, then failed (``error: missing/c.csv: No
  such file or directory``), its table lost: ``serq sweep -o`` and ``--find -o`` refuse such a table first.
  The three go through one check (``serq_sweep.core.check_table``).
* ``serq sweep --tol X`` without ``--find``, and ``--show`` or ``--fresh`` with it, were ignored, status 0:
  each is a usage error (status 2) naming what it goes with.
* ``--over NAME`` of a name the program has no ``let`` of said ``--set NAME: the program has no `let NAME```,
  naming a flag the command line did not give: it names ``--over``, before the search.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 50; seed 1; }
"""


def _serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([SERQ, *args, "--workers", "0", "--no-progress"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("out, message", [
    ("missing/c.csv", "error: missing/c.csv: no folder missing to write it in"),
    ("/dev/serq-no-such.csv", "error: /dev/serq-no-such.csv: no such file (a path under /dev is written through "
                              "to what is there, never created)"),
])
def test_a_comparison_table_the_write_would_refuse_is_refused_before_the_runs(tmp_path, out, message):
    r = _serq(tmp_path, "compare", "p.sq", "--set", "lam=0.3,0.4", "--seeds", "1..3", "-o", out)
    assert r.returncode == 1, r.stderr
    assert r.stderr == message + "\n"
    assert r.stdout == ""  # nothing ran: the comparison was printed, then the table refused


def test_a_comparison_table_is_written_where_it_may_be(tmp_path):
    r = _serq(tmp_path, "compare", "p.sq", "--set", "lam=0.3,0.4", "--seeds", "1..3", "-o", "c.csv")
    assert r.returncode == 0, r.stderr
    assert "response" in r.stdout and (tmp_path / "c.csv").read_text().startswith("arm,base,figure,")


FIND = ["--find", "response.mean <= 2", "--over", "lam", "0.1:0.9"]


@pytest.mark.parametrize("args, message", [
    (["--set", "lam=0.3,0.4", "--tol", "0.1"], "--tol goes with --find and --over (the search's bracket)"),
    ([*FIND, "--show", "response.mean"], "--show is not for --find (the search prints its own table)"),
    ([*FIND, "--fresh", "-o", "f.csv"], "--fresh is not for --find (a search does not resume: it runs everything)"),
])
def test_an_option_that_does_nothing_here_is_a_usage_error(tmp_path, args, message):
    r = _serq(tmp_path, "sweep", "p.sq", "--seeds", "1..2", *args)
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"error: {message} (see 'serq sweep --help')\n"
    assert r.stdout == "" and not (tmp_path / "f.csv").exists()


def test_the_options_where_they_belong_still_run(tmp_path):
    r = _serq(tmp_path, "sweep", "p.sq", "--seeds", "1..2", *FIND, "--tol", "0.2")
    assert r.returncode == 0, r.stderr
    assert "lam" in r.stdout


def test_a_knob_that_is_no_let_is_named_by_its_flag_before_the_search(tmp_path):
    # its values reach the program as --set: the error said "--set nope: the program has no `let nope`", a
    # flag the command line did not give, after the pool had started
    r = _serq(tmp_path, "sweep", "p.sq", "--find", "response.mean <= 2", "--over", "nope", "0.1:0.9")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == "error: p.sq: --over nope: the program has no `let nope` (the knob --find searches is a let)\n"
