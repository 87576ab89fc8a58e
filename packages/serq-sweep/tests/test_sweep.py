"""serq sweep: axes, the table (every figure of every run, as a single `serq run` gives it), aggregates,
the local pool and Dask giving one table, resuming after SIGTERM, and users' mistakes."""

from __future__ import annotations

import csv
import math
import signal
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_sweep import core
from serq_sweep.axes import Axis, parse_range, parse_seeds, points
from serq_sweep.figures import flatten, resolve
from serq_sweep.stats import mean_ci, t975
from sweepstop import needs_proc, stopped_after

ROOT = Path(__file__).resolve().parents[3]
MG1 = str(ROOT / "examples/single-turn/mg1.sq")
VLLM = str(ROOT / "examples/multi-turn/vllm.sq")
SERQ = str(Path(sys.executable).parent / "serq")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def serq(*args, cwd=None):
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd)


# --- axes -------------------------------------------------------------------------------------------

def test_ranges_lists_and_seeds():
    assert parse_range("2:10:0.5", "x") == [2 + 0.5 * i for i in range(17)]
    assert parse_range("0.1:0.3:0.1", "x") == [0.1, 0.2, 0.3]  # 0.30000000000000004 is shown as 0.3
    assert parse_range("1:4", "x") == [1, 2, 3, 4]
    assert parse_range("1,2,4", "x") == [1, 2, 4]
    assert parse_range("7", "x") == [7]
    assert parse_seeds("1..3,10") == [1, 2, 3, 10]
    assert parse_seeds("5") == [5]


def test_grid_and_zip_order():
    a, b, c = Axis("a", "set", (1, 2)), Axis("b", "set", (10, 20)), Axis("c", "def", ("x", "y", "z"))
    grid = points([a, b, c])
    assert len(grid) == 12 and grid[0] == {"a": 1, "b": 10, "c": "x"} and grid[1] == {"a": 1, "b": 10, "c": "y"}
    zipped = points([a, b, c], [["a", "b"]])
    assert zipped == [{"a": 1, "b": 10, "c": "x"}, {"a": 1, "b": 10, "c": "y"}, {"a": 1, "b": 10, "c": "z"},
                      {"a": 2, "b": 20, "c": "x"}, {"a": 2, "b": 20, "c": "y"}, {"a": 2, "b": 20, "c": "z"}]


