"""A dump's CSV saved as UTF-16 without a byte-order mark (LE or BE), plotted (`serq plot DIR --cdf y`), says
what it is at its first byte, as a sweep's table and records read back do: it was 'not a dump's CSV (its header
has no columns time and value)', the header read as UTF-8 with a NUL beside each letter. One rule, one place:
serq_sweep.core.unmarked_utf16 checks the header of every reader (the table, the records, a dump's CSV), and
TableFault.message no longer opens the file again to add the note to any fault."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); observe y = now; end; }\n"
           "run { horizon 20; seed 1; }\n")


def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("order", ["LE", "BE"])
def test_a_dump_saved_as_utf16_says_so(tmp_path, order):
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert _serq(tmp_path, "run", "p.sq", "--no-progress", "--dump", "d").returncode == 0
    csv = tmp_path / "d" / "y.csv"
    csv.write_bytes(csv.read_text().encode(f"utf-16-{order.lower()}"))
    r = _serq(tmp_path, "plot", "d", "--cdf", "y", "-o", "y.svg")
    assert (r.returncode, r.stdout) == (1, ""), r.stderr
    assert r.stderr.splitlines()[0] == (
        f"d/y.csv:1:1: error: not a dump's CSV (it begins as UTF-16{order} text without a byte-order mark does (a "
        f"NUL byte beside each ASCII character): serQ reads UTF-8 text (iconv -f UTF-16{order} -t UTF-8 converts "
        "it))")
    assert not (tmp_path / "y.svg").exists()
