"""A program compiles alike with the compile cache on and off, whatever its line ends.

The cache read a program's text (to key it, and handed that text to the compile) with Python's universal
newlines, which make a lone carriage return a line end; the parser's comment runs to a line feed. So a
file of CR line ends compiled as different programs: ``// c<CR>let lam = 1;`` with the cache (the default)
defined ``lam``, and without it (``SERQ_COMPILE_CACHE=0``) ``lam`` was inside the comment. The cache reads
the text as the compile does, as it is (where a lone carriage return is now an error, either way).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
TAIL = "workload { arrive poisson(lam); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _run(tmp_path: Path, *args: str, cache: bool) -> subprocess.CompletedProcess:
    env = {**os.environ, "SERQ_CACHE_DIR": str(tmp_path / "cache"), "SERQ_COMPILE_CACHE": "1" if cache else "0"}
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"])
def test_the_cache_compiles_a_program_as_the_compile_reads_it(tmp_path, end):
    (tmp_path / "p.sq").write_bytes(f"stage s : fifo; // a stage{end}let lam = 1;\n{TAIL}".encode())
    results = [_run(tmp_path, "ir", "p.sq", "--no-spans", cache=c) for c in (False, True, True)]  # a miss, a hit
    assert len({(r.returncode, r.stdout, r.stderr) for r in results}) == 1, [r.stderr for r in results]
    r = results[0]
    if end == "\r":  # a carriage return alone is an error where it stands (test_hostile_round6_carriage_return.py)
        assert r.returncode == 1 and "p.sq:1:27: error: a carriage return not followed by a line feed" in r.stderr, \
            r.stderr
    else:
        assert r.returncode == 0 and '"lam"' in r.stdout, r.stderr
