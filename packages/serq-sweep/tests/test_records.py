"""serq sweep --records: one tidy table of every run's records, equal to `serq run --records` of the same
point and seed; the Python API's records; resuming after SIGTERM and SIGKILL; users' mistakes."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from sweepstop import needs_proc, stopped_after

ROOT = Path(__file__).resolve().parents[3]
SINGLE = str(ROOT / "examples/multi-turn/vllm_single_turn.sq")
MG1 = str(ROOT / "examples/single-turn/mg1.sq")
SERQ = str(Path(sys.executable).parent / "serq")
RUN = ("--horizon", "20", "--warmup", "5")
PREFIX = ["point", "Lambda", "seed", "key"]


def serq(*args, cwd=None):
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def lines_by_key(path):
    """The records table's lines after its prefix (point, Lambda, seed, key), by key, in order."""
    text = Path(path).read_text().splitlines()
    header = text[0].split(",")
    assert header[:4] == PREFIX
    out = {}
    for line in text[1:]:
        cells = line.split(",")
        out.setdefault(cells[3], []).append((cells[:3], ",".join(cells[4:])))
    return ",".join(header[4:]), out


def test_the_records_table_is_serq_run_records_of_each_point_and_seed(tmp_path, serq_in_process):
    out, rec = tmp_path / "r.csv", tmp_path / "rec.csv"
    r = serq("sweep", SINGLE, "--set", "Lambda=2,5", "--seeds", "1..2", *RUN, "--workers", "2", "--no-progress",
             "--out", str(out), "--records", str(rec))
    assert r.returncode == 0, r.stderr
    assert f"records: {rec}" in r.stderr
    runs = read_csv(out)
    header, by_key = lines_by_key(rec)
    assert [x["key"] for x in runs] == list(by_key)  # point and seed order, as the table
    for row in runs:
        # (serq run of the point and seed in this process, serq_in_process: what is compared is its records)
        own = tmp_path / f"one-{row['key']}.csv"
        one = serq_in_process("run", SINGLE, "--set", f"Lambda={row['Lambda']}", "--seed", row["seed"], *RUN,
                              "--no-progress", "--records", str(own))
        assert one.returncode == 0, one.stderr
        want = own.read_text().splitlines()
        got = by_key[row["key"]]
        assert header == want[0]
        assert [line for _, line in got] == want[1:]  # every row, every cell's text
        assert all(pre == [row["point"], row["Lambda"], row["seed"]] for pre, _ in got)
        assert len(got) == int(row["records.request"]) == int(row["requests.completed"]) > 5
    assert not (tmp_path / "rec.csv.journal").exists()
    # Parquet holds the same values (an integer column stays one)
    import pandas as pd

    again = serq("sweep", SINGLE, "--set", "Lambda=2,5", "--seeds", "1..2", *RUN, "--workers", "0",
                 "--no-progress", "--out", str(tmp_path / "p.parquet"), "--records", str(tmp_path / "rec.parquet"))
    assert again.returncode == 0, again.stderr
    a = pd.read_csv(rec)
    b = pd.read_parquet(tmp_path / "rec.parquet")
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    assert [d.kind for d in a.dtypes] == [d.kind for d in b.dtypes]  # turn is int32, as serq run writes it
    assert b["prompt"].dtype.kind == "i" and b["sent"].dtype.kind == "f"
    assert a.equals(b.astype(a.dtypes.to_dict()))


TWO_TABLES = """
let lambda = 0.5;
pool server { cap 1; }
stage svc : delay;
workload { arrive poisson(lambda); }
session {
  set t0 = now;
  hold server (1) { run svc (~exp(1)); }
  record a { sent = t0; done = now; }
  branch with (0.5) { record b { late = now - t0; } }
}
run { horizon 40; warmup 5; }
"""


