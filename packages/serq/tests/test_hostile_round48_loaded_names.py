"""A FILE no installed part loads is named, in each of load_program's messages, as every message names a file
(serq.errors.shown_path: cut around '…' past 240 characters). Before, 'FILE: unknown file type', 'FILE: no
installed part loads …' and 'FILE: cannot read: No such file or directory' printed it whole: a first line of
685 characters for a file in a folder of 600."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import shown_path

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")


def _long(tmp_path: Path) -> Path:
    folder = tmp_path / ("y" * 200) / ("z" * 200) / ("w" * 200)
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize(("name", "exists", "said"), [
    ("t.csv", True, "unknown file type (the installed parts load: .ir.json, .sq)"),
    ("gone.csv", False, "cannot read: No such file or directory"),
])
def test_a_long_name_is_cut(tmp_path, name, exists, said):
    p = _long(tmp_path) / name
    if exists:
        p.write_text("x,y\n")
    r = subprocess.run([SERQ, "check", str(p)], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    first = r.stderr.splitlines()[0]
    shown = shown_path(p)
    assert len(shown) == 240 and "…" in shown
    assert first == f"error: {shown}: {said}", first[:400]
