"""``serq plot`` of a CSV table that holds no header line (an empty file, blank lines, a byte-order mark
alone) says so: its refusal of the --x or --hue column listed the table's columns, and of no columns it
read "its columns: " and nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)
pytest.importorskip("matplotlib")

SERQ = str(Path(sys.executable).parent / "serq")


@pytest.mark.parametrize("data", [b"", b"\n\n", b"\xef\xbb\xbf", b"\r\n"], ids=["empty", "blank", "bom", "crlf"])
def test_a_table_of_no_header_is_said_to_have_none(tmp_path, serq_in_process, monkeypatch, data):
    (tmp_path / "t.csv").write_bytes(data)
    if data:  # (serq.cli.main in the test's process, in the folder as the child ran; the empty file's as a child)
        monkeypatch.chdir(tmp_path)
        r = serq_in_process("plot", "t.csv", "--x", "lam", "--y", "y.mean", "-o", "a.svg")
    else:
        r = subprocess.run([SERQ, "plot", "t.csv", "--x", "lam", "--y", "y.mean", "-o", "a.svg"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=50, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("error: --x lam: no column lam (no seed column, so not a table of serq sweep: the file "
                        "holds no header line)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_a_header_of_other_columns_lists_them(tmp_path):
    (tmp_path / "t.csv").write_text("name,score\nx,1\n")
    r = subprocess.run([SERQ, "plot", "t.csv", "--x", "lam", "--y", "score", "-o", "a.svg"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=50, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stderr == ("error: --x lam: no column lam (no seed column, so not a table of serq sweep; its columns: "
                        "name, score)\n")