def test_a_program_of_two_record_tables_gets_a_records_file_for_each(tmp_path, serq_in_process):
    prog = tmp_path / "two.sq"
    prog.write_text(TWO_TABLES)
    args = ("sweep", str(prog), "--set", "lambda=0.5,0.8", "--seeds", "1..2", "--workers", "0", "--no-progress",
            "--out", str(tmp_path / "r.csv"), "--records", str(tmp_path / "rec.csv"))
    r = serq(*args)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "rec.csv").exists()
    runs = read_csv(tmp_path / "r.csv")
    tables = {name: read_csv(tmp_path / f"rec.{name}.csv") for name in ("a", "b")}
    for row in runs:
        # (serq run of the point and seed in this process, serq_in_process: what is compared is its records)
        own = tmp_path / f"one-{row['key']}.csv"
        one = serq_in_process("run", str(prog), "--set", f"lambda={row['lambda']}", "--seed", row["seed"],
                              "--no-progress", "--records", str(own))
        assert one.returncode == 0, one.stderr
        for name, table in tables.items():
            want = read_csv(tmp_path / f"one-{row['key']}.{name}.csv")
            got = [{k: v for k, v in x.items() if k not in ("point", "lambda", "seed", "key")}
                   for x in table if x["key"] == row["key"]]
            assert got == want and len(want) == int(row[f"records.{name}"]) > 0, (name, row)
    assert not list(tmp_path.glob("*.journal"))
    again = serq(*args)
    assert "(0 run now, 4 resumed)" in again.stderr, again.stderr
    (tmp_path / "rec.b.csv").unlink()  # one table lost: every run runs again
    again = serq(*args)
    assert "(4 run now, 0 resumed)" in again.stderr, again.stderr
    assert len(read_csv(tmp_path / "rec.b.csv")) == sum(int(x["records.b"]) for x in runs)


def test_the_python_api_gives_the_records_of_each_run():
    frame, recs = serq_sim.sweep(SINGLE, sets={"Lambda": [3]}, seeds=[1, 2], horizon=20, warmup=5, workers=0,
                                 records=True)
    assert list(recs.columns[:4]) == PREFIX
    for _, row in frame.iterrows():
        program = serq_frontend.compile(SINGLE, sets={"Lambda": 3})
        want = serq_sim.run(program, seed=int(row["seed"]), horizon=20, warmup=5).records()
        got = recs[recs["key"] == row["key"]]
        assert (got["seed"] == row["seed"]).all() and (got["Lambda"] == 3).all()
        got = got.drop(columns=PREFIX).reset_index(drop=True)
        assert list(got.columns) == list(want.columns)
        assert got.equals(want), (got, want)
        assert len(got) == row["records.request"]


def test_dask_gives_the_same_records(tmp_path):
    import dask
    from distributed import Client, LocalCluster
    from serq_sweep import core
    from serq_sweep.api import Records, run_plan

    plan = core.plan([SINGLE], sets={"Lambda": [2, 4]}, seeds=[1, 2], horizon=20, warmup=5)
    _, _, complete, _ = run_plan(plan, workers=2, out=str(tmp_path / "pool.csv"),
                                 records=Records(tmp_path / "pool.rec.csv"))
    assert complete
    # (the cluster's scratch folder in tmp_path: Dask's own choice is $TMPDIR/dask-scratch-space, which it leaves)
    with dask.config.set({"temporary-directory": str(tmp_path)}), \
            LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster) as client:
        _, _, complete, _ = run_plan(plan, dask=client, out=str(tmp_path / "dask.csv"),
                                     records=Records(tmp_path / "dask.rec.csv"))
    assert complete
    assert (tmp_path / "pool.rec.csv").read_bytes() == (tmp_path / "dask.rec.csv").read_bytes()
    assert len((tmp_path / "pool.rec.csv").read_text().splitlines()) > 20


