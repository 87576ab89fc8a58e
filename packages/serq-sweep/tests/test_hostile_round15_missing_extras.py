"""Reading a ``.parquet`` file without pandas or pyarrow (serq-sweep's optional ``[pandas]`` extra), and
``serq plot`` without pandas (its ``[plot]`` extra), is one message saying what to install: a resumed sweep
whose table or records are Parquet, ``serq plot`` of a Parquet table, ``--cdf`` of Parquet records and
``serq plot`` of any table ended in a traceback of the import, where writing a Parquet table and plotting
without matplotlib already said so."""

from __future__ import annotations

import sys

import pytest
from serq.errors import UserError

pytestmark = pytest.mark.timeout(60)

NEEDS = "reading a .parquet file needs pandas and pyarrow: pip install 'serq-sweep[pandas]' (or use .csv)"


@pytest.fixture
def table(tmp_path):
    """A sweep's table of two points (lambda 1 and 2), as Parquet."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    path = tmp_path / "t.parquet"
    pd.DataFrame({"point": [0, 1], "lambda": [1.0, 2.0], "seed": [1, 1], "status": ["ok", "ok"],
                  "message": ["", ""], "key": ["a", "b"], "observes.r.mean": [0.5, 0.7]}).to_parquet(path)
    return str(path)


def test_a_parquet_table_without_pyarrow_is_one_message(table, monkeypatch):
    from serq_sweep.core import read_table
    from serq_sweep.plots import plot

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(UserError) as e:
        read_table(table)
    assert str(e.value) == f"error: {table}: {NEEDS}"
    with pytest.raises(UserError) as e:
        plot(table, x="lambda", y="observes.r.mean")
    assert str(e.value) == f"error: {table}: {NEEDS}"


def test_parquet_records_without_pyarrow_are_one_message(table, monkeypatch):
    from serq_sweep.plots import plot

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(UserError) as e:
        plot(table, cdf_of=["ttft"])
    assert str(e.value) == f"error: {table}: {NEEDS}"


def test_plot_without_pandas_says_what_to_install(tmp_path, monkeypatch):
    from serq_sweep.plots import plot

    path = tmp_path / "t.csv"
    path.write_text("point,lambda,seed,status,message,key,observes.r.mean\n0,1.0,1,ok,,a,0.5\n")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(UserError) as e:
        plot(str(path), x="lambda", y="observes.r.mean")
    assert str(e.value) == "error: serq plot needs pandas: pip install 'serq-sweep[plot]' (or serq[plot])"
