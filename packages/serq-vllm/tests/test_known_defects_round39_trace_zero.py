"""A replay trace row of new 0 that lib/vllm.sq's request cannot run (its prefill's work is -1) is an error
whose note names the trace row (file:line:col, the row quoted), as a row of out 0 is (its decode's work is
-1): found so already (serq_sim's trace note of the session's row), pinned here with examples/replay's
program, on the first turn and a later one. (Step engines run on the general engine only.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
REPLAY = Path(__file__).resolve().parents[3] / "examples" / "replay"
HEADER = "session,turn,new,out,think,forced\n"


@pytest.mark.parametrize(("rows", "line", "stmt", "said"), [
    ("0,1,0,4,1,0\n", 2, "prefill on engine", "turn 1: new 0, out 4, think 1, forced 0"),
    ("0,1,20,4,1,0\n0,2,40,4,1,0\n0,3,0,4,1,0\n", 4, "prefill on engine", "turn 3: new 0, out 4, think 1, forced 0"),
    ("0,1,20,0,1,0\n", 2, "decode on engine", "turn 1: new 20, out 0, think 1, forced 0"),
])
def test_a_row_of_new_0_or_out_0_is_named(tmp_path, rows, line, stmt, said):
    for name in ("vllm_replay.sq", "a100_step_fit.json"):
        shutil.copy(REPLAY / name, tmp_path / name)
    (tmp_path / "short_base.csv").write_text(HEADER + rows)
    r = subprocess.run([SERQ, "run", "vllm_replay.sq", "--no-progress"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    first, quoted = r.stderr.splitlines()[:2]
    assert "lib/vllm.sq:" in first and first.endswith("the run's work is negative (-1)"), first
    assert quoted.lstrip().startswith(stmt), quoted
    row = rows.splitlines()[line - 2]
    assert f"short_base.csv:{line}:1: note: session 0 replays the trace's session 0, {said}\n  {row}\n  ^" in r.stderr
