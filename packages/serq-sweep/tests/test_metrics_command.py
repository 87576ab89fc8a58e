"""``serq metrics``: the serving metrics of a records file, whole, by a column (a replica) and by run.

Truth: the run's own report (the same records with the run's window give its requests section bit for bit,
but for ITL, which the records do not hold), and small tables computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from serq_sweep import metrics

REPO = Path(__file__).resolve().parents[3]
REPLICAS = REPO / "examples" / "multi-turn" / "vllm_replicas.sq"

HEADER = "session,turn,time,sent,admitted,first_token,last_token,prompt,output,cached,preemptions,engine\n"
# four requests on engines 2 and 10 (10 after 2: the groups sort as numbers, not as text)
ROWS = [
    "0,1,5,0,0.5,1,5,100,5,50,0,2",  # ttft 1, tpot (5 - 1) / 4 = 1, e2el 5, queue 0.5
    "1,1,3.5,1,1,1.5,3.5,200,3,0,0,10",  # ttft 0.5, tpot 2 / 2 = 1, e2el 2.5, queue 0
    "2,1,8,2,2.25,4,8,100,1,100,0,2",  # ttft 2, no tpot (one output token), e2el 6, queue 0.25
    "3,1,6,3,3,3.5,6,50,6,25,1,10",  # ttft 0.5, tpot 2.5 / 5 = 0.5, e2el 3, queue 0
]


@pytest.fixture
def hand(tmp_path):
    p = tmp_path / "req.csv"
    p.write_text(HEADER + "\n".join(ROWS) + "\n")
    return p


def _by(rows, **group):
    return next(r.requests for r in rows if r.group == group)


def test_groups_by_hand(hand):
    rows = metrics(hand, by="engine")
    assert [r.group for r in rows] == [{"engine": 2}, {"engine": 10}, {}]
    e2, e10, whole = _by(rows, engine=2), _by(rows, engine=10), _by(rows)
    # the window: the span of the requests, first sent (0) to last token (8)
    assert e2.duration == e10.duration == whole.duration == 8.0
    assert (e2.completed, e10.completed, whole.completed) == (2, 2, 4)
    assert e2.request_throughput == 2 / 8 and e10.request_throughput == 2 / 8 and whole.request_throughput == 4 / 8
    assert e2.output_throughput == (5 + 1) / 8 and e10.output_throughput == (3 + 6) / 8
    assert e2.prefix_cache_hit_rate == (50 + 100) / (100 + 100)
    assert e10.prefix_cache_hit_rate == (0 + 25) / (200 + 50)
    assert whole.prefix_cache_hit_rate == 175 / 450
    assert (e2.ttft.mean, e2.ttft.median, e2.ttft.p99) == (1.5, 1.5, 1 + 0.99 * (2 - 1))
    assert (e10.ttft.mean, whole.ttft.mean) == (0.5, 1.0)
    assert (e2.tpot.count, e2.tpot.mean) == (1, 1.0)
    assert (e10.tpot.count, e10.tpot.mean) == (2, 0.75)
    assert (e2.e2el.mean, e10.e2el.mean) == (5.5, 2.75)
    assert (e2.queue.mean, e10.queue.mean) == (0.375, 0.0)
    assert e2.itl is None  # (a token's time is not in the records)


def test_slo_and_duration_by_hand(hand):
    rows = metrics(hand, by=["engine"], slo="ttft=0.5", duration="10")
    e2, e10, whole = _by(rows, engine=2), _by(rows, engine=10), _by(rows)
    assert e2.duration == 10.0 and e2.request_throughput == 0.2
    # ttft <= 0.5: the two requests of engine 10 (0.5 each), none of engine 2 (1 and 2)
    assert (e2.good, e2.attainment, e2.goodput) == (0, 0.0, 0.0)
    assert (e10.good, e10.attainment, e10.goodput) == (2, 1.0, 0.2)
    assert (whole.good, whole.attainment, whole.goodput) == (2, 0.5, 0.2)
    assert whole.slo == {"ttft": 0.5}


def test_where_keeps_rows(hand):
    (only,) = metrics(hand, where={"engine": "10"})
    assert only.requests.completed == 2
    assert only.requests.duration == 8.0  # the run's window, every request's (not the kept ones' 1 .. 6)


def test_runs_of_a_sweep_stay_apart(tmp_path):
    p = tmp_path / "r.csv"
    # two runs of one point (seeds 1 and 2), their rows interleaved: each run is its own window
    p.write_text("point,B,seed,key,sent,first_token,last_token,output\n"
                 "0,1,1,aaa,0,1,2,2\n"
                 "0,1,2,bbb,0.5,0.75,1,1\n"
                 "0,1,1,aaa,1,2,4,3\n")
    rows = metrics(p)
    assert [r.run for r in rows] == [{"point": 0, "B": 1, "seed": 1}, {"point": 0, "B": 1, "seed": 2}]
    a, b = rows[0].requests, rows[1].requests
    assert (a.completed, a.duration, a.request_throughput, a.ttft.mean) == (2, 4.0, 0.5, 1.0)
    assert (b.completed, b.duration, b.request_throughput, b.ttft.mean) == (1, 0.5, 2.0, 0.25)
    # a --where that keeps none of a run's rows leaves the run out
    kept = metrics(p, where={"seed": "2"})
    assert [r.run["seed"] for r in kept] == [2]


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    from serq.cli import main

    d = tmp_path_factory.mktemp("replicas")
    with pytest.raises(SystemExit) as info:
        main(["run", str(REPLICAS), "--horizon", "300", "--warmup", "30", "--no-progress", "--records",
              str(d / "req.csv"), "-o", str(d / "rep.json")])
    assert not info.value.code
    return d


def test_the_run_window_gives_the_report(replicas):
    report = json.loads((replicas / "rep.json").read_text())
    want = report["requests"]
    window = report["end"] - report["warmup"]
    (whole,) = metrics(replicas / "req.csv", duration=window)
    import msgspec

    got = json.loads(msgspec.json.encode(whole.requests))
    for key in ("itl", "table"):
        want.pop(key)
        got.pop(key)
    assert got == want
    # by replica: the groups add up to the whole
    rows = metrics(replicas / "req.csv", by="engine", duration=window)
    assert [r.group for r in rows] == [{"engine": 0}, {"engine": 1}, {}]
    assert rows[0].requests.completed + rows[1].requests.completed == rows[2].requests.completed == want["completed"]
    assert math.isclose(rows[0].requests.request_throughput + rows[1].requests.request_throughput,
                        want["request_throughput"], rel_tol=1e-12)


def test_parquet_is_the_csv(replicas, tmp_path):
    pd = pytest.importorskip("pandas")
    pq = tmp_path / "req.parquet"
    pd.read_csv(replicas / "req.csv").to_parquet(pq)
    a = [r.to_builtins() for r in metrics(replicas / "req.csv", by="engine")]
    b = [r.to_builtins() for r in metrics(pq, by="engine")]
    for r in a + b:
        r["requests"].pop("table")
    assert json.dumps(a) == json.dumps(b)


def test_cli_text_and_json(hand, serq_in_process, tmp_path):
    r = serq_in_process("metrics", str(hand), "--by", "engine")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[2].split()[:6] == ["engine", "completed", "peak", "req/s", "output", "tok/s"]
    assert [ln.split()[:4] for ln in lines[3:]] == [["2", "2", "2", "0.25"], ["10", "2", "2", "0.25"],
                                                  ["all", "4", "4", "0.5"]]
    r = serq_in_process("metrics", str(hand), "--json", "--by", "engine")
    doc = json.loads(r.stdout)
    assert doc["by"] == ["engine"] and doc["duration"] is None
    assert [row["group"] for row in doc["rows"]] == [{"engine": 2}, {"engine": 10}, {}]
    out = tmp_path / "m.json"
    r = serq_in_process("metrics", str(hand), "-o", str(out))
    assert r.returncode == 0 and r.stdout == ""
    assert json.loads(out.read_text())["rows"][0]["requests"]["completed"] == 4
    # without --by: serq run's requests section
    r = serq_in_process("metrics", str(hand))
    assert "requests (" in r.stdout and "prefix-cache hit rate 0.388889" in r.stdout


@pytest.mark.parametrize("args, status, said", [
    (["--by", "engin"], 1, "did you mean `engine`?"),
    (["--by", "engine", "--by", "engine"], 2, "given twice"),
    (["--duration", "0"], 2, "positive, finite"),
    (["--duration", "inf"], 2, "positive, finite"),
    (["--duration", "nan"], 2, "'--duration': nan is not a positive, finite number of seconds"),
    (["--duration", "soon"], 2, "'--duration': 'soon' is not a number"),
    (["--slo", "ttfb=1"], 2, "--slo"),
    (["--where", "engine=3"], 1, "its values: 2, 10"),
])
def test_refusals(hand, serq_in_process, args, status, said):
    r = serq_in_process("metrics", str(hand), *args)
    assert r.returncode == status
    assert said in r.stderr and "Traceback" not in r.stderr


def test_refused_files(tmp_path, serq_in_process):
    bad = tmp_path / "bad.csv"
    bad.write_text("sent,first_token,last_token,output\n0,1,2,3\n0,1,x,3\n")
    r = serq_in_process("metrics", str(bad))
    assert r.returncode == 1
    assert "bad.csv:3:5: error: column last_token does not hold numbers" in r.stderr
    assert "0,1,x,3\n" in r.stderr and "    ^" in r.stderr
    cols = tmp_path / "cols.csv"
    cols.write_text("sent,first_token,output\n0,1,3\n")
    r = serq_in_process("metrics", str(cols))
    assert r.returncode == 1 and "have no column last_token" in r.stderr and "this one has sent, first_token, output" in r.stderr
    js = tmp_path / "rep.json"
    js.write_text("{}")
    r = serq_in_process("metrics", str(js))
    assert r.returncode == 2 and ".csv or .parquet" in r.stderr
    # the records file is not written over
    ok = tmp_path / "ok.csv"
    ok.write_text("sent,first_token,last_token,output\n0,1,2,3\n")
    r = serq_in_process("metrics", str(ok), "-o", str(ok))
    assert r.returncode != 0 and ok.read_text() == "sent,first_token,last_token,output\n0,1,2,3\n"


def test_groups_are_bounded(tmp_path, serq_in_process):
    from serq_sweep.served import MAX_GROUPS

    p = tmp_path / "many.csv"
    p.write_text("sent,first_token,last_token,output\n" + "".join(f"{i},{i + 1},{i + 2},2\n" for i in range(MAX_GROUPS)))
    r = serq_in_process("metrics", str(p), "--by", "sent")
    assert r.returncode == 1 and f"{MAX_GROUPS} rows at most" in r.stderr


def test_tables(hand, serq_in_process, tmp_path):
    import csv

    r = serq_in_process("metrics", str(hand), "--by", "engine", "--format", "csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(r.stdout.splitlines()))
    # a row per group, then the run's whole (its --by cell empty, whole 1)
    assert [(row["engine"], row["whole"], row["completed"]) for row in rows] == [("2", "0", "2"), ("10", "0", "2"),
                                                                              ("", "1", "4")]
    assert [float(row["ttft.mean"]) for row in rows] == [1.5, 0.5, 1.0]
    assert float(rows[0]["prefix_cache_hit_rate"]) == 0.75
    pd = pytest.importorskip("pandas")
    out = tmp_path / "m.parquet"
    assert serq_in_process("metrics", str(hand), "--by", "engine", "-o", str(out)).returncode == 0
    frame = pd.read_parquet(out)
    assert frame["engine"].tolist()[:2] == [2, 10] and math.isnan(frame["engine"].tolist()[2])
    assert frame["ttft.p99"].tolist()[0] == 1.99
    # a column of texts stays texts, its whole row ""
    tenants = tmp_path / "t.csv"
    tenants.write_text("sent,first_token,last_token,output,tenant\n0,1,2,3,a\n1,2,3,4,b\n2,3,4,5,a\n")
    out = tmp_path / "t.parquet"
    assert serq_in_process("metrics", str(tenants), "--by", "tenant", "-o", str(out)).returncode == 0
    assert pd.read_parquet(out)["tenant"].tolist() == ["a", "b", ""]


@pytest.mark.parametrize("args, said", [
    (["--json", "--format", "csv"], "name two formats"),
    (["--format", "json", "-o", "x.parquet"], "is a Parquet table"),
])
def test_format_refusals(hand, serq_in_process, tmp_path, args, said):
    r = serq_in_process("metrics", str(hand), *[str(tmp_path / a) if a.endswith(".parquet") else a for a in args])
    assert r.returncode == 2 and said in r.stderr


def test_a_group_named_all_is_told_from_the_whole(tmp_path, serq_in_process):
    p = tmp_path / "g.csv"
    p.write_text("sent,first_token,last_token,output,tenant\n0,1,2,3,all\n1,2,3,4,b\n")
    r = serq_in_process("metrics", str(p), "--by", "tenant")
    assert [ln.split()[:2] for ln in r.stdout.splitlines()[3:]] == [["all", "1"], ["b", "1"], ["(all)", "2"]]


def test_peak_concurrency_by_hand(hand, tmp_path, replicas):
    from serq_sweep.served import peak

    # [sent, last_token): 2 [0, 5) and [2, 8); 10 [1, 3.5) and [3, 6): all four in flight over [3, 3.5)
    rows = metrics(hand, by="engine")
    assert [r.max_concurrent_requests for r in rows] == [2, 2, 4]
    assert [r.to_builtins()["max_concurrent_requests"] for r in rows] == [2, 2, 4]
    # a departure before an arrival at one instant (vLLM's sweep): back to back is one at a time
    np = pytest.importorskip("numpy")
    assert peak(np.array([0.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])) == 2
    assert peak(np.array([0.0, 1.0, math.nan]), np.array([1.0, 2.0, 0.5])) == 1
    assert peak(np.array([]), np.array([])) == 0
    # the sweep written out over a run's records
    import csv

    with open(replicas / "req.csv") as f:
        recs = list(csv.DictReader(f))
    events = sorted([(float(r["sent"]), 1) for r in recs] + [(float(r["last_token"]), -1) for r in recs])
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    (whole,) = metrics(replicas / "req.csv")
    assert whole.max_concurrent_requests == most
