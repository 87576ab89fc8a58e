"""A message that quotes an integer the Python API was given quotes one of more than 64 bits as ``an integer
of N bits`` (serq.numbers.shown, the one rule; serq_sim.run's arguments followed it already).

Python converts an int of more than 4300 digits to text not at all, so each message that quoted one by
``repr`` or ``str`` raised ``ValueError: Exceeds the limit (4300 digits) for integer string conversion``
instead of itself: ``serq_sweep.sweep(..., seeds=[10**5000])`` and ``serq_sweep.compare``'s (the seed rule,
serq_ir.rules.seed_problem), ``workers=10**5000``, a definition given as that int (``defs={"f": [10**5000]}``)
and ``report.stage("s", 10**5000)``; one of a few hundred digits was quoted whole.
"""

from __future__ import annotations

import numpy as np
import pytest
import serq_frontend
import serq_sim
import serq_sweep
from serq.errors import UserError
from serq.numbers import shown
from serq_ir.rules import seed_problem

pytestmark = pytest.mark.timeout(60)

B = 10**5000  # 5000 * log2(10) = 16609.6: 16610 bits
PROGRAM = """def f() = 0.5;
let lam = 1;
stage s : fifo;
workload { arrive poisson(lam); }
session { run s (f()); end; }
run { horizon 5; seed 1; }
"""


@pytest.fixture
def prog(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return str(tmp_path / "p.sq")


def test_the_rule():
    assert shown(B) == "an integer of 16610 bits" and shown(-(2**64)) == "an integer of 65 bits"
    assert shown(2**64 - 1) == "18446744073709551615" and shown(np.int64(-3)) == "np.int64(-3)"
    assert shown(True) == "True" and shown("x") == "'x'" and shown(0.5) == "0.5"


def test_a_seed_beyond_the_seeds():
    assert seed_problem(B) == "a seed is an integer from 0 to 2**64 - 1 (18446744073709551615), not an integer of 16610 bits"
    assert seed_problem(2**64) == ("a seed is an integer from 0 to 2**64 - 1 (18446744073709551615), not an "
                                   "integer of 65 bits")
    assert seed_problem(-1) == "a seed is an integer from 0 to 2**64 - 1 (18446744073709551615), not -1"


@pytest.mark.parametrize("call, kind, said", [
    (lambda p: serq_sweep.sweep(p, seeds=[B], workers=0, progress=False), UserError,
     "error: seeds: a seed is an integer from 0 to 2**64 - 1 (18446744073709551615), not an integer of 16610 bits"),
    (lambda p: serq_sweep.compare(p, sets={"lam": [1, 2]}, seeds=[1, B], workers=0, progress=False), UserError,
     "error: seeds: a seed is an integer from 0 to 2**64 - 1 (18446744073709551615), not an integer of 16610 bits"),
    (lambda p: serq_sweep.sweep(p, workers=B, progress=False), UserError,
     "error: workers=an integer of 16610 bits: a sweep runs on 0 to 1024 worker processes"),
    (lambda p: serq_sweep.sweep(p, defs={"f": ["0.5", B]}, workers=0, progress=False), TypeError,
     "defs['f']: each expression is a str, not int (an integer of 16610 bits)"),
], ids=["sweep seeds", "compare seeds", "workers", "defs"])
def test_the_sweep_api_says_it_in_its_own_words(prog, call, kind, said):
    with pytest.raises(kind) as info:
        call(prog)
    assert str(info.value) == said


def test_a_member_index_beyond_the_members():
    report = serq_sim.run(serq_frontend.compile(source=PROGRAM))
    with pytest.raises(KeyError) as info:
        report.stage("s", B)
    assert info.value.args == ("no stage s[an integer of 16610 bits] (the program has: s)",)
    with pytest.raises(KeyError) as info:  # an index of numpy's is shown as the number it is
        report.stage("s", np.int64(3))
    assert info.value.args == ("no stage s[3] (the program has: s)",)


def test_a_tolerance_beyond_the_doubles(prog):
    # find(tol=10**5000) was an OverflowError of float(); one below 0 the same, of its %g. An int beyond the
    # doubles is wider than any range: the search takes its two ends and no halving, as tol=inf does
    cond, over = "utilisation < 0.9", ("lam", "0.1:0.9")
    _, wide = serq_sweep.find(prog, cond, over, tol=B, workers=0, progress=False)
    _, inf = serq_sweep.find(prog, cond, over, tol=float("inf"), workers=0, progress=False)
    assert wide == inf and wide[0]["evaluations"] == 2
    with pytest.raises(UserError) as info:
        serq_sweep.find(prog, cond, over, tol=-B, workers=0, progress=False)
    assert str(info.value) == "error: tol=an integer of 16610 bits: must be positive"
    with pytest.raises(UserError) as info:
        serq_sweep.find(prog, cond, over, tol=-1, workers=0, progress=False)
    assert str(info.value) == "error: tol=-1: must be positive"


@pytest.mark.parametrize("kw, said", [  # (named by the argument's key: test_known_defects_round7.py)
    ({"defs": {"f": B}}, "error: defs['f']: an integer of 16610 bits is not an expression (a string) or a list of "
                         "them"),
    ({"sets": {"lam": [[B]]}}, "error: sets['lam']: a list is not a number"),
    ({"sets": {"lam": [[0.5]]}}, "error: sets['lam']: '[0.5]' is not a number"),  # (as before: its text is read)
])
def test_a_value_holding_such_an_integer(prog, kw, said):
    # str() of a list holding one, read as a value's text, was Python's ValueError of the conversion
    with pytest.raises(UserError) as info:
        serq_sweep.sweep(prog, workers=0, progress=False, **kw)
    assert str(info.value) == said
