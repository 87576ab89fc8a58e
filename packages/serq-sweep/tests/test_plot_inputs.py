"""`serq plot TABLE`: a table whose columns are not what a curve needs is one message, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
SERQ = str(Path(sys.executable).parent / "serq")


@pytest.mark.parametrize("text, message", [
    ("a,b\n1,x\n2,y\n", "--y b: column b does not hold numbers (it has 'x')"),
    ("a,b\nx,1\ny,2\n", "--x a: column a does not hold numbers (it has 'x')"),
    ("a,b\n", "no rows to plot"),
    ("a,b,status\n1,2,error\n", "no rows to plot"),
])
def test_a_table_a_curve_cannot_draw_is_one_message(tmp_path, serq_in_process, monkeypatch, text, message):
    (tmp_path / "t.csv").write_text(text)
    monkeypatch.chdir(tmp_path)  # (serq.cli.main in the test's process, in the folder the child ran in; the
    # plot that draws, below, as a child process)
    r = serq_in_process("plot", "t.csv", "--x", "a", "--y", "b", "-o", "f.svg")
    assert r.returncode == 1, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "f.svg").exists()


def test_numbers_with_nan_and_inf_still_plot(tmp_path):
    (tmp_path / "t.csv").write_text("a,b\n1,2\n2,nan\n3,inf\n")
    r = subprocess.run([SERQ, "plot", "t.csv", "--x", "a", "--y", "b", "-o", "f.svg"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "f.svg").read_text().startswith("<?xml")
