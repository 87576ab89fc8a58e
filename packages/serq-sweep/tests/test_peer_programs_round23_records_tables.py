"""serq plot of the name given to --records, when the program records several tables.

A serving researcher added a table of their own beside lib/vllm.sq's (`record cls { prio = prio; }`, to split the
TTFT by class), ran `serq run p.sq --records pr.csv`, which wrote `pr.request.csv` and `pr.cls.csv`, then drew
`serq plot pr.csv --cdf ttft` and was told `Path 'pr.csv' does not exist`, the name they had just given. The
plot's SOURCE that does not exist is now told the files written in its place, when they are there
(serq.options.record_tables: `NAME.TABLE.csv` or `.parquet` beside it), as is serq_sweep.plot's; a name with no
such files is told as every command's missing file is (`error: NAME: cannot read: …`, status 1).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq import UserError
from serq.options import record_tables

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session {
  set t0 = now;
  run s (~exp(1));
  record request { sent = t0; first_token = now; last_token = now; prompt = 1; output = 1; }
  record cls { prio = serial % 2; }
}
run { horizon 50; seed 1; }
"""


def test_the_plot_of_the_records_name_names_the_tables_written(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "--records", "pr.csv"], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.glob("pr*")) == ["pr.cls.csv", "pr.request.csv"]
    assert record_tables(str(tmp_path / "pr.csv")) == [str(tmp_path / "pr.cls.csv"), str(tmp_path / "pr.request.csv")]
    r = subprocess.run([SERQ, "plot", "pr.csv", "--cdf", "ttft", "-o", "x.svg"], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 1 and not (tmp_path / "x.svg").exists()
    assert r.stderr.strip().splitlines() == [
        "error: pr.csv: cannot read: No such file or directory; records of several tables are written one file "
        "a table, named after it (pr.cls.csv, pr.request.csv); give one"]
    with pytest.raises(UserError) as e:
        serq_sweep.plot(str(tmp_path / "pr.csv"), str(tmp_path / "x.svg"), cdf_of=["ttft"])
    assert str(e.value) == (f"error: {tmp_path / 'pr.csv'}: cannot read the records: No such file or directory; records of "
                            f"several tables are written one file a table, named after it ({tmp_path / 'pr.cls.csv'}, "
                            f"{tmp_path / 'pr.request.csv'}); give one")
    # the one named is drawn
    r = subprocess.run([SERQ, "plot", "pr.request.csv", "--cdf", "ttft", "-o", "x.svg"], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "x.svg").exists(), r.stderr


def test_a_name_without_such_files_is_told_as_before(tmp_path):
    (tmp_path / "pr.v1.txt").write_text("")
    (tmp_path / "pr.a-b.csv").write_text("")  # no table's name
    assert record_tables(str(tmp_path / "pr.csv")) == []
    assert record_tables(str(tmp_path / "pr.txt")) == []
    r = subprocess.run([SERQ, "plot", "pr.csv", "--cdf", "ttft", "-o", "x.svg"], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.strip() == "error: pr.csv: cannot read: No such file or directory"
