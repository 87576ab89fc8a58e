"""serq plot names a table or records file it cannot read as every message names a file
(serq.errors.shown_path, cut around '…' past 240 characters): 'FILE: cannot read the table: …', 'FILE:
cannot read the records: …' and 'FILE: --cdf reads a dump folder or a records file' printed it whole, a line
of 729 characters for a file in a folder of 600. Nothing is drawn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import shown_path

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")


@pytest.mark.parametrize(("name", "args", "said"), [
    ("r.parquet", ["--x", "a", "--y", "b"],
     "cannot read the table: Parquet file size is 7 bytes, smaller than the minimum file footer (8 bytes)"),
    ("r.parquet", ["--cdf", "ttft"],
     "cannot read the records: Parquet file size is 7 bytes, smaller than the minimum file footer (8 bytes)"),
    ("r.txt", ["--cdf", "ttft"], "--cdf reads a dump folder or a records file (.parquet or .csv)"),
])
def test_a_long_name_is_cut(tmp_path, name, args, said):
    folder = tmp_path / ("y" * 200) / ("z" * 200) / ("w" * 200)
    folder.mkdir(parents=True)
    p = folder / name
    p.write_text("garbage")
    r = subprocess.run([SERQ, "plot", str(p), *args, "-o", "o.svg"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    shown = shown_path(p)
    assert len(shown) == 240 and "…" in shown
    assert r.stderr == f"error: {shown}: {said}\n", r.stderr[:500]
    assert not (tmp_path / "o.svg").exists()
