"""serq plot --where of a name with a look-alike letter (a Cyrillic а in lаmbda) names the letter, as every
other did-you-mean does (serq.errors.did_you_mean): found so already (serq_sweep.rows.selected), pinned here
through the command on a sweep's table and its points table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")

MM1 = """let lambda = 0.5;
stage s : fifo(1);
workload { arrive poisson(lambda); }
session {
  run s (exp(1));
}
run { horizon 100; seed 1; }
"""


def test_where_names_the_look_alike_letter(tmp_path):
    (tmp_path / "mm1.sq").write_text(MM1)
    r = subprocess.run([SERQ, "sweep", "mm1.sq", "--set", "lambda=0.5,0.8", "-o", "t.csv"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for table in ("t.csv", "t.points.csv"):
        r = subprocess.run([SERQ, "plot", table, "--x", "lambda", "--y", "stages.s.wait.mean", "--where",
                            "l\u0430mbda=1", "-o", "p.png"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert r.returncode == 1, r.stderr
        assert r.stderr.startswith("error: --where l\u0430mbda=1: the table has no column l\u0430mbda (its columns: ")
        assert r.stderr.rstrip().endswith("(did you mean `lambda`? the name given is not ASCII: its `\u0430` is "
                                          "U+0430 CYRILLIC SMALL LETTER A)"), r.stderr
        assert not (tmp_path / "p.png").exists()
