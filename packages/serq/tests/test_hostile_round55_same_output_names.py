"""Two outputs of one run that are one file (serq.files.check_distinct: `-o ./x.csv --records x.csv`, `-o x
--dump x/d`) named in the usage error as given: a line break in the name split the message's one line,
three times over. They are printed as every message prints a file's name (serq.errors.shown_path)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; record req { w = now - t0; } }\n"
           "run { horizon 10; seed 3; }\n")


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "run", "p.sq", "--no-progress", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


def test_one_file_named_twice_is_shown_as_every_name_is(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _run(tmp_path, "-o", "n\nl.csv", "--records", "./n\nl.csv")
    assert (r.returncode, r.stdout, r.stderr) == (2, "", "error: ./n\\nl.csv (it is n\\nl.csv): named by both -o "
                                                         "and --records; each output of a run needs a file of its "
                                                         "own\n")
    r = _run(tmp_path, "-o", "n\nl.csv", "--dump", "n\nl.csv/d")
    assert (r.returncode, r.stdout, r.stderr) == (2, "", "error: n\\nl.csv: named by -o as a file, and holds the "
                                                         "folder n\\nl.csv/d of --dump (a folder of files); each "
                                                         "output of a run needs a file of its own\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]
