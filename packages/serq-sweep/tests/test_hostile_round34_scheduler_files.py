"""``--dask FILE.json`` names a scheduler file, which the sweep reads itself (engines.scheduler_address), as it
reads every input: only a regular file, of UTF-8 JSON, an object whose ``address`` is text. Dask read it: a
FIFO there was opened and waited on for ever, and ``{}``, ``[]``, an empty file or ``{"address": 5}`` were
tracebacks of Dask's (``AssertionError``, ``TypeError``). What Dask makes of an address it cannot connect to
is the user's too: ``tls://`` without Dask's TLS settings was a ``TypeError`` traceback; each is now
``--dask WHERE: cannot reach the scheduler: …``, status 1.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep.engines import scheduler_address

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); }
run { horizon 5; seed 1; }
"""

NOT_ONE = "not a scheduler file (it holds "


@pytest.mark.parametrize(("text", "holds"), [
    (b"", "nothing"),
    (b"{", "no JSON"),
    (b"{}", "an object without an address"),
    (b"[]", "a JSON array"),
    (b"null", "null"),
    (b'"tcp://127.0.0.1:1"', "a JSON string"),
    (b"7", "a JSON number"),
    (b'{"address": 5}', "the address 5"),
    (b'{"address": ""}', "the address ''"),
    (b'{"address": null}', "the address None"),
])
def test_a_file_of_other_json_is_no_scheduler_file(tmp_path, text, holds):
    (tmp_path / "s.json").write_bytes(text)
    with pytest.raises(UserError) as info:
        scheduler_address(str(tmp_path / "s.json"))
    assert f"{NOT_ONE}{holds};" in str(info.value)


def test_a_scheduler_file_gives_its_address(tmp_path):
    # what dask scheduler --scheduler-file writes (a type, an id, services, workers beside the address)
    (tmp_path / "s.json").write_text('{"type": "Scheduler", "id": "Scheduler-1", "address": "tcp://10.0.0.1:8786",'
                                     ' "services": {"dashboard": 8787}, "started": 1.5, "workers": {}}')
    assert scheduler_address(str(tmp_path / "s.json")) == "tcp://10.0.0.1:8786"


@pytest.mark.parametrize(("make", "why"), [
    (lambda p: None, "cannot read the scheduler file: No such file or directory"),
    (lambda p: p.mkdir(), "cannot read the scheduler file: is a folder, not a file"),
    (lambda p: p.write_bytes(b'\xff\xfe{\x00}\x00'), "the scheduler file is not UTF-8 text (byte 0xFF)"),
])
def test_a_file_that_cannot_be_read_is_said_so(tmp_path, make, why):
    make(tmp_path / "s.json")
    with pytest.raises(UserError) as info:
        scheduler_address(str(tmp_path / "s.json"))
    assert str(info.value).startswith(f"error: --dask {tmp_path / 's.json'}: {why}")


def _sweep(tmp_path: Path, dask: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([SERQ, "sweep", "p.sq", "--no-progress", "--dask", dask, "-o", "t.csv"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=50, stdin=subprocess.DEVNULL)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_is_refused_not_waited_on(tmp_path):
    pytest.importorskip("distributed")
    os.mkfifo(tmp_path / "s.json")
    r = _sweep(tmp_path, "s.json")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "error: --dask s.json: cannot read the scheduler file: is a FIFO (a named pipe), not a file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "s.json"]  # no table, no journal


def test_a_json_file_without_an_address_is_one_message(tmp_path):
    pytest.importorskip("distributed")
    (tmp_path / "s.json").write_text("{}")
    r = _sweep(tmp_path, "s.json")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"error: --dask s.json: {NOT_ONE}an object without an address;")
    assert len(r.stderr.splitlines()) == 1


def test_an_address_dask_cannot_use_is_one_message(tmp_path):
    pytest.importorskip("distributed")
    r = _sweep(tmp_path, "tls://127.0.0.1:1")  # (no TLS settings: a TypeError of Dask's, before any connection)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("error: --dask tls://127.0.0.1:1: cannot reach the scheduler: TypeError: ")
    assert len(r.stderr.splitlines()) == 1
