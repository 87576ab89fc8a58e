"""`serq run --records FILE.parquet` without pyarrow or polars is refused before the run: it ran the whole
simulation and wrote its report, then refused to write the records (a long run's records lost for want of
a writer, where a .csv file needs neither)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { run s (0.5); record req { x = now; } end; }
run { horizon 100; seed 1; }
"""

# the serq command with pyarrow and polars unimportable (None in sys.modules: find_spec says not installed)
RUN = ("import sys; sys.modules['pyarrow'] = None; sys.modules['polars'] = None; "
       "from serq.cli import entry; sys.argv = ['serq'] + sys.argv[1:]; entry()")


@pytest.mark.timeout(60)
def test_a_parquet_records_file_without_a_writer_is_refused_before_the_run(tmp_path: Path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-c", RUN, "run", "p.sq", "--no-progress", "-o", "r.txt",
                        "--records", "req.parquet"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == ("error: --records req.parquet: writing Parquet needs pyarrow or polars "
                                "(pip install 'serq-sim[frames]'); a .csv file needs neither"), r.stderr
    assert "Traceback" not in r.stderr
    # nothing ran: no report, no records
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]
    # a .csv file needs neither: the same command writes its report and records
    r = subprocess.run([sys.executable, "-c", RUN, "run", "p.sq", "--no-progress", "-o", "r.txt",
                        "--records", "req.csv"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "req.csv").read_text().startswith("session,turn,time,x")
