"""A nonzero number literal below the smallest double (``let x = 0.8e-400;``) was read as 0 without a word,
where one beyond the largest (``1e999``) is refused. Each is refused now, in a program at the literal and on
the command line (a number flag, ``--set``, a sweep's list and range, ``--slo``), by the one rule of
serq.numbers (``below_doubles``). A literal whose digits are all 0 (``0e-400``) is 0, and a subnormal double
(``5e-324``, ``2.5e-320``) is read as it is. Programs that compile are compiled as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.numbers import NotANumber, OutOfRange, number
from sqhelpers import compile_src, refused

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
BASE = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"
BELOW = ("is too close to 0 for a double (the nearest to 0 is about 4.9e-324 in size) and would be read as 0; "
         "zero is written 0")
#: the same in a program's words: its source text between backquotes, as every message of the frontend quotes it
PROGRAM_BELOW = BELOW.replace("written 0", "written `0`")


@pytest.mark.parametrize("text", ["0.8e-400", "1e-324", "2.4e-324", "-1e-400", "1E-999", "00.0001e-321",
                                  "1" + "0" * 400 + "e-800"])
def test_the_reader_refuses_a_nonzero_literal_that_would_be_0(text):
    with pytest.raises(OutOfRange) as e:
        number(text)
    assert isinstance(e.value, NotANumber)
    assert str(e.value).endswith(BELOW)
    assert str(e.value).startswith(repr(text)[:30])


@pytest.mark.parametrize("text, value", [
    ("5e-324", 5e-324),            # the least subnormal double
    ("2.5e-324", 5e-324),          # rounds up to it (above half of it)
    ("2.5e-320", 2.5e-320),
    ("2.2250738585072014e-308", 2.2250738585072014e-308),  # the least normal double
    ("0e-400", 0.0), ("0.000e-999", 0.0), ("0", 0.0), ("-0.0", -0.0),  # written as zero
])
def test_subnormals_and_zeros_are_read(text, value):
    assert number(text) == value


@pytest.mark.parametrize("src, text", [
    ("let x = ⟨0.8e-400;\n" + BASE, "0.8e-400"),
    ("let x = -⟨1e-400;\n" + BASE, "1e-400"),
    ("stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1 + ⟨3e-330); }\nrun { horizon 5; }\n",
     "3e-330"),
    ("pool p { cap ⟨1E-999; }\n" + BASE, "1E-999"),
])
def test_a_program_literal_is_refused_at_it(src, text):
    e = refused(src, PROGRAM_BELOW)
    assert f"`{text}` {PROGRAM_BELOW}" in str(e).splitlines()[0]


def test_a_subnormal_and_a_zero_compile_as_before():
    (a, b, c) = compile_src("let a = 5e-324;\nlet b = 0e-400;\nlet c = 2.5e-320;\n" + BASE).constants
    assert (float(a.value), float(b.value), float(c.value)) == (5e-324, 0.0, 2.5e-320)
    # the same values as written otherwise
    same = compile_src("let a = 4.9406564584124654e-324;\nlet b = 0;\nlet c = 25e-321;\n" + BASE)
    assert [float(k.value) for k in same.constants] == [5e-324, 0.0, 2.5e-320]


PROGRAM = """\
let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t = now; run s (1); observe r = now - t; }
run { horizon 10; }
"""


@pytest.mark.parametrize(("args", "said"), [
    (["run", "{p}", "--horizon", "1e-400"], f"error: invalid value for '--horizon': '1e-400' {BELOW} (see 'serq run --help')"),
    (["run", "{p}", "--set", "lam=0.8e-400"], f"error: --set lam=0.8e-400: '0.8e-400' {BELOW}"),
    (["run", "{p}", "--slo", "ttft=1e-330"],
     f"error: invalid value for --slo: 'ttft=1e-330': '1e-330' {BELOW} (see 'serq run --help')"),
    (["sweep", "{p}", "--set", "lam=1,1e-999"], f"error: --set lam: '1e-999' {BELOW}"),
    (["sweep", "{p}", "--set", "lam=1e-400:1:0.5"], f"error: --set lam: '1e-400' {BELOW}"),
])
def test_every_flag_says_it(tmp_path, args, said):
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    r = subprocess.run([SERQ, *[a.format(p=p) for a in args]], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode in (1, 2) and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip() == said
    assert r.stdout == ""


def test_a_subnormal_set_runs(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", str(p), "--set", "lam=5e-324", "--json"], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
