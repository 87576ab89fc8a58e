"""A run-time error quotes its source line from the ``.sq`` file its span names, read as every source is
read (``serq.files.read_input``, at most ``MAX_SOURCE`` bytes, a regular file only).

``serq_sim.errors.source_excerpt`` read the file with ``Path.read_text`` and split it into lines: an IR file
someone sent, whose spans name a sparse ``big.sq`` of 1 GiB beside it, made ``serq run`` (and
``serq_sim.run``'s ``SimError``) take 6 s and 2 GB to print the error. A file beyond the limit is not quoted;
the error is the same, without its line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq.files import MAX_SOURCE

PROGRAM = ("stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1 - 2 * ~exp(1)); }\n"
           "run { horizon 50; seed 1; }\n")
MESSAGE = "at t=2.08408, session 2: the run's work is negative (-0.510355)"


def _ir_naming(tmp_path: Path, name: str) -> Path:
    """The IR of PROGRAM whose spans name ``name`` (a file beside it) in place of its source."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    data = json.loads(serq_ir.encode(serq_frontend.compile(tmp_path / "p.sq")))
    text = json.dumps(data).replace(json.dumps(str(tmp_path / "p.sq")), json.dumps(name))
    (tmp_path / "q.ir.json").write_text(text)
    return tmp_path / "q.ir.json"


def test_a_source_within_the_limit_is_quoted(tmp_path):
    ir = _ir_naming(tmp_path, str(tmp_path / "p.sq"))
    with pytest.raises(serq_sim.SimError) as info:
        serq_sim.run(serq_ir.load(ir))
    assert str(info.value) == (f"{tmp_path / 'p.sq'}:3:11: error: {MESSAGE}\n"
                               "  session { run s (1 - 2 * ~exp(1)); }\n            ^")


def test_a_source_beyond_the_limit_is_not_quoted(tmp_path):
    big = tmp_path / "big.sq"
    big.write_text(PROGRAM + "// " + "x" * MAX_SOURCE + "\n")  # the line is there, in a file too large
    ir = _ir_naming(tmp_path, str(big))
    with pytest.raises(serq_sim.SimError) as info:
        serq_sim.run(serq_ir.load(ir))
    assert str(info.value) == f"{big}:3:11: error: {MESSAGE}"


def _limited() -> None:  # pragma: no cover - in the child, before serq starts
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))


@pytest.mark.skipif(sys.platform != "linux", reason="a sparse file and an address-space limit")
def test_a_sparse_gigabyte_named_by_a_span_is_not_read(tmp_path):
    with open(tmp_path / "big.sq", "wb") as f:
        f.truncate(2**30)
    ir = _ir_naming(tmp_path, "big.sq")
    t = time.monotonic()
    r = subprocess.run([str(Path(sys.executable).parent / "serq"), "run", ir.name], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL, preexec_fn=_limited)
    assert time.monotonic() - t < 30
    assert r.returncode == 1 and r.stderr == f"big.sq:3:11: error: {MESSAGE}\n", r.stderr
