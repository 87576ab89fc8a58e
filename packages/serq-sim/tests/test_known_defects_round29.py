"""Known defects, round 29 (serq-sim)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sim
from serq_sim.trace import load_trace

HEADER = "session,turn,new,out,think,forced"
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("text", [HEADER, HEADER + "\n", HEADER + "\r\n", HEADER + "\n\n\n", HEADER + "\n,,,,,\n"])
def test_a_trace_of_a_header_alone_is_told_at_the_header_s_end(tmp_path, text):
    """A trace of a header and no rows was told at line 2, column 1, quoting an empty line that may not exist
    (the file ends with the header's line); it is told at the end of the header's line, quoted."""
    p = tmp_path / "t.csv"
    p.write_text(text, newline="")
    with pytest.raises(serq_sim.SimError) as e:
        load_trace(str(p))
    assert str(e.value) == (f"{p}:1:34: error: the trace has no rows after its header\n"
                            f"  {HEADER}\n"
                            f"  {' ' * 33}^")


def test_a_header_after_blank_lines_is_told_at_its_own_line(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("\n ,\n" + HEADER + ",extra\n")
    with pytest.raises(serq_sim.SimError) as e:
        load_trace(str(p))
    assert str(e.value).split("\n")[0] == f"{p}:3:40: error: the trace has no rows after its header"


def test_serq_run_says_it_once(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text(HEADER + "\n")
    out = subprocess.run([sys.executable, "-m", "serq", "run", str(ROOT / "examples/replay/vllm_replay.sq"),
                          "--trace", str(p), "--horizon", "1", "--warmup", "0"], capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr == f"{p}:1:34: error: the trace has no rows after its header\n  {HEADER}\n  {' ' * 33}^\n"
