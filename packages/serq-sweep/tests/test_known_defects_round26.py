"""Known defects, round 26 (serq-sweep)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep import records
from serq_sweep.plots import records_cdf_data

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
RECORD = ("session", "turn", "time", "sent", "first_token")


def _one_request_many_times(path: Path, n: int) -> None:
    """A records file of ``n`` rows, each the same request: a few hundred KB however many."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    one = pa.repeat(pa.scalar(1.0), n)
    pq.write_table(pa.table({c: one for c in RECORD}), path, compression="zstd")


# 1. serq plot --cdf of a records file in Parquet is held to a bound read from its footer (records.plotted_size)


def test_plot_cdf_refuses_a_parquet_bomb_of_records(tmp_path):
    pytest.importorskip("matplotlib")
    _one_request_many_times(tmp_path / "r.parquet", records.MAX_PLOTTED_ROWS + 1)
    assert (tmp_path / "r.parquet").stat().st_size < 1_000_000
    try:
        r = subprocess.run([SERQ, "plot", "r.parquet", "--cdf", "ttft", "-o", "a.svg"], capture_output=True, text=True,
                           cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail("the records were read whole")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("error: r.parquet: cannot read the records: it holds 10000001 rows, more than the 10000000 a "
                        "records file serq plot reads may have\n")
    assert not (tmp_path / "a.svg").exists()


def test_plot_cdf_bounds_the_cells_too(tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    _one_request_many_times(tmp_path / "r.parquet", 20)  # 20 rows of 5 columns: 100 cells
    monkeypatch.setattr(records, "MAX_PLOTTED_CELLS", 99)
    with pytest.raises(UserError) as info:
        records_cdf_data(str(tmp_path / "r.parquet"), ["ttft"])
    assert str(info.value).endswith("cannot read the records: it holds 20 rows of 5 columns, more than the 99 cells "
                                    "a records file serq plot reads may have")
    monkeypatch.setattr(records, "MAX_PLOTTED_CELLS", 100)  # at the bound: read, each request's ttft 0
    assert records_cdf_data(str(tmp_path / "r.parquet"), ["ttft"]) == {("ttft", None): [0.0] * 20}


# 2. --hue naming no column of the records lists the swept names by their names (records.swept_names)


@pytest.mark.parametrize("columns", [
    ["point", "seed", "Lambda", "key", "session", "turn", "time", "sent", "first_token"],  # Lambda after seed
    ["point", "Lambda", "session", "seed", "key", "turn", "time", "sent", "first_token"],  # session before seed
    ["point", "Lambda", "seed", "key", "session", "turn", "time", "sent", "first_token"],  # as a sweep writes
])
def test_hue_of_no_column_lists_the_swept_names_by_name(columns):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([{c: 1.0 for c in columns}])[columns]
    with pytest.raises(UserError) as info:
        records_cdf_data(frame, ["ttft"], hue="lambda")
    assert str(info.value).startswith("error: the records: --hue lambda: no column lambda (the swept names: Lambda)")


def test_hue_of_a_run_s_records_lists_none():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([{c: 1.0 for c in RECORD}])
    with pytest.raises(UserError) as info:
        records_cdf_data(frame, ["ttft"], hue="Lambda")
    assert "swept names" not in str(info.value)


# 3. a table's figures, offered to serq plot --y and to aggregate, are one rule (core.table_figures)


def _runs(columns: list[str]):
    pd = pytest.importorskip("pandas")
    rows = [{"point": 0, "a": 1.0, "seed": s, "status": "ok", "message": "", "warnings": "",
             "key": f"k{s}", "events": 10.0 + s, "w": 2.0 * s} for s in (1, 2)]
    return pd.DataFrame(rows)[columns]


@pytest.mark.parametrize("columns, figures", [
    (["point", "a", "seed", "status", "message", "warnings", "key", "events", "w"], ["events", "w"]),
    (["point", "a", "events", "seed", "status", "message", "warnings", "key", "w"], ["events", "w"]),  # moved
    (["a", "seed", "events", "w"], ["a", "seed", "events", "w"]),  # no key: not a sweep's, every column
])
def test_table_figures(columns, figures):
    from serq_sweep import core

    assert core.table_figures(columns) == figures


def test_plot_and_aggregate_offer_the_same_figures(monkeypatch):
    from serq_sweep import aggregate, core
    from serq_sweep.plots import curve_data

    frame = _runs(["point", "a", "seed", "status", "message", "warnings", "key", "events", "w"])
    # w 2 and 4: mean 3, half-width t(0.975, 1) sqrt(2) / sqrt(2)
    assert curve_data(frame, "a", "w")[1] == {None: ([1.0], [3.0], [pytest.approx(12.7062, rel=1e-4)])}
    assert "w:mean" in aggregate(frame).columns
    monkeypatch.setattr(core, "table_figures", lambda cols: ["events"])  # the one rule, for both
    with pytest.raises(UserError, match="--y w"):
        curve_data(frame, "a", "w")
    assert [c for c in aggregate(frame).columns if c.endswith(":mean")] == ["events:mean"]


# 4. a run a signal stopped ends a sweep's worker as the signal: the one rule of serq.signals.run_stopped


@pytest.mark.parametrize("partial, raised", [("sigterm", "Terminated"), ("interrupted", "KeyboardInterrupt")])
def test_a_worker_s_run_stopped_by_a_signal_raises_the_signal(monkeypatch, partial, raised):
    from types import SimpleNamespace

    import serq_sim
    from serq import signals
    from serq_sweep import worker

    monkeypatch.setattr(worker, "_program", lambda *a: object())
    monkeypatch.setattr(serq_sim, "run", lambda *a, **k: SimpleNamespace(partial=partial))
    with pytest.raises(KeyboardInterrupt) as e:
        worker.run_task(b"", "", "p.sq", 1, {}, pm=object())
    assert type(e.value).__name__ == raised
    assert isinstance(e.value, signals.Terminated) == (partial == "sigterm")


def test_a_worker_s_run_stopped_by_a_bound_is_partial(monkeypatch):
    from types import SimpleNamespace

    import serq_sim
    from serq_sweep import worker

    report = SimpleNamespace(partial="max-events", notes=[], result=None, record_names=())
    monkeypatch.setattr(worker, "_program", lambda *a: object())
    monkeypatch.setattr(serq_sim, "run", lambda *a, **k: report)
    monkeypatch.setattr("serq_sweep.figures.flatten", lambda result: {})
    out = worker.run_task(b"", "", "p.sq", 1, {}, pm=object())
    assert (out["status"], out["message"]) == ("partial", "max-events")


# 8. serq sweep --find says when every seed of every point it evaluated ran the same run (serq_sweep.alike)

FIXED = """let w = 1;
stage s : fifo;
workload { arrive ARRIVAL; }
session { set t = now; run s (w); observe r = now - t; }
run { horizon 100; seed 1; }
"""


def test_find_notes_a_program_that_draws_nothing(tmp_path):
    # batch(20) of jobs of w at one FIFO server: job k ends at (k + 1) w, the mean response 10.5 w, every seed:
    # r.mean <= 15 holds up to w = 15 / 10.5 = 1.428...; the search's bracket over 0.5:2 ends at [1.4140625, 1.4375]
    (tmp_path / "fixed.sq").write_text(FIXED.replace("ARRIVAL", "batch(20)"))
    (tmp_path / "random.sq").write_text(FIXED.replace("ARRIVAL", "poisson(0.5)"))
    args = ["--find", "r.mean <= 15", "--over", "w", "0.5:2", "--seeds", "1..2", "--no-progress"]
    r = subprocess.run([SERQ, "sweep", "fixed.sq", *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    # (then r.mean at the value found, 10.5 w = 14.84765625 to six digits)
    assert r.stdout.splitlines()[1].split() == ["1.4140625", "found", "1.4140625", "1.4375", "8", "14.8477"]
    assert r.stderr == (
        "note: every seed ran the same run: at each of 8 points its 2 seeds gave every figure alike, as a program "
        "that draws no random number does (a trace replayed `ordered` at fixed gaps, constant work); the conditions "
        "of --find were judged on means whose CIs across them are 0: a CI of 0 here measures no precision, and more "
        "seeds add nothing (random arrivals, `arrive poisson(…)`, or a draw make the seeds differ)\n")
    r = subprocess.run([SERQ, "sweep", "random.sq", *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "every seed ran the same run" not in r.stderr, r.stderr
    one = [a if a != "1..2" else "1" for a in args]  # one seed: nothing to compare
    r = subprocess.run([SERQ, "sweep", "fixed.sq", *one], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stderr == "", r.stderr
