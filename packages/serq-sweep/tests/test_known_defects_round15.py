"""Known defects, round 15 (serq-sweep)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import serq_sweep
from serq_sim.errors import SimError

pytestmark = pytest.mark.timeout(60)

SERQ = [sys.executable, "-c", "from serq.cli import main; main()"]


def serq(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([*SERQ, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


# --- a trace given to a program without a trace clause is named as the caller gave it ---------------------
#
# docs/sweep.md: the Python API's messages name its arguments (horizon=5, over=('B', '1:8')), the command
# line's its options. The refusal of a trace with nothing to replace said `--trace FILE` to a caller of
# sweep(trace=...), find(trace=...) and compare(trace=...), who gave no flag.

PLAIN = """let N = 1;
stage gpu : fifo(N);
workload { arrive poisson(2); }
session { run gpu (0.1); }
run { horizon 20; }
"""
TRACE = "session,turn,new,out,think,forced\n1,1,10,2,0,0\n"
TAIL = ": the program's workload reads no trace (no `trace \"FILE\"` clause) for it to replace"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "plain.sq").write_text(PLAIN)
    (tmp_path / "week.csv").write_text(TRACE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_sweep_find_and_compare_name_the_argument_trace(folder):
    want = "plain.sq: error: trace=week.csv" + TAIL
    with pytest.raises(SimError) as e:
        serq_sweep.sweep("plain.sq", trace="week.csv", workers=0)
    assert str(e.value) == want
    with pytest.raises(SimError) as e:
        serq_sweep.find("plain.sq", "turns >= 1", ("N", "1:4:1"), trace="week.csv", workers=0)
    assert str(e.value) == want
    with pytest.raises(SimError) as e:
        serq_sweep.compare("plain.sq", sets={"N": [1, 2]}, trace="week.csv", workers=0)
    assert str(e.value) == want


def test_the_command_line_still_names_the_option(folder):
    want = "plain.sq: error: --trace week.csv" + TAIL + "\n"
    for args in (["sweep", "plain.sq", "--trace", "week.csv"],
                 ["sweep", "plain.sq", "--find", "turns >= 1", "--over", "N", "1:4:1", "--trace", "week.csv"],
                 ["compare", "plain.sq", "--set", "N=1,2", "--trace", "week.csv"]):
        r = serq(*args, "--workers", "0", cwd=folder)
        assert (r.returncode, r.stdout, r.stderr) == (1, "", want), args
