"""serq plot's usage errors of a long name, -o FILE of another suffix and a dump folder given to --x/--y or
without --cdf/--gauge, name it by serq.errors.shown_path (cut around '…' past 240 characters), as its other
messages do: each printed it whole (a first line of over 600 characters for a name in a folder of 600).
Nothing is drawn."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import shown_path

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")


def _plot(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "plot", *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def _long(tmp_path: Path) -> Path:
    folder = tmp_path / ("y" * 200) / ("z" * 200) / ("w" * 200)
    folder.mkdir(parents=True)
    return folder


def test_an_output_of_another_suffix(tmp_path):
    (tmp_path / "t.csv").write_text("x,y\n1,2\n")
    out = _long(tmp_path) / "o.txt"
    r = _plot(tmp_path, "t.csv", "--x", "x", "--y", "y", "-o", str(out))
    assert r.returncode == 2 and r.stdout == ""
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"error: -o {shown_path(out)}: a plot is .svg, .png or .pdf"), first[:500]
    assert str(out) not in r.stderr
    assert not out.exists()


@pytest.mark.parametrize(("args", "said"), [
    (["--x", "x", "--y", "y"], ": a folder: --x/--y read a sweep's table (--cdf/--gauge read a dump)"),
    ([], ": a dump folder (serq run --dump DIR) needs --cdf OBSERVE or "),
])
def test_a_folder_given_where_it_is_not_read(tmp_path, args, said):
    folder = _long(tmp_path) / "dump"
    folder.mkdir()
    r = _plot(tmp_path, str(folder), *args, "-o", "o.svg")
    assert r.returncode != 0 and r.stdout == ""
    first = r.stderr.splitlines()[0]
    shown = shown_path(folder)
    assert len(shown) == 240 and "…" in shown
    assert shown + said in first, first[:600]
    assert str(folder) not in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["y" * 200]
