"""``--def NAME=BODY`` written with the definition's parameters (``--def 'out(i)=i == 0 ? 2 : 5'``) says how
to write it: the definition's name alone, its body reading the parameters. It said ``the program has no
expression definition `out(i)` (did you mean `out`?)``, which leaves the user to guess whether the
parameters go, and what the body then reads. A name of no definition keeps the hint of a close one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """def out(i) = 16 * i;
def two(a, b) = a + b;
def svc() = ~exp(1);

stage s : fifo(1);

workload {
  arrive poisson(0.5);
}

session {
  run s (svc() + out(serial % 2) + two(1, 2));
}

run { horizon 10; seed 1; }
"""


@pytest.mark.parametrize("given, words", [
    ("out(i)=i", "--def out(i): the program has no expression definition `out(i)`: give the body of the definition "
                 "`out` with --def out, its name alone, without parentheses; its body reads the parameter `i`"),
    ("two(a,b)=a", "--def two(a,b): the program has no expression definition `two(a,b)`: give the body of the "
                   "definition `two` with --def two, its name alone, without parentheses; its body reads the "
                   "parameters `a`, `b`"),
    ("svc()=1", "--def svc(): the program has no expression definition `svc()`: give the body of the definition "
                "`svc` with --def svc, its name alone, without parentheses; it has no parameter"),
    # not a definition's head: the close name, as before
    ("ot(i)=i", "--def ot(i): the program has no expression definition `ot(i)`"),
])
def test_the_command_line_says_to_leave_the_parameters_out(tmp_path, given, words):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "--def", given], cwd=tmp_path, capture_output=True,
                       text=True, timeout=50)
    assert (r.returncode, r.stdout) == (1, ""), r.stderr
    assert r.stderr.startswith(f"p.sq: error: {words}"), r.stderr
    assert "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_the_api_names_its_keyword_and_the_name_alone_compiles():
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=PROGRAM, defs={"out(i)": "i"})
    assert str(e.value).endswith("defs['out(i)']: the program has no expression definition `out(i)`: give the body "
                                 "of the definition `out` with defs['out'], its name alone, without parentheses; "
                                 "its body reads the parameter `i`")
    # the form the message gives compiles, the body reading the parameter
    serq_frontend.compile(source=PROGRAM, defs={"out": "i + 1", "two": "a * b", "svc": "1"})
