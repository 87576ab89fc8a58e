"""A number on the command line beyond the doubles (``1e309``) is refused as such, by every flag that reads one.

``serq.numbers.number`` read ``1e309`` as ``float()`` does, inf, so ``--horizon 1e309`` ran as ``--horizon inf``
without a word, and the error of a run with no end then said "horizon inf"; ``--set lam=1e400`` made a rate of
inf. Now the one reader refuses it (serq.numbers.beyond_doubles), and every number flag, ``--set`` value, sweep
list and range, ``--slo``, ``--find`` and trace cell says so; ``inf`` is still infinity."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from serq.numbers import NotANumber, not_whole, number

SERQ = str(Path(sys.executable).parent / "serq")
BEYOND = ("is beyond the range of a double (at most about 1.8e308 in size); an infinite value is written inf or "
          "-inf")
PROGRAM = """\
let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t = now; run s (1); observe r = now - t; }
run { horizon 10; }
"""


@pytest.mark.parametrize("text", ["1e309", "-1e309", "1e999", "2e308", "17976931348623159" + "0" * 292 + ".5"])
def test_the_reader_refuses_a_literal_beyond_the_doubles(text):
    with pytest.raises(NotANumber) as e:
        number(text)
    assert str(e.value).endswith(BEYOND)


def test_the_largest_double_and_inf_are_read():
    assert number("1.7976931348623157e308") == sys.float_info.max
    assert number("inf") == math.inf and number("-inf") == -math.inf
    assert number("5e-324") == 5e-324 and number("0e-400") == 0.0  # (1e-400 is refused, as the language does)
    # a count of 1e400 is still no whole number (in digits or not)
    assert not_whole("1e400") == "'1e400' is not a whole number"


@pytest.mark.parametrize(("args", "said"), [
    (["run", "{p}", "--horizon", "1e309"], f"error: invalid value for '--horizon': '1e309' {BEYOND} (see 'serq run --help')"),
    (["run", "{p}", "--warmup", "-1e309"], f"error: invalid value for '--warmup': '-1e309' {BEYOND} (see 'serq run --help')"),
    (["run", "{p}", "--set", "lam=1e400"], f"error: --set lam=1e400: '1e400' {BEYOND}"),
    (["run", "{p}", "--slo", "ttft=1e309"],
     f"error: invalid value for --slo: 'ttft=1e309': '1e309' {BEYOND} (see 'serq run --help')"),
    (["sweep", "{p}", "--set", "lam=1,1e999"], f"error: --set lam: '1e999' {BEYOND}"),
    (["sweep", "{p}", "--set", "lam=1:1e309:1"], f"error: --set lam: '1e309' {BEYOND}"),
    (["compare", "{p}", "--set", "lam=1,2", "--horizon", "1e309"],
     f"error: invalid value for '--horizon': '1e309' {BEYOND} (see 'serq compare --help')"),
])
def test_every_flag_says_it(tmp_path, args, said):
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    r = subprocess.run([SERQ, *[a.format(p=p) for a in args]], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stderr.strip(), r.stdout) == (2, said, "")


def test_a_trace_cell_beyond_the_doubles(tmp_path):
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n1,1,5,5,1e309,0\n")
    p = tmp_path / "p.sq"
    p.write_text('stage s : fifo;\nworkload { arrive batch(1); trace "t.csv"; }\nsession { run s (1); }\nrun { horizon inf; }\n')
    r = subprocess.run([SERQ, "run", str(p)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"t.csv:2:9: error: column think: '1e309' {BEYOND}" in r.stderr, r.stderr
