"""A sweep's journal (``OUT.journal``, ``--records``' ``FILE.journal``) with a line longer than
serq_sweep.core.TABLE_LINE (a sparse file of NUL bytes, say; serq.files.MAX_LINE, 16 MiB, until a run's entry
of a wide program, every figure by name, was found longer) is refused as no sweep's journal, saying what to do
(``remove the file or give --fresh``), the file as it was: it was the reader's words alone, "line 1 is
longer than 16 MiB"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep.core import TABLE_LINE as MAX_LINE

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); record r { x = now; } }
run { horizon 5; seed 1; }
"""


@pytest.mark.parametrize(("journal", "args"), [("t.csv.journal", ()), ("r.csv.journal", ("--records", "r.csv"))])
def test_a_journal_line_too_long_is_no_journal(tmp_path, journal, args):
    (tmp_path / "p.sq").write_text(PROGRAM)
    with open(tmp_path / journal, "wb") as f:
        f.truncate(MAX_LINE + 2**20)  # (sparse: NUL bytes, one line)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "t.csv", *args],
                       capture_output=True, text=True, cwd=tmp_path, timeout=50, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"error: {journal}: line 1 is longer than {MAX_LINE // 2**20} MiB, which no entry of a "
                        "sweep's journal is; remove the file or give --fresh\n")
    assert os.path.getsize(tmp_path / journal) == MAX_LINE + 2**20
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["p.sq", journal])
