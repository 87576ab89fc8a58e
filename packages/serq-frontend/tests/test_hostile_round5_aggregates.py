"""An aggregate in a ``let`` is held to the terms an aggregate may write out (10 000, with the aggregates
inside it) before any term is folded, as the same aggregate anywhere else is.

The writer (sugar/aggregates.py) refuses ``sum j in 10000 (sum k in 10000 (…))`` from its counts, at once;
but the first count it reads folds every ``let`` (``Context.lets``), and a ``let`` holding that aggregate was
folded term by term first: ``let N = sum j in 10000 (sum k in 10000 (1));`` took 13 s to be refused, and
three such levels (10**12 terms) never ended. ``serq_frontend.consts.fold`` counts an aggregate's terms
from its counts first (``agg_terms``), in the writer's words and at its place.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_frontend import ast as A
from serq_frontend.consts import BadConstant, fold
from serq_frontend.diagnostics import Pos

SERQ = str(Path(sys.executable).parent / "serq")

TAIL = """stage s : delay;
workload { arrive poisson(1); }
session { run s (N); observe x = N; }
run { horizon 5; seed 1; }
"""


def _check(tmp_path: Path, let: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(f"let N = {let};\n" + TAIL)
    return subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          stdin=subprocess.DEVNULL, env={"SERQ_COMPILE_CACHE": "0", "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("let, col, counts", [
    ("sum j in 10000 (sum k in 10000 (1))", 9, "10000 × 10000"),
    ("sum i in 10000 (sum j in 10000 (sum k in 10000 (1)))", 25, "10000 × 10000"),
    ("max j in 100 (min k in 101 (j + k))", 9, "100 × 101"),
    ("sum j in 10 (0 ? sum k in 10000 (1) : 1)", 9, "10 × 10000"),  # written out, both branches count
])
def test_a_let_of_too_many_terms_is_refused_from_its_counts(tmp_path, monkeypatch, let, col, counts):
    r = _check(tmp_path, let)  # (the second never ended before: the child's timeout)
    assert r.returncode == 1, r.stderr
    op, var = let[col - 9: col - 9 + 3], let[col - 9 + 4]
    said = (f":1:{col}: error: `{op} {var} in …` writes out {counts} terms with the aggregates inside it; an "
            "aggregate writes out at most 10000 terms")
    assert r.stderr.splitlines()[0] == "p.sq" + said
    # refused from its counts, not after folding its terms one by one (13 s for the first before): the folds
    # the compile makes are counted (a fold of 100 x 100 terms makes some 20 000 of them), and a runaway stopped
    import serq_frontend
    from serq_frontend import consts

    real, calls = consts.fold, [0]

    def counted(*args, **kw):
        calls[0] += 1
        if calls[0] > 100_000:
            raise AssertionError("the aggregate's terms are folded one by one")
        return real(*args, **kw)

    monkeypatch.setattr(consts, "fold", counted)
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=f"let N = {let};\n" + TAIL)
    assert str(e.value).splitlines()[0] == "<source>" + said
    assert calls[0] < 100, calls[0]


def test_a_let_within_the_bound_folds(tmp_path):
    r = _check(tmp_path, "sum j in 100 (sum k in 100 (j + k))")
    assert r.returncode == 0, r.stderr


def test_an_inner_count_that_reads_the_index_says_so_in_the_writers_words(tmp_path):
    r = _check(tmp_path, "sum j in 3 (sum k in (j + 1) (1))")
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == ("p.sq:1:31: error: the count of `sum k in …` must be a constant (numbers "
                                        "and `let`s): it reads `j`")


def test_fold_counts_the_terms_before_it_folds_them():
    at = Pos("<t>", 1, 1)
    inner = A.Agg("sum", "k", A.Num(101.0, at), A.Num(1.0, at), at)
    outer = A.Agg("sum", "j", A.Num(100.0, at), inner, at)
    with pytest.raises(BadConstant) as e:
        fold(outer, {})
    assert e.value.node is outer and "100 × 101 terms" in e.value.message
    assert fold(A.Agg("sum", "j", A.Num(100.0, at), A.Agg("sum", "k", A.Num(100.0, at), A.Num(1.0, at), at), at),
                {}) == 10000.0
