"""The CSV report (``serq run --format csv``; ``-o r.csv`` names it): the report's figures as rows
``section,name,statistic,value``. ``serq run p.sq -o r.csv`` wrote the text report into r.csv, with no word:
no CSV report format was registered. The expected rows are written out by hand from the Result's fields
(serq_report.summary_csv's docstring is the rule)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_report
from serq_ir.report import (
    GaugeStats,
    MetricStats,
    ObserveStats,
    PoolStats,
    RequestMetrics,
    Result,
    StageStats,
)

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).with_name("serq"))
NAN, INF = float("nan"), float("inf")


def _metric(base: float) -> MetricStats:
    return MetricStats(count=4, mean=base, std=0.25, ci=NAN, median=base, p90=base, p95=base, p99=base)


RESULT = Result(
    horizon=100.0, end=50.5, warmup=0.0, seed=3, events=12, arrivals=4, ended=4, turns=0, mean_live=0.1,
    interrupted=True, partial="max-events",
    observes={"a,b": ObserveStats(count=2, mean=0.1, ci=INF, cv2=-0.0, p99=NAN)},
    instants={"first": 2}, records={"req": 4},
    requests=RequestMetrics(table="req", completed=4, duration=50.5, total_input_tokens=NAN,
                            total_output_tokens=0.000505, request_throughput=0.25,
                            output_throughput=1e-05, total_token_throughput=NAN, ttft=_metric(0.5),
                            tpot=_metric(2.0), e2el=_metric(3.0), slo={"ttft": 1.0}, good=3, goodput=0.0625),
    stages=[StageStats(name="e", index=1, present=1.5, utilisation=1.0, completions=7, throughput=0.5, wait=0.0,
                       service=2.0, iterations=9)],
    pools=[PoolStats(name="kv", index=None, used=3.0, cached=0.0, queue=0.0, holders=1.0, wait=0.0, admissions=2,
                     evicted_entries=0, evicted_units=0.0, preemptions=1, spills=0, rejections=0, stuck=0)],
    gauges={"g": GaugeStats(mean=0.5, ci=NAN, min=0.0, max=1.0)},
    notes=["observe x is constant", 'warning: sessions wait for ever at "kv"'],
)

EXPECTED = """section,name,statistic,value
run,,horizon,100.0
run,,end,50.5
run,,warmup,0.0
run,,seed,3
run,,events,12
run,,arrivals,4
run,,ended,4
run,,turns,0
run,,mean_live,0.1
run,,interrupted,1
run,,partial,max-events
observes,"a,b",count,2
observes,"a,b",mean,0.1
observes,"a,b",ci,inf
observes,"a,b",cv2,-0.0
observes,"a,b",p50,nan
observes,"a,b",p90,nan
observes,"a,b",p95,nan
observes,"a,b",p99,nan
instants,first,samples,2
records,req,rows,4
requests,,table,req
requests,,completed,4
requests,,duration,50.5
requests,,total_input_tokens,nan
requests,,total_output_tokens,0.000505
requests,,request_throughput,0.25
requests,,output_throughput,1e-05
requests,,total_token_throughput,nan
""" + "".join(f"requests,{m},{k},{v}\n" for m, base in (("ttft", "0.5"), ("tpot", "2.0"), ("e2el", "3.0"))
              for k, v in (("count", "4"), ("mean", base), ("std", "0.25"), ("ci", "nan"), ("median", base), ("p90", base),
                           ("p95", base), ("p99", base))) + """requests,slo,ttft,1.0
requests,,good,3
requests,,goodput,0.0625
stages,e[1],present,1.5
stages,e[1],utilisation,1.0
stages,e[1],completions,7
stages,e[1],throughput,0.5
stages,e[1],wait,0.0
stages,e[1],service,2.0
stages,e[1],iterations,9
pools,kv,used,3.0
pools,kv,cached,0.0
pools,kv,queue,0.0
pools,kv,holders,1.0
pools,kv,wait,0.0
pools,kv,admissions,2
pools,kv,evicted_entries,0
pools,kv,evicted_units,0.0
pools,kv,preemptions,1
pools,kv,spills,0
pools,kv,rejections,0
pools,kv,stuck,0
pools,kv,over_cap,0
gauges,g,mean,0.5
gauges,g,ci,nan
gauges,g,min,0.0
gauges,g,max,1.0
notes,,note,observe x is constant
""" + 'notes,,warning,"sessions wait for ever at ""kv"""\n'  # a quote in a field: quoted, the quote doubled


def test_the_csv_report_lists_every_figure_as_a_row():
    assert "csv" in serq_report.formats().names()
    assert serq_report.render(RESULT, "csv") == EXPECTED


def test_run_o_csv_writes_the_csv_report(tmp_path):
    # three sessions at t = 0, each one job of 1 s on a delay stage: 3 responses of 1 s, 3 completions
    (tmp_path / "p.sq").write_text("stage s : delay;\nworkload { arrive batch(3); }\n"
                                   "session { set t0 = now; run s (1); observe response = now - t0; }\n"
                                   "run { horizon 10; seed 2; }\n")
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "-o", "r.csv"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    rows = (tmp_path / "r.csv").read_text().splitlines()
    assert rows[0] == "section,name,statistic,value"
    for row in ("run,,horizon,10.0", "run,,seed,2", "run,,arrivals,3", "run,,interrupted,0",
                "observes,response,count,3", "observes,response,mean,1.0", "stages,s,completions,3"):
        assert row in rows, (row, rows)
    assert not any(row.startswith("run,,partial,") for row in rows)  # a run that ended is not partial
