"""The hint of an unknown function (``; the library `vllm.sq` defines it``) reads the ``.sq`` files of the
library folders (``SERQ_PATH``'s, the parts'): it read each with ``Path.read_text``, so a FIFO named
``x.sq`` there (which no process writes) made every compile of a program calling an unknown function wait
for ever, and a link to ``/dev/zero`` read until memory ran out. It reads a regular file only, as every
other read of a source does (serq.files.read_input); anything else is skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (nosuch()); end; }\nrun { horizon 10; }\n"


@pytest.mark.parametrize("planted", ["fifo", "zero"])
def test_a_fifo_or_a_device_in_a_library_folder_does_not_block_the_hint(tmp_path, planted):
    lib = tmp_path / "lib"
    lib.mkdir()
    if planted == "fifo":
        os.mkfifo(lib / "evil.sq")
    else:
        (lib / "evil.sq").symlink_to("/dev/zero")
    (lib / "good.sq").write_text("def nosuch() = 1;\n")
    (tmp_path / "p.sq").write_text(PROGRAM)
    env = {**os.environ, "SERQ_PATH": str(lib)}
    r = subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith("p.sq:3:18: error: unknown function `nosuch`; the library `good.sq` defines it"), first