@pytest.mark.timeout(280)
@needs_proc
def test_sigterm_and_sigkill_keep_what_finished_and_a_rerun_runs_the_rest(tmp_path):
    out, rec = tmp_path / "r.csv", tmp_path / "rec.csv"
    journal = tmp_path / "rec.csv.journal"
    args = ("sweep", SINGLE, "--set", "Lambda=1:6:0.5", "--seeds", "1..2", *RUN, "--workers", "1", "--no-progress",
            "--out", str(out), "--records", str(rec))
    # SIGTERM after exactly 3 runs: their rows and records are written, the rest is not
    proc = stopped_after(3, args, journal)
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    first = read_csv(out)
    kept = {r["key"] for r in read_csv(rec)}
    assert len(first) == 3 and kept == {r["key"] for r in first}, (first, kept)
    # a run killed outright after 2 more runs: the journals keep what finished
    before = len(journal.read_text().splitlines())  # the stopped sweep's journal stays until the end
    assert before == 3
    proc = stopped_after(2, args, journal)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    journaled = {json.loads(line)["key"] for line in journal.read_text().splitlines()}
    assert len(journaled) == 5 and kept < journaled
    r = serq(*args)
    assert r.returncode == 0, r.stderr
    # what either stopped sweep finished is not run again
    assert "(17 run now, 5 resumed)" in r.stderr, r.stderr
    assert not (tmp_path / "rec.csv.journal").exists() and not (tmp_path / "r.csv.journal").exists()
    fresh = serq(*args[:-4], "--out", str(tmp_path / "f.csv"), "--records", str(tmp_path / "frec.csv"))
    assert fresh.returncode == 0, fresh.stderr
    assert (tmp_path / "frec.csv").read_bytes() == rec.read_bytes()
    assert (tmp_path / "f.csv").read_bytes() == out.read_bytes()
    # more seeds run only the new runs; records lost are run again, the table's rows kept
    r = serq(*args[:4], "--seeds", "1..3", *args[6:])
    assert "(11 run now, 22 resumed)" in r.stderr, r.stderr
    rec.unlink()
    r = serq(*args[:4], "--seeds", "1..3", *args[6:])
    assert "(33 run now, 0 resumed)" in r.stderr, r.stderr
    assert len({x["key"] for x in read_csv(rec)}) == 33


def test_a_run_without_records_is_not_run_again(tmp_path):
    # the warm-up past the horizon's last request leaves no record: the table's row says so
    src = tmp_path / "p.sq"
    src.write_text(Path(SINGLE).read_text().replace('use "vllm.sq";', f'use "{ROOT}/packages/serq-vllm/src/'
                                                    'serq_vllm/lib/vllm.sq";').replace(
        'use "step_costs.sq";', f'use "{ROOT}/packages/serq-vllm/src/serq_vllm/lib/step_costs.sq";'))
    args = ("sweep", str(src), "--set", "Lambda=0.001,3", "--seeds", "1", *RUN, "--workers", "0", "--out",
            str(tmp_path / "r.csv"), "--records", str(tmp_path / "rec.csv"))
    r = serq(*args)
    assert r.returncode == 0, r.stderr
    rows = read_csv(tmp_path / "r.csv")
    assert [x["records.request"] for x in rows][0] == "0"
    r = serq(*args)
    assert "(0 run now, 2 resumed)" in r.stderr, r.stderr


def test_mistakes(tmp_path):
    cases = [
        ((SINGLE, "--records", str(tmp_path / "rec.csv")), "--records goes with --out"),
        ((SINGLE, "--out", str(tmp_path / "r.csv"), "--records", str(tmp_path / "rec.txt")),
         "a records file is .parquet or .csv"),
        ((SINGLE, "--out", str(tmp_path / "r.csv"), "--records", str(tmp_path / "r.csv")), "named by both --out and --records"),
        ((SINGLE, "--out", str(tmp_path / "r.csv"), "--records", str(tmp_path / "r.points.csv")),
         "named by both --out's points table and --records"),
        ((SINGLE, "--out", str(tmp_path / "r.csv"), "--records", str(tmp_path / "no" / "rec.csv")), "no folder"),
        ((MG1, "--out", str(tmp_path / "r.csv"), "--records", str(tmp_path / "rec.csv")),
         "the program declares no records"),
        ((SINGLE, "--records", str(tmp_path / "rec.csv"), "--find", "events >= 1", "--over", "Lambda", "1:2"),
         "--records is not for --find"),
    ]
    for args, msg in cases:
        r = serq("sweep", *args, "--horizon", "10", "--warmup", "1", "--workers", "0")
        assert r.returncode in (1, 2), (args, r.stderr)
        assert msg in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
    assert not list(tmp_path.glob("r*.csv"))
