"""``serq plot`` of a Parquet table it refuses ends with its message and status 1, every time.

Arrow (pandas reads Parquet through it, and holds a table's words in Arrow arrays) was torn down at the
process's exit around a table the refusal's traceback held, frozen: SIGABRT, ``terminate called without
an active exception``, after the message, in about one run of 20 on a loaded machine (a full suite's
run of test_hostile_round27_parquet_cells failed so). ``serq`` now ends at ``os._exit`` once its outputs
are out (serq.cli._end_process; packages/serq/tests/test_exit_without_teardown.py). Here: runs side by
side, as a loaded machine has them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from delay_programs import delay_program
from serq_sweep import sweep

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = delay_program(record=None)


@pytest.mark.timeout(240)
def test_refused_tables_end_with_their_message_each_time(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, workers=0, out=str(tmp_path / "t.parquet"), progress=False)
    frame = pd.read_parquet(tmp_path / "t.parquet")
    frame["point"] = [{"x": 1}] * len(frame)
    frame.to_parquet(tmp_path / "bad.parquet")
    statuses, errors = [], []
    for _ in range(4):  # four rounds of four side by side
        procs = [subprocess.Popen([SERQ, "plot", "bad.parquet", "--x", "a", "--y", "w.mean", "-o", f"o{i}.svg"],
                                  cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  stdin=subprocess.DEVNULL) for i in range(4)]
        for p in procs:
            out, err = p.communicate(timeout=120)
            statuses.append(p.returncode)
            errors.append(err)
    assert statuses == [1] * 16, (statuses, [e for e in errors if "terminate" in e][:1])
    assert all(e.startswith("error: ") and "column point, row 1" in e and e.count("\n") == 1 for e in errors), errors[0]
    assert not list(tmp_path.glob("o*.svg"))
