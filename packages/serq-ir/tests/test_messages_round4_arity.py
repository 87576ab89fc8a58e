"""serq_ir.validate's words for a call, a draw or an observable of an IR file given another number of arguments
than it takes: the frontend's (serq_ir.rules.takes), how many it takes, its form as language.txt §2 names its
parameters and how many it got. They were "pow takes 2 argument(s), not 1", "~exp takes 1 argument(s), not
0", "price(…) takes 2 argument(s) after its stage, not 0": a count and "(s)", and no word of what the
arguments are.
"""

from __future__ import annotations

import msgspec
import pytest
import serq_ir
from ir_programs import mm1
from serq_ir import nodes as n

ONE = n.Num(value=1.0)


def _with(work, pools=()) -> n.Program:
    """mm1 whose run's work is ``work`` (and whose pools are ``pools``)."""
    program = mm1()
    session = list(program.session)
    session[1] = msgspec.structs.replace(session[1], work=work)
    return msgspec.structs.replace(program, session=session, pools=list(pools))


def _refused(work, pools=()) -> str:
    """The message of the IR of mm1 whose run's work is ``work``, at the work's JSON path."""
    program = _with(work, pools)
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(serq_ir.encode(program, spans=False), name="x")
    said = str(info.value)
    assert said.startswith("error: x: ") and "\n" not in said, said
    return said.removeprefix("error: x: ")


@pytest.mark.parametrize("fn, args, said", [
    ("abs", [], "`abs` takes one argument, `abs(x)`, and got none"),
    ("sqrt", [ONE, ONE], "`sqrt` takes one argument, `sqrt(x)`, and got 2"),
    ("ln", [ONE] * 3, "`ln` takes one argument, `ln(x)`, and got 3"),
    ("pow", [ONE], "`pow` takes two arguments, `pow(x, y)`, and got 1"),
    ("pow", [ONE] * 3, "`pow` takes two arguments, `pow(x, y)`, and got 3"),
    ("min", [], "`min` takes one argument at least, `min(a, …)`, and got none"),
    ("sum", [], "`sum` takes one argument at least, `sum(a, …)`, and got none"),
    ("max", [ONE] * 10_001, "`max` takes at most 10000 arguments, and got 10001"),
])
def test_a_function_of_another_count_is_told_its_form(fn, args, said):
    assert _refused(n.Call(fn=fn, args=args)) == f"{said} - at '$.session[1].work.args'"


@pytest.mark.parametrize("dist, k, said", [
    ("exp", 0, "`~exp` takes one argument, `~exp(mean)`, and got none"),
    ("det", 2, "`~det` takes one argument, `~det(x)`, and got 2"),
    ("uniform", 1, "`~uniform` takes two arguments, `~uniform(lo, hi)`, and got 1"),
    ("erlang", 3, "`~erlang` takes two arguments, `~erlang(k, mean)`, and got 3"),
    ("h2", 0, "`~h2` takes two arguments, `~h2(mean, cv2)`, and got none"),
    ("bernoulli", 2, "`~bernoulli` takes one argument, `~bernoulli(p)`, and got 2"),
])
def test_a_draw_of_another_count_is_told_its_form(dist, k, said):
    assert _refused(n.Draw(dist=dist, args=[n.Num(value=0.5)] * k)) == f"{said} - at '$.session[1].work.args'"


@pytest.mark.parametrize("name, k, said", [
    # the target is a field of its own: the count is of the arguments after it
    ("price", 0, "`price` takes two arguments after its stage, `price(s, s_hit, ds)`, and got none"),
    ("price", 3, "`price` takes two arguments after its stage, `price(s, s_hit, ds)`, and got 3"),
    ("busy", 1, "`busy` takes no argument after its stage, `busy(stage)`, and got 1"),
    ("est_wait", 2, "`est_wait` takes no argument after its stage, `est_wait(stage)`, and got 2"),
])
def test_an_observable_of_another_count_is_told_its_form(name, k, said):
    work = n.Observable(name=name, target=n.StageRef(stage=0), args=[ONE] * k)
    assert _refused(work) == f"{said} - at '$.session[1].work.args'"


def test_a_pool_observable_of_another_count_is_told_its_form():
    work = n.Observable(name="used", target=n.PoolRef(pool=0), args=[ONE])
    assert _refused(work, [n.Pool(name="kv", cap=4.0)]) == ("`used` takes no argument after its pool, `used(pool)`, "
                                                             "and got 1 - at '$.session[1].work.args'")


def test_the_counts_it_takes_are_taken():
    # (the same calls at the count they take decode: the words above are of another count only)
    for work in (n.Call(fn="pow", args=[ONE, ONE]), n.Call(fn="max", args=[ONE] * 10_000),
                 n.Draw(dist="uniform", args=[n.Num(value=0.0), ONE]),
                 n.Observable(name="price", target=n.StageRef(stage=0), args=[ONE, ONE])):
        program = _with(work)
        assert serq_ir.decode(serq_ir.encode(program, spans=False), name="x").session[1].work == work
