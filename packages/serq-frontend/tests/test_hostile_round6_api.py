"""``serq_frontend.compile``'s arguments are checked at the call, each wrong one a TypeError or ValueError
naming it (serq_frontend.check_overrides, which the compile cache's ``load`` calls too).

A list of pairs for ``sets`` was no override at all, silently (the linker asked ``name in sets``); a str
value was ``must be real number, not str`` from float() in the linker, an int beyond the doubles an
OverflowError, a NaN a constant no let's own check saw; an int body in ``defs`` ``object of type 'int' has no
len()``; bytes for ``source=`` a TypeError of ``startswith``; and ``compile()`` with neither a path nor a
source said "not both".
"""

from __future__ import annotations

import math

import pytest
import serq_frontend
from serq_frontend.cache import load

PROGRAM = """let lam = 0.5;
def svc() = ~exp(1);
stage s : fifo;
workload { arrive poisson(lam); }
session { run s (svc()); }
"""


@pytest.mark.parametrize("kw, kind, said", [
    ({"sets": [("lam", 0.25)]}, TypeError, "sets is a mapping of names to numbers, not list"),
    ({"sets": {"lam": "0.25"}}, TypeError, "sets['lam'] is a number, not str"),
    ({"sets": {"lam": None}}, TypeError, "sets['lam'] is a number, not NoneType"),
    ({"sets": {"lam": True}}, TypeError, "sets['lam'] is a number, not bool"),
    ({"sets": {1: 0.25}}, TypeError, "sets: a name is a str, not int (1)"),
    ({"sets": {"lam": 10**400}}, ValueError, "sets['lam']: an integer of 1329 bits is beyond the doubles"),
    ({"sets": {"lam": math.nan}}, ValueError, "sets['lam']: NaN is not the value of a constant (a number or inf)"),
    ({"defs": {"svc": 3}}, TypeError, "defs['svc'] is an expression's text (a str), not int"),
    ({"defs": "svc=1"}, TypeError, "defs is a mapping of names to strs, not str"),
])
def test_an_override_of_the_wrong_kind_is_refused_at_the_call(tmp_path, kw, kind, said):
    (tmp_path / "p.sq").write_text(PROGRAM)
    for call in (lambda: serq_frontend.compile(source=PROGRAM, **kw),
                 lambda: serq_frontend.compile(tmp_path / "p.sq", **kw),
                 lambda: serq_frontend.parse(source=PROGRAM, **kw),
                 lambda: load(tmp_path / "p.sq", **kw)):
        with pytest.raises(kind) as info:
            call()
        assert str(info.value) == said


def test_a_nan_override_of_a_let_no_one_reads_is_refused_too():
    with pytest.raises(ValueError, match="NaN"):
        serq_frontend.compile(source="let unused = 1;\n" + PROGRAM, sets={"unused": math.nan})


@pytest.mark.parametrize("args, kw, said", [
    ((), {}, "compile() takes a path or source=: neither was given"),
    (("p.sq",), {"source": PROGRAM}, "compile() takes a path or source=, not both"),
    ((3,), {}, "compile()'s path is a str or os.PathLike, not int"),
    ((b"p.sq",), {}, "compile()'s path is a str or os.PathLike, not bytes"),
    ((), {"source": PROGRAM.encode()}, "compile()'s source= is a str, not bytes"),
])
def test_a_path_or_source_of_the_wrong_kind_is_named(args, kw, said):
    with pytest.raises(TypeError) as info:
        serq_frontend.compile(*args, **kw)
    assert str(info.value) == said


def test_overrides_of_the_right_kind_apply(tmp_path):
    import numpy as np

    (tmp_path / "p.sq").write_text(PROGRAM)
    for sets in ({"lam": 0.25}, {"lam": np.float64(0.25)}, {"lam": 1}):
        p = serq_frontend.compile(source=PROGRAM, sets=sets, defs={"svc": "~det(1)"})
        assert p is not None
        assert load(tmp_path / "p.sq", sets=sets) is not None
