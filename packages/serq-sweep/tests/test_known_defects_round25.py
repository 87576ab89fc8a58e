"""Known defects of serq sweep, round 25.

A sweep's table whose columns were reordered by hand (the figures before ``key``, or before everything) was
read by the places of its columns: ``serq plot`` took only the columns after ``key`` for figures ("no figure
'events'"), and the Python API's ``aggregate`` made no ``FIGURE:mean`` of them (or took a figure moved before
``seed`` for a swept name and made a point of each of its values). The figures are now read by their names
(serq_sweep.core.figure_columns), as a resume read them already.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 0.5;
stage svc : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run svc (~exp(1)); observe response = now - t0; end; }
run { horizon 50; }
"""


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A sweep's table (2 points, 2 seeds), and the same table with its columns reordered by hand: the figures
    first, then the swept name, then point, seed and the rest (key last)."""
    d = tmp_path_factory.mktemp("reordered")
    (d / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--set", "lam=0.3,0.6", "--seeds", "1,2", "--out", "r.csv"],
                       capture_output=True, text=True, cwd=d, timeout=100)
    assert r.returncode == 0, r.stderr
    with open(d / "r.csv", newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    k = head.index("key")
    order = [*head[k + 1:], "lam", "point", "seed", "status", "message", "warnings", "key"]
    assert sorted(order) == sorted(head)
    with open(d / "moved.csv", "w", newline="") as f:
        w = csv.writer(f)
        for row in rows:
            w.writerow([row[head.index(c)] for c in order])
    return d


def test_plot_reads_a_figure_before_key(table):
    r = subprocess.run([SERQ, "plot", "moved.csv", "--x", "lam", "--y", "events", "-o", "f.png"],
                       capture_output=True, text=True, cwd=table, timeout=100)
    assert r.returncode == 0, r.stderr
    assert (table / "f.png").stat().st_size > 0


def test_the_curve_of_a_reordered_table_is_the_written_ones(table):
    from serq_sweep.plots import _curve_data

    for y in ("events", "response.mean", "stages.svc.utilisation"):
        assert _curve_data(str(table / "moved.csv"), "lam", y, None) == \
            _curve_data(str(table / "r.csv"), "lam", y, None)
    # (by hand: the mean of the two seeds' event counts at lam 0.3)
    with open(table / "r.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["lam"] == "0.3"]
    _, out, _, _ = _curve_data(str(table / "moved.csv"), "lam", "events", None)
    assert out[None][0] == [0.3, 0.6]
    assert out[None][1][0] == pytest.approx(sum(int(r["events"]) for r in rows) / 2)


def test_aggregate_of_a_reordered_frame_is_the_written_ones(table):
    import pandas as pd
    from serq_sweep import aggregate

    written = aggregate(pd.read_csv(table / "r.csv"))
    moved = aggregate(pd.read_csv(table / "moved.csv"))
    assert list(moved["lam"]) == [0.3, 0.6]  # two points: no figure taken for a swept name
    assert "events:mean" in moved.columns and "observes.response.mean:mean" in moved.columns
    pd.testing.assert_frame_equal(moved[sorted(moved.columns)], written[sorted(written.columns)])


def test_the_columns_of_a_table_by_name():
    from serq_sweep.core import figure_columns, point_columns

    cols = ["events", "observes.x.mean", "rate", "point", "seed", "status", "message", "warnings", "key", "mine"]
    assert figure_columns(cols) == ["events", "observes.x.mean", "mine"]
    assert point_columns(cols) == ["rate"]
    assert point_columns(["point", "rate", "events:mean", "runs", "events:ci"], "runs") == ["rate"]


# ``serq sweep --def rte=…`` suggested only the definitions and ``--set`` only the lets (a definition said to
# be one, but not which flag gives it): each flag's did-you-mean now names what the flag takes and the closest
# name of the other kind with the flag that sets it (serq.errors.knob_hint, for --set, --def, --over, --zip)

KNOBS = """let lam = 0.5;
def rate() = lam * 2;
def lamb() = 1;
stage svc : fifo;
workload { arrive poisson(rate() * lamb()); }
session { set t0 = now; run svc (~exp(1)); observe response = now - t0; end; }
run { horizon 50; }
"""


@pytest.mark.parametrize("args, said", [
    (["--def", "rte=1"], "--def rte: the program has no expression definition `rte` (did you mean `rate`?)"),
    (["--def", "lan=1"], "--def lan: the program has no expression definition `lan` (did you mean `lam`, a let "
                         "given with --set lam?)"),
    (["--set", "rte=1"], "--set rte: the program has no `let rte` (did you mean `rate`, an expression definition "
                         "given with --def rate?)"),
    (["--set", "lamx=1"], "--set lamx: the program has no `let lamx` (did you mean `lam` or `lamb`, an expression "
                          "definition given with --def lamb?)"),
    (["--def", "lamx=1"], "--def lamx: the program has no expression definition `lamx` (did you mean `lamb` or "
                          "`lam`, a let given with --set lam?)"),
])
def test_a_misspelt_knob_names_what_its_flag_takes_and_the_other_kind(tmp_path, args, said):
    (tmp_path / "p.sq").write_text(KNOBS)
    r = subprocess.run([SERQ, "sweep", "p.sq", *args, "--out", "x.csv"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=100)
    assert r.returncode == 1
    assert said in r.stderr
    assert not (tmp_path / "x.csv").exists()


def test_over_and_zip_take_the_one_rule(tmp_path):
    (tmp_path / "p.sq").write_text(KNOBS)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--find", "response.mean <= 2", "--over", "lamx", "0.1:0.9"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 1
    assert ("--over lamx: the program has no `let lamx` (did you mean `lam` or `lamb`, an expression definition "
            "given with --def lamb?)") in r.stderr
    r = subprocess.run([SERQ, "sweep", "p.sq", "--set", "lam=0.1,0.2", "--def", "rate=1,2", "--zip", "lam,rte",
                        "--out", "x.csv"], capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 2
    assert "rte is not a swept name (swept: lam, rate) (did you mean `rate`?)" in r.stderr


def test_knob_hint_of_each_flag():
    from serq.errors import knob_hint
    from serq.loading import argument_given

    assert knob_hint("lan", ["lam"], ["rate"], "definition") == " (did you mean `lam`, a let given with --set lam?)"
    assert knob_hint("rte", ["lam"], ["rate"], "definition") == " (did you mean `rate`?)"
    assert knob_hint("rte", ["lam"], ["rate"], "let", argument_given) == \
        " (did you mean `rate`, an expression definition given with defs['rate']?)"
    assert knob_hint("rte", ["lam"], ["rate"], "either") == " (did you mean `rate`?)"
    assert knob_hint("zzz", ["lam"], ["rate"], "definition") == ""


# A sweep's records table in Parquet had no bound on its rows (its results table is held to a sweep's most
# runs): a file of a few KB, one value compressed into a million rows, given as the records to resume from,
# was read whole. Its rows are now held to what the runs wrote, as the sweep's table counts them
# (records.records_size; round 27: the bound of --max-samples samples a run was loose), from the file's footer.

RECORDS = """let lam = 1;
stage s : delay;
workload { arrive poisson(lam); }
session { run s (1); record req { wait = 1; } }
run { horizon 5; seed 1; }
"""


def _records_bomb(path: Path, key: str, n: int) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    np = pytest.importorskip("numpy")
    keys = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([key]))
    pq.write_table(pa.table({"point": np.zeros(n, dtype=np.int64), "seed": np.ones(n, dtype=np.int64), "key": keys,
                             "session": np.zeros(n, dtype=np.int64), "turn": np.zeros(n, dtype=np.int32),
                             "time": np.ones(n), "wait": np.ones(n, dtype=np.int64)}), path, compression="zstd")


SWEEP_RECORDS = ["sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "t.parquet", "--records", "r.parquet",
                 "--max-samples", "1000"]


def _sweep_records(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *SWEEP_RECORDS], capture_output=True, text=True, cwd=folder, timeout=100,
                          stdin=subprocess.DEVNULL)


def _here(serq_in_process, folder: Path, *args: str):
    """``serq ARGS…`` in this process, in ``folder``: for the commands that make the files a test then edits
    (what it checks is the command run on them after, a child process)."""
    with pytest.MonkeyPatch.context() as m:
        m.chdir(folder)
        return serq_in_process(*args)


def test_records_in_parquet_of_more_rows_than_the_runs_wrote_are_refused(tmp_path, serq_in_process):
    pytest.importorskip("pyarrow")
    (tmp_path / "p.sq").write_text(RECORDS)
    r = _here(serq_in_process, tmp_path, *SWEEP_RECORDS)
    assert r.returncode == 0, r.stderr
    import pandas as pd

    table = pd.read_parquet(tmp_path / "t.parquet")
    key = str(table["key"][0])
    # one run, whose row in the table counts the rows of records it wrote: 5 (poisson(1) up to t = 5, seed 1)
    assert table["records.req"][0] == 5
    _records_bomb(tmp_path / "r.parquet", key, 1_000_000)
    assert (tmp_path / "r.parquet").stat().st_size < 100_000
    before = (tmp_path / "r.parquet").read_bytes()
    r = _sweep_records(tmp_path)
    assert r.returncode == 1
    assert r.stderr == ("error: r.parquet: cannot read the records to resume from (it holds 1000000 rows, more than "
                        "the 5: 5 that the 1 run(s) of the sweep's table wrote (their records.req)); remove it or "
                        "give --fresh\n")
    assert (tmp_path / "r.parquet").read_bytes() == before


def test_records_within_the_bound_resume(tmp_path, serq_in_process):
    pytest.importorskip("pyarrow")
    (tmp_path / "p.sq").write_text(RECORDS)
    assert _here(serq_in_process, tmp_path, *SWEEP_RECORDS).returncode == 0
    import pandas as pd

    table = pd.read_parquet(tmp_path / "t.parquet")
    key = str(table["key"][0])
    # within the bound (the 5 rows the run wrote): read, and found short of the run's rows, so it runs again
    _records_bomb(tmp_path / "r.parquet", key, int(table["records.req"][0]) - 1)
    r = _sweep_records(tmp_path)
    assert r.returncode == 0, r.stderr
    assert "1 run now, 0 resumed" in r.stderr


# A table saved by a spreadsheet writes a flag True as TRUE and a float with 15 significant digits: TRUE was
# text to a resume (written back as the word, the flag lost) and to serq plot (--y interrupted: no numbers).
# A flag is read in any case now (core._parse_csv); a 15-digit float is that figure, resumed as it reads.

def _spreadsheet(text: str) -> str:
    """``text``, a sweep's CSV table, as a spreadsheet saves it: flags in capitals, floats to 15 digits."""
    import re

    def cell(v: str) -> str:
        if v in ("True", "False"):
            return v.upper()
        if re.fullmatch(r"-?[0-9]+\.[0-9]+(e[-+]?[0-9]+)?", v):
            return f"{float(v):.15g}"
        return v

    rows = list(csv.reader(text.splitlines()))
    out = [rows[0]] + [[cell(v) for v in r] for r in rows[1:]]
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(out)
    return buf.getvalue()


