"""A `--def` body that is a list of bodies.

A serving researcher put the waiting order in a definition, `def order() = 0;` and `queue by (order(), t0)`, and
compared three orders as `--set` compares values, `serq compare p.sq --def order=0,prompt,prio`. The sweep took
`0,prompt,prio` as one body and the compile said ``--def order:1:2: error: unexpected `,` (expected the end of
the file)``: a file the user never wrote, and not what to do. A body that does not parse and has a `,` outside
every parenthesis is now told at that `,` as a list: a body is one expression, and several bodies are several
values, one `--def` each (``defs=`` in Python: a list of bodies). A body whose commas are all inside
parentheses (`max(prompt, 1)`) compiles as before, and one broken otherwise keeps the parser's message.
(serq_frontend.context.Context.parse_expr, _top_level_comma; the IR of every program is unchanged.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_ir

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).with_name("serq"))
PROGRAM = """def order() = 0;
pool slots { cap 1; queue by (order(), t0); }
stage s : delay;

workload {
  arrive poisson(2);
}

session {
  set prompt = 1 + floor(~exp(2));
  set prio = ~bernoulli(0.5);
  set t0 = now;
  hold slots (1) {
    observe wait = now - t0;
    run s (prompt / 4);
  }
}

run { horizon 50; seed 1; }
"""
WORDS = ("a definition's body is one expression, and this `,` is outside any parentheses: several bodies are "
         "several values of a sweep, each given on its own")


def program(tmp_path: Path) -> Path:
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    return p


@pytest.mark.parametrize("body, col", [("0,prompt,prio", 2), ("max(prompt, 1), prio", 15), ("0 ,prio", 3)])
def test_a_list_of_bodies_is_told_at_its_comma(tmp_path, body, col):
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(path=str(program(tmp_path)), defs={"order": body})
    assert str(e.value).splitlines() == [f"defs['order']:1:{col}: error: {WORDS} (a list of bodies)", "  " + body,
                                         "  " + " " * (col - 1) + "^"]


def test_commas_inside_parentheses_are_one_body_and_other_errors_are_the_parsers(tmp_path):
    p = program(tmp_path)
    a = serq_frontend.compile(path=str(p), defs={"order": "max(prompt, 1)"})
    b = serq_frontend.compile(path=str(p), defs={"order": "max(prompt,1)"})
    assert serq_ir.encode_pretty(a, spans=False) == serq_ir.encode_pretty(b, spans=False)
    assert '"fn": "max"' in serq_ir.encode_pretty(a, spans=False)
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(path=str(p), defs={"order": "max(prompt, 1"})
    assert "a `)` is missing" in str(e.value) and "several bodies" not in str(e.value)


def test_serq_compare_says_to_give_each_body_its_own_def(tmp_path):
    p = program(tmp_path)
    common = ["--seeds", "1..2", "--no-progress", "--figure", "wait.mean"]
    # serq compare judges its arms before it compiles one (test_hostile_round49_compare_shape_first): the list
    # is one value of --def order, no comparison, and it says how a name is given two (status 2, a usage error)
    r = subprocess.run([SERQ, "compare", str(p), "--def", "order=0,prompt", *common], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("error: serq compare compares two or more programs, or one program under two or more values "
                        "of one --set or --def name: --def order=0,prompt gives one value, a setting of the one arm "
                        "there is, so there is nothing to compare it with; give a name two or more values to compare "
                        "them (--def order given again: --def order=EXPR), or give two or more FILEs\n"), r.stderr
    # serq sweep, which compiles it, tells the comma as a list's
    r = subprocess.run([SERQ, "sweep", str(p), "--def", "order=0,prompt", "--no-progress"], capture_output=True,
                       text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines()[:3] == [f"--def order:1:2: error: {WORDS} (--def order=A --def order=B)",
                                         "  0,prompt", "   ^"], r.stderr
    r = subprocess.run([SERQ, "compare", str(p), "--def", "order=0", "--def", "order=prompt", *common],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("order=prompt - order=0, paired over 2 seeds")
