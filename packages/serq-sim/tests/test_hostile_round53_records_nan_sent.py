"""A record whose ``sent`` is NaN is judged by its ``time`` against the warm-up, as a table without ``sent`` is
(serq_sim.records.Records; docs/language.md, "A record is whole or absent").

A table's rows sent before the warm-up's end are left out by their ``sent``; a row sent at NaN (``sent = 0 / z;``
for some sessions) compared ``NaN >= warmup`` false and was left out of the report's table, its request
metrics and ``--records FILE`` alike, without a word, however early the warm-up ended: at warm-up 0, 34 of
the 101 rows of a run whose every third session recorded a NaN ``sent``. Both tiers."""

from __future__ import annotations

import csv

import pytest
from conform import run

pytestmark = pytest.mark.timeout(60)

#: sessions 0, 1, 2, … arrive at t = 1, 2, 3, … (a renewal's first arrival is after one gap), each records
#: 0.5 after, at s + 1.5; the sessions whose serial is a multiple of 3 record a `sent` of NaN
PROGRAM = """stage d : delay;

workload {
  arrive renewal(1);
}

session {
  set t0 = now;
  run d (0.5);
  set z = serial % 3;
  record request {
    sent = z == 0 ? 0 / z : t0;
    first_token = now;
    last_token = now;
    output = 1;
  }
  end;
}

run { horizon 10.2; warmup WARMUP; }
"""


@pytest.mark.parametrize(("warmup", "kept"), [
    # by hand: session 9 would record at 10.5, past the horizon; sessions 0 … 8 record at 1.5 … 9.5
    ("0", [0, 1, 2, 3, 4, 5, 6, 7, 8]),
    # warm-up 4: sessions 4, 5, 7, 8 by their sent (5, 6, 8, 9 >= 4; 1, 2 sent at 2, 3 are out), and of the
    # NaN-sent ones 3 and 6, recorded at 4.5 and 7.5 (session 0, recorded at 1.5, is out); it kept 4, 5, 7, 8
    ("4", [3, 4, 5, 6, 7, 8]),
])
def test_a_row_sent_at_nan_is_judged_by_its_time(warmup, kept, monkeypatch):
    report, _ = run(PROGRAM.replace("WARMUP", warmup), monkeypatch)
    table = report.record_table()
    cols = table.arrays()
    assert cols["session"].tolist() == kept
    assert len(table) == len(kept) and table.kept_rows == [k for k in range(9) if k in kept]
    assert table.column("time") == [s + 1.5 for s in kept]
    assert report.result.requests.completed == len(kept)


def test_serq_run_writes_them_to_records(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM.replace("WARMUP", "0"))
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_in_process("run", "p.sq", "--no-progress", "--records", "r.csv")
        assert r.returncode == 0, r.stderr
        with open(tmp_path / "r.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert [row["session"] for row in rows] == [str(s) for s in range(9)]
        assert [row["sent"] for row in rows] == ["nan" if s % 3 == 0 else repr(s + 1.0) for s in range(9)]