@pytest.mark.parametrize("cell, value", [("TRUE", True), ("true", True), ("True", True), ("FALSE", False),
                                         ("false", False), ("False", False), ("Truth", "Truth"), ("yes", "yes"),
                                         ("0.164474272323390", 0.16447427232339)])
def test_a_flag_in_any_case_is_a_flag(cell, value):
    from serq_sweep.core import _parse_csv

    assert _parse_csv(cell) == value and type(_parse_csv(cell)) is type(value)


# seed 2 at lam 0.6 and 0.3 stops at 30 events: interrupted True beside False
PARTIAL_SWEEP = ["sweep", "p.sq", "--set", "lam=0.3,0.6", "--seeds", "1,2", "--max-events", "30", "--out", "r.csv",
                 "--no-progress"]


def _partial_sweep(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *PARTIAL_SWEEP], capture_output=True, text=True, cwd=folder, timeout=100)


def test_a_table_saved_by_a_spreadsheet_resumes_and_plots(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert _here(serq_in_process, tmp_path, *PARTIAL_SWEEP).returncode in (0, 1)
    written = (tmp_path / "r.csv").read_text()
    assert ",True," in written and ",False," in written
    saved = _spreadsheet(written)
    assert ",TRUE," in saved and ",FALSE," in saved and saved != written
    (tmp_path / "s.csv").write_text(saved)
    r = subprocess.run([SERQ, "plot", "s.csv", "--x", "lam", "--y", "interrupted", "-o", "f.png"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 0, r.stderr
    from serq_sweep.plots import _curve_data

    assert _curve_data(str(tmp_path / "s.csv"), "lam", "interrupted", None)[1] == \
        _curve_data(str(tmp_path / "r.csv"), "lam", "interrupted", None)[1]
    (tmp_path / "r.csv").write_text(saved)
    (tmp_path / "r.points.csv").unlink()
    r = _partial_sweep(tmp_path)
    assert "(0 run now, 4 resumed)" in r.stderr, r.stderr
    again = list(csv.DictReader((tmp_path / "r.csv").read_text().splitlines()))
    old = list(csv.DictReader(written.splitlines()))
    # the flags are flags again, written as a sweep writes them; each figure is the 15-digit one read
    assert [a["interrupted"] for a in again] == [o["interrupted"] for o in old]
    assert [float(a["mean_live"]) for a in again] == [float(f"{float(o['mean_live']):.15g}") for o in old]


# The records table too was read by places: its record's columns those after key, so a records table with
# them moved before key (by hand) lost them and its runs ran again; by their names now (records.record_columns).

def test_a_records_table_reordered_by_hand_resumes(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(RECORDS)
    args = [SERQ, "sweep", "p.sq", "--set", "lam=1,2", "--workers", "0", "--no-progress", "-o", "t.csv",
            "--records", "r.csv"]
    r = _here(serq_in_process, tmp_path, *args[1:])  # (the table to reorder, made in this process)
    assert r.returncode == 0, r.stderr
    written = (tmp_path / "r.csv").read_text()
    rows = list(csv.reader(written.splitlines()))
    head = rows[0]
    assert head[:4] == ["point", "lam", "seed", "key"]
    order = [*head[4:], *head[:4]]  # the record's columns first
    with open(tmp_path / "r.csv", "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([[row[head.index(c)] for c in order] for row in rows])
    r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 0, r.stderr
    assert "(0 run now, 2 resumed)" in r.stderr, r.stderr
    assert (tmp_path / "r.csv").read_text() == written  # (written back as a sweep writes it)
