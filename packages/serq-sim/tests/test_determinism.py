"""Same program, same seed: byte-identical JSON reports and dumps, through the command a user runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gauged import PROGRAM

SERQ = str(Path(sys.executable).parent / "serq")


def run(tmp_path: Path, tag: str, *args: str) -> tuple[bytes, dict[str, bytes]]:
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM)
    out = tmp_path / tag
    r = subprocess.run([SERQ, "run", str(prog), "--no-progress", "--json", "--dump", str(out), *args],
                       capture_output=True, timeout=300, env=os.environ)
    assert r.returncode == 0, r.stderr.decode()
    files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.csv"))}
    return r.stdout, files


def test_two_runs_are_byte_identical(tmp_path):
    report_a, dumps_a = run(tmp_path, "a")
    report_b, dumps_b = run(tmp_path, "b")
    assert report_a == report_b
    assert set(dumps_a) == {"response.csv", "hit.csv", "gauge/used_kv.csv"}
    assert dumps_a == dumps_b
    assert dumps_a["response.csv"].startswith(b"time,session,turn,value\n")
    assert dumps_a["gauge/used_kv.csv"].startswith(b"time,value\n")


def test_another_seed_gives_another_run(tmp_path):
    report_a, dumps_a = run(tmp_path, "a")
    report_c, dumps_c = run(tmp_path, "c", "--seed", "4")
    assert report_a != report_c and dumps_a["response.csv"] != dumps_c["response.csv"]
