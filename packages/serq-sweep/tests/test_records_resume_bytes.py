"""A sweep resumed after it was killed writes its records table byte for byte as a sweep run whole does.

The records of the runs that finished before the kill come back from the journal (JSON), which does not
keep a column's dtype: the column ``turn``, int32 in a run's records (serq_sim.records), came back int64,
so a resumed sweep's Parquet table had ``turn`` int64 where a whole sweep's has int32 (the CSV's text was
the same either way)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sweepstop import needs_proc, stopped_after

ROOT = Path(__file__).resolve().parents[3]
SINGLE = str(ROOT / "examples/multi-turn/vllm_single_turn.sq")
SERQ = str(Path(sys.executable).parent / "serq")

pytest.importorskip("pyarrow")


@pytest.mark.timeout(200)
@needs_proc
def test_records_resumed_from_the_journal_are_the_whole_sweeps_bytes(tmp_path):
    import pyarrow.parquet as pq

    common = ("sweep", SINGLE, "--set", "Lambda=2,4", "--seeds", "1..2", "--horizon", "20", "--warmup", "5",
              "--workers", "1", "--no-progress")
    whole = subprocess.run([SERQ, *common, "--out", str(tmp_path / "w.csv"), "--records", str(tmp_path / "w.parquet")],
                           capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr
    args = (*common, "--out", str(tmp_path / "r.csv"), "--records", str(tmp_path / "r.parquet"))
    proc = stopped_after(2, args, tmp_path / "r.parquet.journal")
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    resumed = subprocess.run([SERQ, *args], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert "(2 run now, 2 resumed)" in resumed.stderr, resumed.stderr
    assert pq.read_schema(tmp_path / "r.parquet").field("turn").type == "int32"
    assert (tmp_path / "r.parquet").read_bytes() == (tmp_path / "w.parquet").read_bytes()
    assert (tmp_path / "r.csv").read_bytes() == (tmp_path / "w.csv").read_bytes()
