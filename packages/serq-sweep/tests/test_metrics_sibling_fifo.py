"""``serq metrics RECORDS --by NAME`` of a column the records lack looks for it in the other tables the run wrote
beside them (``r.kind.csv`` beside ``r.request.csv``) to say where it is. It read each sibling's header with
``open()``, so a FIFO of a sibling's name (``mkfifo r.kind.csv``) was waited on for ever: the command hung
where it had one line to say. The siblings are read as a table is (serq_sweep.core.csv_header: a regular file
only), and a FIFO gives no hint, the error standing as it was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = Path(sys.executable).parent / "serq"
REQUESTS = "session,turn,sent,first_token,last_token,output,prompt\n0,0,0,1,2,3,4\n"
NO_KIND = ("error: --by kind: r.request.csv has no column kind (its columns: session, turn, sent, first_token, "
           "last_token, output, prompt)")


def _metrics(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(SERQ), "metrics", "r.request.csv", "--by", "kind"], cwd=folder, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX file kind")
def test_a_fifo_beside_the_records_is_not_waited_on(tmp_path):
    (tmp_path / "r.request.csv").write_text(REQUESTS)
    os.mkfifo(tmp_path / "r.kind.csv")
    r = _metrics(tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", NO_KIND + "\n")


def test_a_sibling_table_with_the_column_is_named(tmp_path):
    (tmp_path / "r.request.csv").write_text(REQUESTS)
    (tmp_path / "r.kind.csv").write_text("\ufeffsession,turn,kind\n0,0,chat\n")
    r = _metrics(tmp_path)
    assert r.returncode == 1
    assert r.stderr == (NO_KIND + "; the column kind is in r.kind.csv, another table of the same run: join the two "
                        "on session and turn first, and give serq metrics the joined file (docs/sweep.md, \"A column "
                        "of the program's own\")\n")
