"""An output the system refuses for its name is told with the name cut as every message cuts a file's name.

``serq run p.sq -o NAME.json`` with a name of 3 000 characters (more than a folder takes) said ``error:
NAME.json: File name too long`` with the name whole, a line of 3 000 characters (120 000 for a name of
120 000), where an input's name is cut around ``…`` to 240 characters (serq.errors.shown_path); a sweep's
``-o`` alike. The cli's message for an OSError of a file now prints the name as shown_path does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import PATH_WIDTH

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """\
stage s : delay;
workload { arrive poisson(1); }
session { run s (1); end; }
run { horizon 5; seed 1; }
"""


@pytest.mark.parametrize("command", [["run", "p.sq", "-o"], ["sweep", "p.sq", "--seeds", "1", "-o"]])
def test_an_output_name_too_long_is_cut_in_its_message(tmp_path, command):
    (tmp_path / "p.sq").write_text(PROGRAM)
    name = "a" * 1500 + "b" * 1500 + ".csv"
    p = subprocess.run([SERQ, *command, name], cwd=tmp_path, capture_output=True, text=True, timeout=100)
    assert p.returncode == 1, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    head, body = PATH_WIDTH // 2, PATH_WIDTH // 2 - 1
    assert lines[0] == "error: " + "a" * head + "…" + "b" * (body - 4) + ".csv: File name too long"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["p.sq"]  # nothing written


def test_a_short_output_name_is_said_whole(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    name = "c" * 200 + "/r.json"  # no such folder: said with the whole name as before
    p = subprocess.run([SERQ, "run", "p.sq", "-o", name], cwd=tmp_path, capture_output=True, text=True,
                       timeout=100)
    assert p.returncode == 1
    assert name in p.stderr and "…" not in p.stderr
