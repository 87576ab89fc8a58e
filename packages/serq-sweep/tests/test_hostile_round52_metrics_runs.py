"""``serq metrics`` of a sweep's records whose ``key`` column was taken out (a table cut down by hand or by a
spreadsheet): its runs are told apart by their labels, ``point`` … ``seed`` (a sweep's records begin with
``point``, serq_sweep.records; a run's with ``session``), each its own window, never pooled. They were taken
for one run's records: every run's requests pooled in one row, over one window. Truth: the rows by hand."""

from __future__ import annotations

from serq_sweep import metrics

# point 0 seed 1: two requests, sent 0 and 1, last tokens 2 and 2.5 (a window of 2.5 s); point 0 seed 2: one,
# 0 to 3; point 1 seed 1: one, 0 to 5 (the first run's second request last, as a run's rows may come)
ROWS = "0,8,1,0,1,2,3\n0,8,2,0,1,3,3\n1,16,1,0,1,5,3\n0,8,1,1,2,2.5,3\n"


def test_a_sweeps_records_without_key(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("point,B,seed,sent,first_token,last_token,output\n" + ROWS)
    rows = metrics(p)
    assert [(r.run, r.requests.completed, r.requests.duration) for r in rows] == [
        ({"point": 0, "B": 8, "seed": 1}, 2, 2.5), ({"point": 0, "B": 8, "seed": 2}, 1, 3.0),
        ({"point": 1, "B": 16, "seed": 1}, 1, 5.0)]
    assert rows[0].requests.request_throughput == 2 / 2.5


def test_the_same_with_key(tmp_path):
    p = tmp_path / "r.csv"
    keys = iter(["a", "b", "c", "a"])
    p.write_text("point,B,seed,key,sent,first_token,last_token,output\n"
                 + "".join(",".join([*c[:3], next(keys), *c[3:]]) + "\n" for c in (r.split(",") for r in ROWS.splitlines())))
    assert [(r.run, r.requests.completed) for r in metrics(p)] == [
        ({"point": 0, "B": 8, "seed": 1}, 2), ({"point": 0, "B": 8, "seed": 2}, 1), ({"point": 1, "B": 16, "seed": 1}, 1)]


def test_a_runs_records_with_point_and_seed_columns_are_one_run(tmp_path):
    # a program that records columns named point and seed: a run's records begin with session
    p = tmp_path / "r.csv"
    p.write_text("session,point,seed,sent,first_token,last_token,output\n0,1,1,0,1,2,3\n1,2,2,0,1,4,3\n")
    (whole,) = metrics(p)
    assert whole.run == {} and whole.requests.completed == 2 and whole.requests.duration == 4.0


def test_a_sweeps_records_of_no_row(tmp_path, serq_in_process):
    # a header alone: the text was an IndexError traceback, -o t.parquet a table of no column, status 0
    p = tmp_path / "r.csv"
    p.write_text("point,B,seed,key,sent,first_token,last_token,output\n")
    said = (f"error: {p}: the records hold no request of any run (a sweep's records have a row a request, "
            "labelled by its run): there is no run to give the metrics of\n")
    for args in ([], ["--json"], ["--by", "B"], ["--duration", "5"], ["-o", str(tmp_path / "t.parquet")]):
        r = serq_in_process("metrics", str(p), *args)
        assert (r.returncode, r.stdout, r.stderr) == (1, "", said), args
    assert not (tmp_path / "t.parquet").exists()


def test_a_runs_records_of_no_row_are_a_run_of_no_requests(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("session,turn,time,sent,first_token,last_token,output\n")
    (whole,) = metrics(p)
    assert whole.run == {} and whole.requests.completed == 0
