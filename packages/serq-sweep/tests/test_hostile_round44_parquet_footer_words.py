"""A Parquet file whose footer pyarrow cannot decode (its metadata overwritten: hand-edited, or cut and
patched) is refused in one line. pyarrow's words of it end in a newline ("Couldn't deserialize thrift: …\\n"),
and they were passed on whole: ``serq plot`` ended its message in a blank line, and a sweep resuming from
such a table broke its message in two before "); remove it or give --fresh". The reader takes their first
line, as it takes pandas' words of a table it cannot read."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 1;

stage s : delay;

workload {
  arrive poisson(lam);
}

session {
  run s (1);
}

run { horizon 5; seed 1; }
"""


def _bad_footer(path: Path) -> bytes:
    """A Parquet file of one row whose footer's metadata (the bytes before its length and PAR1) is 0xff."""
    pq.write_table(pa.table({"key": ["a"], "lam": [0.5]}), path)
    data = bytearray(path.read_bytes())
    n = struct.unpack("<i", bytes(data[-8:-4]))[0]
    data[-8 - n:-8] = b"\xff" * n
    path.write_bytes(bytes(data))
    return bytes(data)


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=90,
                          stdin=subprocess.DEVNULL)


def _one_line(stderr: str) -> str:
    assert stderr.endswith("\n") and stderr.count("\n") == 1, repr(stderr)
    return stderr[:-1]


@pytest.mark.parametrize("args", [["--x", "lam", "--y", "lam"], ["--cdf", "ttft"]])
def test_plot_says_it_in_one_line(tmp_path, args):
    _bad_footer(tmp_path / "t.parquet")
    r = _run(["plot", "t.parquet", *args, "-o", "f.png"], tmp_path)
    assert r.returncode == 1, r.stdout
    line = _one_line(r.stderr)
    assert line.startswith("error: t.parquet: cannot read the ")
    assert "Couldn't deserialize thrift" in line
    assert not (tmp_path / "f.png").exists()


def test_a_resumed_sweep_says_it_in_one_line_and_leaves_the_table(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    before = _bad_footer(tmp_path / "t.parquet")
    r = _run(["sweep", "p.sq", "--set", "lam=1,2", "--out", "t.parquet"], tmp_path)
    assert r.returncode == 1, r.stdout
    line = _one_line(r.stderr)
    assert line.startswith("error: t.parquet: cannot read the table to resume from (Couldn't deserialize thrift")
    assert line.endswith("); remove it or give --fresh")
    assert (tmp_path / "t.parquet").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "t.parquet"]