def test_a_grid_too_large_is_refused_before_it_is_made():
    # five axes of 20 000 values: 3.2e21 points. The values of each axis were made into dicts (a million
    # axes' worth of memory for axes of a million values each: gigabytes) before the count was checked
    import tracemalloc

    axes = [Axis(name, "set", tuple(float(i) for i in range(20_000))) for name in "abcde"]
    tracemalloc.start()
    try:
        with pytest.raises(core.UserError, match=r"the sweep has about 3\.2e\+21 points, more than 1000000"):
            points(axes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak


def test_values_seeds_and_runs_are_bounded_together():
    from serq_sweep.axes import set_axes

    # each range is at most a million values, a name given again adds values, seeds parts add seeds: the
    # totals were not bounded (a command line of a few such parts held as many values as it liked)
    with pytest.raises(core.UserError, match="--set a: more than 1000000 values"):
        set_axes({"a": ["0:999999", "0:999999"]})
    with pytest.raises(core.UserError, match="more than 1000000 seeds"):
        parse_seeds("1..600000,700000..1200000")
    with pytest.raises(core.UserError, match=r"about 1\.0e\+300 values, more than 1000000"):
        parse_range("0:1:1e-300", "--set x")  # the count, not its 301 digits


def test_points_times_seeds_are_bounded_before_a_point_is_compiled(monkeypatch):
    def compiled(*args, **kwargs):
        raise AssertionError("a point was compiled")

    monkeypatch.setattr(core, "compile_point", compiled)
    with pytest.raises(core.UserError, match=r"1001 point\(s\) times 1000 seed\(s\), 1001000 runs, more than "
                       "1000000"):
        core.plan([MG1], sets={"lambda": "0:1:0.001"}, seeds="1..1000")


# --- statistics and figures -------------------------------------------------------------------------

#: the 0.975 quantiles of Student's t, scipy.stats.t.ppf(0.975, df) written out (scipy is no dependency),
#: at whole and fractional degrees of freedom (Welch's are fractional)
T975_SCIPY = {1: 12.706204736174694, 1.5: 6.016663104427929, 2: 4.302652729749462, 2.5: 3.5746548420036817,
              3: 3.1824463052837078, 4: 2.7764451051977934, 5: 2.5705818356363146, 7.25: 2.348194849105371,
              19: 2.0930240544083087, 30: 2.0422724563012378, 31.5: 2.0382021367118837, 60: 2.0002978220142604,
              120: 1.9799304050824402, 1000.25: 1.9623384864941926, 5000.5: 1.9604385042432446}


def test_t_quantiles():
    from tquantile import t975 as by_simpson

    # closed forms at 1 and 2 degrees of freedom: tan(0.475 pi), and 0.95 / sqrt(2 * 0.975 * 0.025)
    assert t975(1) == pytest.approx(math.tan(0.475 * math.pi), rel=1e-14)
    assert t975(2) == pytest.approx(0.95 / math.sqrt(2 * 0.975 * 0.025), rel=1e-14)
    for df, t in T975_SCIPY.items():
        assert t975(df) == pytest.approx(t, rel=1e-12), df
        # (the tests' own quantile, Simpson's rule and bisection, against the same values)
        assert by_simpson(df) == pytest.approx(t, rel=1e-11 if df > 100 else 1e-13), df
    assert math.isnan(t975(0.5)) and math.isnan(t975(math.nan)) and t975(math.inf) == 1.959963984540054
    xs = [1.0, 2.0, 4.0]
    n, m, ci, sd = mean_ci(xs)
    assert (n, m) == (3, statistics.mean(xs)) and sd == pytest.approx(statistics.stdev(xs))
    assert ci == pytest.approx(T975_SCIPY[2] * statistics.stdev(xs) / math.sqrt(3), rel=1e-12)


def test_flatten_is_generic():
    doc = {"report_version": 2, "serq_version": "x", "program": {"path": "p"}, "seed": 3, "events": 7,
           "partial": None, "observes": {"ttft": {"mean": 1.5, "p99": None}},
           "stages": [{"name": "e", "index": None, "utilisation": 0.5}],
           "pools": [{"name": "kv", "index": 1, "used": 3.0}], "new": {"deep": {"figure": 2}},
           "notes": ["a note"]}
    f = flatten(doc)
    assert list(f) == ["events", "partial", "observes.ttft.mean", "observes.ttft.p99", "stages.e.utilisation",
                       "pools.kv[1].used", "new.deep.figure"]
    assert f["observes.ttft.mean"] == 1.5 and math.isnan(f["observes.ttft.p99"]) and f["new.deep.figure"] == 2
    assert resolve("ttft.p99", f) == "observes.ttft.p99" and resolve("events", f) == "events"
    with pytest.raises(Exception, match="no figure"):
        resolve("tpot.p99", f)
    with pytest.raises(Exception, match="ambiguous"):
        resolve("x", ["a.x", "b.x"])


# --- the table --------------------------------------------------------------------------------------

def test_rows_are_the_runs_figures():
    frame = serq_sim.sweep(MG1, sets={"lambda": [0.3, 0.6]}, seeds="1..2", horizon=5000, workers=2)
    assert list(frame["lambda"]) == [0.3, 0.3, 0.6, 0.6] and list(frame["seed"]) == [1, 2, 1, 2]
    assert list(frame["status"]) == ["ok"] * 4 and list(frame["point"]) == [0, 0, 1, 1]
    for _, row in frame.iterrows():
        program = serq_frontend.compile(MG1, sets={"lambda": row["lambda"]})
        want = flatten(serq_sim.run(program, seed=int(row["seed"]), horizon=5000).result)
        assert list(frame.columns[7:]) == list(want)
        for k, v in want.items():
            got = row[k]
            assert (isinstance(v, float) and math.isnan(v) and math.isnan(got)) or got == v, k


def test_aggregates_and_csv(tmp_path):
    out = str(tmp_path / "r.csv")
    r = serq("sweep", MG1, "--set", "lambda=0.2,0.5", "--seeds", "1..3", "--horizon", "4000", "--out", out,
             "--show", "response.mean")
    assert r.returncode == 0, r.stderr
    assert "6 run(s) of 2 point(s) x 3 seed(s) (6 run now, 0 resumed)" in r.stderr
    runs = read_csv(out)
    pts = read_csv(tmp_path / "r.points.csv")
    assert len(runs) == 6 and len(pts) == 2
    for p in pts:
        xs = [float(x["observes.response.mean"]) for x in runs if x["point"] == p["point"]]
        assert float(p["observes.response.mean:mean"]) == pytest.approx(statistics.mean(xs), rel=1e-12)
        assert float(p["observes.response.mean:ci"]) == pytest.approx(
            T975_SCIPY[2] * statistics.stdev(xs) / math.sqrt(3), rel=1e-9)
        assert p["runs"] == "3"
    # --show prints the same means
    line = r.stdout.splitlines()[1].split()
    mean = float(line[2].split("±")[0])  # (MEAN±CI, one cell)
    assert line[0] == "0.2" and mean == pytest.approx(float(pts[0]["observes.response.mean:mean"]), rel=1e-5)
    assert not (tmp_path / "r.csv.journal").exists()


def test_an_axis_of_whole_numbers_is_an_integer_column(tmp_path):
    import pandas as pd

    single = str(ROOT / "examples/multi-turn/vllm_single_turn.sq")
    args = ("sweep", single, "--set", "blocks=1200,8010", "--set", "Lambda=1:1.5:0.5", "--seeds", "1", "--horizon",
            "10", "--warmup", "2", "--workers", "0", "--no-progress")
    for ext in ("csv", "parquet"):
        r = serq(*args, "--out", str(tmp_path / f"r.{ext}"), "--records", str(tmp_path / f"rec.{ext}"))
        assert r.returncode == 0, r.stderr
    rows = read_csv(tmp_path / "r.csv")
    # a whole value is written as an integer whatever the others (Lambda's 1; test_known_defects_round36)
    assert [(x["blocks"], x["Lambda"]) for x in rows] == [("1200", "1"), ("1200", "1.5"), ("8010", "1"),
                                                         ("8010", "1.5")]
    assert [x["blocks"] for x in read_csv(tmp_path / "r.points.csv")] == ["1200"] * 2 + ["8010"] * 2
    assert {x["blocks"] for x in read_csv(tmp_path / "rec.csv")} == {"1200", "8010"}
    for name in ("r", "r.points", "rec"):
        df = pd.read_parquet(tmp_path / f"{name}.parquet")
        assert str(df["blocks"].dtype) == "int64" and str(df["Lambda"].dtype) == "float64", name


def test_parquet_equals_csv(tmp_path):
    import pandas as pd

    for ext in ("csv", "parquet"):
        r = serq("sweep", MG1, "--set", "lambda=0.2:0.4:0.2", "--seeds", "1..2", "--horizon", "3000",
                 "--out", str(tmp_path / f"r.{ext}"), "--workers", "1")
        assert r.returncode == 0, r.stderr
    again = serq("sweep", MG1, "--set", "lambda=0.2:0.4:0.2", "--seeds", "1..2", "--horizon", "3000",
                 "--out", str(tmp_path / "r.parquet"), "--workers", "1")
    assert "(0 run now, 4 resumed)" in again.stderr, again.stderr
    a = pd.read_csv(tmp_path / "r.csv", keep_default_na=True)
    b = pd.read_parquet(tmp_path / "r.parquet")
    assert list(a.columns) == list(b.columns)
    num = [c for c in a.columns if c not in ("status", "message", "warnings", "key", "partial")]
    assert (a[num].astype(float).fillna(-1).values == b[num].astype(float).fillna(-1).values).all()


VLLM_ARGS = ("--set", "Lambda=0.01:0.4:0.01", "--seeds", "1..3", "--horizon", "20", "--warmup", "0")


@pytest.mark.timeout(280)
def test_vllm_40_points_local_pool_and_dask_local_give_one_table(tmp_path):
    # `serq sweep --dask local`: a LocalCluster of two worker processes started by the command itself;
    # a distributed.Client given to the Python API: test_records.py
    plan = core.plan([VLLM], sets={"Lambda": "0.01:0.4:0.01"}, seeds="1..3", horizon=20, warmup=0)
    assert len(plan.points) == 40
    for name, engine in (("pool", ()), ("dask", ("--dask", "local"))):
        r = subprocess.run([SERQ, "sweep", VLLM, *VLLM_ARGS, "--workers", "2", "--no-progress", *engine,
                            "--out", str(tmp_path / f"{name}.csv"), "--records", str(tmp_path / f"{name}.rec.csv")],
                           capture_output=True, text=True, timeout=240)
        assert r.returncode == 0, r.stderr
        assert "120 run(s) of 40 point(s) x 3 seed(s) (120 run now, 0 resumed)" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    for f in ("{}.csv", "{}.points.csv", "{}.rec.csv"):
        assert (tmp_path / f.format("pool")).read_bytes() == (tmp_path / f.format("dask")).read_bytes(), f
    rows = read_csv(tmp_path / "dask.csv")
    assert len(rows) == 120 and [x["status"] for x in rows] == ["ok"] * 120
    assert [x["key"] for x in rows] == [plan.key(p, s) for p in plan.points for s in plan.seeds]


@pytest.mark.timeout(280)
@needs_proc
def test_sigterm_on_dask_local_keeps_what_finished_and_a_rerun_runs_the_rest(tmp_path):
    out = tmp_path / "r.csv"
    journal = tmp_path / "r.csv.journal"
    args = ("sweep", VLLM, "--set", "Lambda=0.02:0.4:0.02", "--seeds", "1..2", "--horizon", "30", "--warmup", "0",
            "--workers", "2", "--no-progress")
    proc = stopped_after(4, (*args, "--dask", "local", "--out", str(out)), journal)
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 143, err
    assert b"terminated" in err and b"Traceback" not in err, err
    first = read_csv(out)
    assert len(first) == 4
    r = serq(*args, "--dask", "local", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "(36 run now, 4 resumed)" in r.stderr, r.stderr
    fresh = serq(*args, "--out", str(tmp_path / "fresh.csv"))  # the local pool, from nothing
    assert fresh.returncode == 0, fresh.stderr
    assert (tmp_path / "fresh.csv").read_bytes() == out.read_bytes()


@pytest.mark.timeout(240)
@needs_proc
def test_sigterm_keeps_what_finished_and_a_rerun_runs_the_rest(tmp_path):
    out = tmp_path / "r.csv"
    journal = tmp_path / "r.csv.journal"
    args = ("sweep", VLLM, "--set", "Lambda=0.02:0.4:0.02", "--seeds", "1..2", "--horizon", "30", "--warmup", "0",
            "--workers", "2", "--no-progress", "--out", str(out))
    proc = stopped_after(6, args, journal)
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert b"terminated" in err
    first = read_csv(out)
    assert len(first) == 6
    keys = {r["key"] for r in first}
    r = serq(*args)
    assert r.returncode == 0, r.stderr
    assert "40 run(s) of 20 point(s) x 2 seed(s) (34 run now, 6 resumed)" in r.stderr, r.stderr
    whole = read_csv(out)
    assert len(whole) == 40 and keys <= {r["key"] for r in whole}
    # the rows kept from the stopped sweep are those a fresh sweep makes
    fresh = serq(*args[:-1], str(tmp_path / "fresh.csv"))
    assert fresh.returncode == 0, fresh.stderr
    assert (tmp_path / "fresh.csv").read_bytes() == out.read_bytes()
    assert not journal.exists()


def test_a_rerun_of_a_finished_sweep_runs_nothing(tmp_path):
    out = str(tmp_path / "r.csv")
    args = ("sweep", MG1, "--set", "lambda=0.2,0.4", "--horizon", "3000", "--out", out, "--workers", "0")
    assert serq(*args, "--seeds", "1..2").returncode == 0
    before = Path(out).read_bytes()
    r = serq(*args, "--seeds", "1..3")  # (--seeds given once: twice is a usage error)
    assert "6 run(s) of 2 point(s) x 3 seed(s) (2 run now, 4 resumed)" in r.stderr, r.stderr
    r = serq(*args, "--seeds", "1..3")
    assert "(0 run now, 6 resumed)" in r.stderr
    assert before != Path(out).read_bytes()


def test_users_mistakes_are_one_message(tmp_path):
    cases = [
        (("--set", "nope=1,2"), "the program has no `let nope`"),
        (("--set", "lambda=1:0"), "ends before it starts"),
        (("--set", "lambda=a,b"), "is not a number"),
        (("--seeds", "3..1"), "ends before it starts"),
        (("--set", "lambda=0.1,0.2", "--set", "mu=1", "--zip", "lambda,mu"), "different numbers of values"),
        (("--out", str(tmp_path / "r.txt")), "a table is .parquet or .csv"),
        (("--out", MG1), "a table is .parquet or .csv"),
        # (serq run's and serq plot's words: it said "no folder …" alone)
        (("--out", str(tmp_path / "none" / "r.csv")), f"{tmp_path / 'none' / 'r.csv'}: no folder {tmp_path / 'none'} "
                                                      "to write it in\n"),
        (("--find", "response.mean <= 1"), "--find and --over go together"),
        (("--warmup", "3000", "--set", "lambda=0.1,0.2"), "warmup 3000 is not below the horizon 3000"),
    ]
    for args, msg in cases:
        r = serq("sweep", MG1, "--horizon", "3000", *args)
        assert r.returncode in (1, 2), (args, r.stderr)
        assert msg in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr


def test_a_runtime_error_is_a_row_and_exit_1(tmp_path):
    src = tmp_path / "p.sq"
    src.write_text("let G = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\nsession {\n  set g = G;\n"
                   "  run s (~exp(1));\n  branch (g) { end; }\n}\nrun { horizon 50; seed 1; }\n")
    out = tmp_path / "e.csv"
    r = serq("sweep", str(src), "--set", "G=1,0.5", "--workers", "0", "--out", str(out))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "error: 1 run(s) failed; the first:\n" in r.stderr
    assert f"{src}:7:3: error: at t=" in r.stderr and "branch guard is 0.5" in r.stderr
    rows = read_csv(out)
    assert [x["status"] for x in rows] == ["ok", "error"]
    assert rows[1]["message"].startswith(f"{src}:7:3: error:") and rows[1]["events"] == ""
    assert int(rows[0]["events"]) > 0


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links and FIFOs")
@pytest.mark.parametrize("entry", ["journal", "points"])
@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_files_the_sweep_names_itself_are_never_links_or_fifos(tmp_path, entry, kind):
    # the user names r.csv; r.csv.journal and r.points.csv are serq's: a link planted there must not
    # carry a write to its target, and a FIFO there must not block the sweep (reading or appending)
    import os

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    target = tmp_path / ("r.csv.journal" if entry == "journal" else "r.points.csv")
    if kind == "link":
        target.symlink_to(victim)
    else:
        os.mkfifo(target)
    r = subprocess.run([SERQ, "sweep", MG1, "--set", "lambda=0.2", "--horizon", "3000", "--workers", "0",
                        "--no-progress", "--out", str(tmp_path / "r.csv")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, r.stderr
    assert f"{target}: is {'a symbolic link' if kind == 'link' else 'a FIFO (a named pipe)'}" in r.stderr
    assert "Traceback" not in r.stderr
    assert victim.read_text() == "keep me\n"
    assert not (tmp_path / "r.csv").exists()
    assert os.path.islink(target) if kind == "link" else not target.is_file()


# --- the progress bar -------------------------------------------------------------------------------

class _Shell:
    kernel = object()  # an IPython kernel's shell has one; a terminal IPython's has none


def _fake_notebook(monkeypatch, shell):
    import types

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))


def test_the_progress_bar_shows_in_a_notebook_and_not_in_a_pipe(monkeypatch):
    import io

    err = io.StringIO()  # no terminal, as a notebook's stderr and a pipe
    monkeypatch.setattr(sys, "stderr", err)
    assert isinstance(core.progress_bar(3, 0, None, "sweep"), core._NoBar)  # a pipe: none
    _fake_notebook(monkeypatch, type("Terminal", (), {})())
    assert not core.in_notebook()  # a terminal IPython
    assert isinstance(core.progress_bar(3, 0, None, "sweep"), core._NoBar)
    _fake_notebook(monkeypatch, _Shell())
    assert core.in_notebook()
    # without ipywidgets, the text bar on the notebook's stderr
    monkeypatch.setattr(core, "has_widgets", lambda: False)
    frame = serq_sim.sweep(MG1, sets={"lambda": [0.3]}, seeds="1..3", horizon=2500, workers=0)
    assert len(frame) == 3
    shown = err.getvalue()
    assert "sweep: 100%" in shown and "3/3" in shown, shown
    assert isinstance(core.progress_bar(3, 0, False, "sweep"), core._NoBar)  # --no-progress
    # with ipywidgets, tqdm's widget (a stand-in here: this environment has no ipywidgets)
    import types

    monkeypatch.setattr(core, "has_widgets", lambda: True)
    fake = types.ModuleType("tqdm.notebook")
    fake.tqdm = type("Widget", (), {"__init__": lambda self, **kw: setattr(self, "kw", kw)})
    monkeypatch.setitem(sys.modules, "tqdm.notebook", fake)
    bar = core.progress_bar(5, 2, None, "sweep")
    assert type(bar) is fake.tqdm and bar.kw == dict(total=5, initial=2, desc="sweep", unit="run", leave=True)


@pytest.mark.parametrize("line", ['5\n', '{"key": "x"}\n', '["a"]\n', '{"status": "ok"}\n',
                                  pytest.param("[" * 100_000 + "]" * 100_000 + "\n", id="deep")])
def test_a_journal_that_is_not_a_sweeps_is_one_message(tmp_path, line):
    # the file a sweep resumes from is data: an entry of another shape names its line, no traceback (line 1
    # is an entry a kill cut short, skipped: it begins as every entry does)
    out = tmp_path / "r.csv"
    (tmp_path / "r.csv.journal").write_text('{"key": "cut short\n' + line)
    r = serq("sweep", MG1, "--set", "lambda=0.2", "--horizon", "3000", "--workers", "0", "--no-progress",
             "--out", str(out))
    assert r.returncode == 1, r.stderr
    # at line 2's start (no object, or one without a field), the line quoted (its first 200 characters and
    # ... for the deep one, of more than 200) with a caret under column 1
    text = line.rstrip("\n")
    quote = text if len(text) <= 200 else text[:200] + "..."
    assert r.stderr == (f"{tmp_path / 'r.csv.journal'}:2:1: error: not an entry of a sweep's journal; remove the file "
                        f"or give --fresh\n  {quote}\n  ^\n"), r.stderr
    assert not out.exists()


@pytest.mark.timeout(280)
def test_two_dask_local_sweeps_at_once_share_no_port(tmp_path):
    # each `--dask local` cluster listens on the loopback at ports of its own: a second sweep (or another
    # Dask user on 8787) is no conflict and no warning
    args = ("sweep", MG1, "--set", "lambda=0.2,0.4", "--horizon", "3000", "--dask", "local", "--workers", "1",
            "--no-progress")
    procs = [subprocess.Popen([SERQ, *args, "--out", str(tmp_path / f"r{i}.csv")], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "already in use" not in err and "Warning" not in err, err
    assert (tmp_path / "r0.csv").read_bytes() == (tmp_path / "r1.csv").read_bytes()


def test_a_point_that_does_not_compile_is_named_on_the_messages_line(tmp_path):
    # a one-line error gets its point on the same line (it was a second line), a quoted source after it
    prog = tmp_path / "p.sq"
    prog.write_text("let lam = 1;\nstage s : fifo;\nworkload { arrive poisson(lam); }\nsession { run s(1); }\n"
                    "run { horizon 100; }\n")
    r = serq("sweep", str(prog), "--set", "lam=1,2", "--horizon", "10", "--warmup", "50", "--no-progress", "-o",
             str(tmp_path / "o.csv"))
    # (the point's --set value noted as serq run notes it, then the point on a line of its own)
    assert r.returncode == 1 and r.stderr.count("\n") == 3, r.stderr
    assert r.stderr.endswith("error: --warmup 50: warmup 50 is not below the horizon 10 (--horizon 10)\n"
                             "note: `lam` is 1, given by --set lam\n(at the sweep's point lam=1)\n"), r.stderr
    prog.write_text("let lam = 1;\nstage s : fifo;\nworkload { arrive poisson(lam); }\nsession { run t(1); }\n")
    r = serq("sweep", str(prog), "--set", "lam=1,2", "--no-progress", "-o", str(tmp_path / "o.csv"))
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and lines[0].endswith("error: unknown stage `t`"), r.stderr
    assert lines[-1] == "(at the sweep's point lam=1)" and "^" in lines[-2], r.stderr
