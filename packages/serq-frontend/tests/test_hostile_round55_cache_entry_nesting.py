"""A compile-cache entry whose header is JSON nested some 100 000 deep (the whole header, or its `deps`),
with a digest that matches it: json's decoder ran out of recursion, and the `RecursionError`, which the
entry's reader did not catch (only a `ValueError`), ended `serq ir` and `serq run` with a traceback, status 1,
at every command until the entry was removed. It is an entry that does not load: a miss, compiled again
and written over, as a corrupt entry is (docs/language.md, "The compile cache")."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"
MAGIC = b"serq-compile-cache\n"
DEEP = 100_000


def _ir(tmp_path: Path, folder: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SERQ_COMPILE_CACHE"}
    return subprocess.run([SERQ, "ir", "p.sq"], capture_output=True, cwd=tmp_path, timeout=120,
                          env={**env, "SERQ_CACHE_DIR": str(folder)}, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("where", ["header", "deps"])
def test_a_deeply_nested_header_is_a_miss(tmp_path, where):
    (tmp_path / "p.sq").write_text(PROGRAM)
    folder = tmp_path / "cache"
    first = _ir(tmp_path, folder)
    assert (first.returncode, first.stderr) == (0, b"") and first.stdout.startswith(b"{")
    (entry,) = folder.glob("compile-*.bin")
    data = entry.read_bytes()
    assert data.startswith(MAGIC)
    head, _, ir = data[len(MAGIC):].partition(b"\n")[2].partition(b"\n")
    key = json.loads(head)["key"]
    if where == "header":
        head = b"[" * DEEP + b"]" * DEEP
    else:
        head = b'{"key": "%s", "stderr": "", "deps": [' % key.encode() + b"[" * DEEP + b"]" * DEEP + b"]}"
    body = head + b"\n" + ir
    entry.write_bytes(MAGIC + hashlib.blake2b(body, digest_size=32).hexdigest().encode() + b"\n" + body)
    r = _ir(tmp_path, folder)
    assert (r.returncode, r.stdout, r.stderr) == (0, first.stdout, b"")
    assert entry.read_bytes() == data  # compiled again and written over
    assert _ir(tmp_path, folder).stdout == first.stdout
