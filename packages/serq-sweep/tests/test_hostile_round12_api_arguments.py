"""serq_sweep's Python API takes its arguments by one rule each (serq_sweep.axes: ordered, texts, flag,
output_path) and says at the call what is of the wrong type, naming the argument.

* A ``set`` (or ``frozenset``) where values go in order is a TypeError: the order given is the order of the
  results (a table's points and seeds, a comparison's arms, the columns named), and a set has none; a set
  of strs iterates in another order in every process (``PYTHONHASHSEED``), so ``defs={"f": {"~exp(1)",
  "~det(1)"}}`` gave a table whose rows came in another order from one run of the same script to the next.
* One str where a list of names goes is that one name: ``compare(figures="y.mean")`` asked for the figures
  ``y``, ``.``, ``m``, ... (its letters), ``aggregate(by="lam")`` grouped by the columns ``l``, ``a``, ``m``
  (a KeyError from inside pandas), ``plot(cdf_of="ttft")`` drew ``t``, ``t``, ``f``, ``t``.
* Wrong types were errors from deep inside: ``find(over="lam")`` "too many values to unpack", ``tol="0.1"``
  a comparison of a str and an int, ``conditions=3`` "'int' object is not iterable", ``aggregate(None)`` and
  ``flatten(None)`` AttributeErrors, ``records=3`` and ``out=3`` ``os.fspath``'s TypeError once every point
  was compiled, ``dask=3`` an address ("cannot reach the scheduler: missing port number in address '3'");
  ``tol=True`` was a tolerance of 1, and ``fresh="no"`` ran every run again, ``progress="no"``
  drew the bar (a switch taken by its truth).
"""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest
from serq_sweep import aggregate, compare, find, flatten, plot, sweep

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let lam = 0.5;
def svc() = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (svc()); observe y = now - t0; }
run { horizon 100; warmup 0; seed 1; arrivals 5; }
"""

NO_ORDER = "has no order, and the order of the values given is the order of the results"


@pytest.fixture
def prog(tmp_path):
    path = tmp_path / "p.sq"
    path.write_text(PROGRAM)
    return str(path)


@pytest.mark.parametrize("what, call", [
    ("sets['lam']", lambda p: sweep(p, sets={"lam": {0.2, 0.4}}, workers=0, progress=False)),
    ("defs['svc']", lambda p: sweep(p, defs={"svc": {"0.5", "~exp(2)"}}, workers=0, progress=False)),
    ("seeds", lambda p: sweep(p, seeds=frozenset({1, 2}), workers=0, progress=False)),
    ("program", lambda p: sweep({p, p + "x"}, workers=0, progress=False)),
    ("defs['svc']", lambda p: compare(p, defs={"svc": {"0.5", "~exp(2)"}}, seeds="1..2", workers=0,
                                      progress=False)),
    ("figures", lambda p: compare(p, sets={"lam": [0.2, 0.4]}, figures={"y.mean", "events"}, seeds="1..2",
                                  workers=0, progress=False)),
    ("conditions", lambda p: find(p, {"y.mean < 3", "events > 0"}, ("lam", "0.1:0.9"), workers=0,
                                  progress=False)),
    ("by", lambda p: aggregate(pd.DataFrame({"lam": [1.0], "seed": [1], "y": [2.0]}), by={"lam"})),
])
def test_a_set_is_refused_for_it_has_no_order(prog, what, call):
    with pytest.raises(TypeError) as info:
        call(prog)
    assert str(info.value).startswith(f"{what}: a ") and NO_ORDER in str(info.value)


def test_one_str_is_one_figure_of_compare(prog):
    d = compare(prog, sets={"lam": [0.2, 0.4]}, figures="y.mean", seeds="1..2", workers=0, progress=False)
    assert list(d["figure"]) == ["observes.y.mean"]


def test_one_str_is_one_column_of_aggregate():
    frame = pd.DataFrame({"lam": [1.0, 1.0, 2.0], "seed": [1, 2, 1], "status": ["ok"] * 3, "y": [1.0, 3.0, 5.0]})
    by_str = aggregate(frame, by="lam")
    pd.testing.assert_frame_equal(by_str, aggregate(frame, by=["lam"]))
    assert list(by_str["lam"]) == [1.0, 2.0] and list(by_str["y:mean"]) == [2.0, 5.0]


def test_one_str_is_one_metric_of_a_records_cdf(tmp_path):
    path = tmp_path / "r.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["session", "turn", "time", "sent", "first_token", "last_token", "output"])
        w.writerows([[0, 0, 3.0, 0.0, 1.0, 3.0, 5], [1, 0, 4.0, 1.0, 3.0, 4.0, 3]])
    fig = plot(str(path), cdf_of="ttft")
    (line,) = fig.axes[0].get_lines()
    assert sorted(line.get_xdata()) == [1.0, 2.0]  # ttft = first_token - sent of each request


def _with_axes(frame, axes):
    frame.attrs["axes"] = axes  # (a sweep's table, its column of a swept name dropped)
    return frame


@pytest.mark.parametrize("call, kind, said", [
    (lambda p: find(p, "y.mean < 3", "lam", workers=0, progress=False), TypeError, "over must be the pair"),
    (lambda p: find(p, "y.mean < 3", ("lam", "0.1", "0.9"), workers=0, progress=False), TypeError,
     "over must be the pair"),
    (lambda p: find(p, "y.mean < 3", ("lam", (0.1, 0.9)), workers=0, progress=False), TypeError,
     "over must be the pair"),
    (lambda p: find(p, "y.mean < 3", ("lam", "0.1:0.9"), tol="0.1", workers=0, progress=False), TypeError,
     "tol must be a positive number, not str"),
    (lambda p: find(p, "y.mean < 3", ("lam", "0.1:0.9"), tol=True, workers=0, progress=False), TypeError,
     "tol must be a positive number, not bool"),
    (lambda p: find(p, 3, ("lam", "0.1:0.9"), workers=0, progress=False), TypeError,
     "conditions must be a condition (a str) or a list of them, not int"),
    (lambda p: find(p, "y.mean < 3", ("lam", "0.1:0.9"), out=3, workers=0, progress=False), TypeError,
     "out must be a path (str or os.PathLike), not int"),
    (lambda p: compare(p, sets={"lam": [0.2, 0.4]}, figures=[3], seeds="1..2", workers=0, progress=False),
     TypeError, "figures: each figure is a str, not int (3)"),
    (lambda p: sweep(p, records=3, workers=0, progress=False), TypeError,
     "records must be True, False or a path (str or os.PathLike), not int"),
    (lambda p: sweep(p, out=3, workers=0, progress=False), TypeError,
     "out must be a path (str or os.PathLike), not int"),
    (lambda p: sweep(p, fresh="no", workers=0, progress=False), TypeError, "fresh must be True or False, not 'no'"),
    (lambda p: sweep(p, workers=0, progress="no"), TypeError, "progress must be True or False (or None), not 'no'"),
    (lambda p: compare(p, sets={"lam": [0.2, 0.4]}, seeds="1..2", workers=0, progress=1), TypeError,
     "progress must be True or False (or None), not 1"),
    (lambda p: sweep(p, defs={"svc": [b"0.5"]}, workers=0, progress=False), TypeError,
     "defs['svc']: each expression is a str, not bytes"),
    (lambda p: sweep(p, dask=3, workers=1, progress=False), TypeError,
     "dask must be \"local\", a scheduler's address or scheduler file (a str), or a distributed.Client, not int"),
    (lambda p: compare(p, sets={"lam": [0.2, 0.4]}, seeds="1..2", dask=True, progress=False), TypeError,
     "dask must be \"local\", a scheduler's address or scheduler file (a str), or a distributed.Client, not bool"),
    (lambda p: aggregate(None), TypeError, "frame must be a pandas DataFrame (a sweep's table), not NoneType"),
    (lambda p: aggregate(pd.DataFrame({"lam": [1.0], "seed": [1]}), by=["nope"]), ValueError,
     "by: no column 'nope' in the frame (its columns: lam, seed)"),
    (lambda p: aggregate(_with_axes(pd.DataFrame({"seed": [1], "y": [1.0]}), ["B"])), ValueError,
     "by (frame.attrs['axes'], the swept names): no column 'B' in the frame (its columns: seed, y)"),
    (lambda p: flatten(None), TypeError, "result must be a report"),
    (lambda p: plot(None, x="lam", y="y"), TypeError,
     "source must be a path (str or os.PathLike) or a DataFrame, not NoneType"),
    (lambda p: plot(p, out=3, x="lam", y="y"), TypeError, "out must be a path (str or os.PathLike), not int"),
    (lambda p: plot(p, x=3, y="y"), TypeError, "x must be a name (a str), not int"),
])
def test_a_wrong_type_is_one_type_error_naming_it(prog, call, kind, said):
    with pytest.raises(kind) as info:
        call(prog)
    assert type(info.value) is kind and str(info.value).startswith(said)


def test_a_numpy_array_of_no_dimension_is_its_value(prog):
    d = sweep(prog, sets={"lam": np.array(0.25)}, seeds=np.array(3), workers=0, progress=False)
    assert list(d["lam"]) == [0.25] and list(d["seed"]) == [3]
