"""``serq_ir.load(path)``, the Python API's reader of an IR file, reads it as ``serq check`` does: the
command's loader calls it, and both go through ``serq.files.read_input`` (one rule, one place).

``serq_ir.load`` read the file with ``Path.read_bytes``, none of the command's guards: a FIFO that no
process writes was waited on for ever, a link to ``/dev/zero`` was read until memory ran out (3 GB in 10 s
before it was killed), a sparse file of 1 GiB was read whole (1 GB) before its error, and an object that
gives a key twice ran with its last value (``"horizon": 5, …, "horizon": 100`` ran to 100), which the
command refuses. Each is one :class:`serq_ir.IRError` naming the file, at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import serq_ir

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                                reason="FIFOs and /dev/zero are POSIX")

PROGRAM = 'stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n'


def _load_elsewhere(path: Path) -> tuple[str, str]:
    """``serq_ir.load(path)`` in a child process (a read that never ends, or one of a whole FIFO's or device's
    worth, fails the test at the child's timeout, and a read of ``/dev/zero`` cannot take this one's memory):
    the exception's class and message."""
    code = textwrap.dedent("""
        import sys, serq_ir
        try:
            serq_ir.load(sys.argv[1])
        except BaseException as e:
            print(type(e).__name__)
            print(e)
        else:
            print("loaded")
    """)
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=30,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    kind, _, message = r.stdout.partition("\n")
    return kind, message.rstrip("\n")


def _ir(tmp_path: Path) -> bytes:
    import serq_frontend

    return serq_ir.encode(serq_frontend.compile(source=PROGRAM))


@needs_fifo
@pytest.mark.parametrize("kind, what", [("fifo", "is a FIFO (a named pipe), not a file"),
                                        ("zero", "is a character device, not a file"),
                                        ("folder", "is a folder, not a file")])
def test_what_is_not_a_regular_file_is_one_ir_error_at_once(tmp_path, kind, what):
    p = tmp_path / "p.ir.json"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "zero":
        p.symlink_to("/dev/zero")
    else:
        p.mkdir()
    name, message = _load_elsewhere(p)
    assert (name, message) == ("IRError", f"error: {p}: cannot read: {what}")


def test_a_file_larger_than_an_ir_file_may_be_is_refused_from_its_size(tmp_path):
    p = tmp_path / "big.ir.json"
    with open(p, "wb") as f:
        f.truncate(2**30)  # 1 GiB of NUL bytes in no blocks
    name, message = _load_elsewhere(p)
    assert name == "IRError"
    assert message == (f"error: {p}: cannot read: is 1073741824 bytes (1 GiB), more than an IR file may have "
                       "(256 MiB)")


def test_a_key_given_twice_is_refused_as_the_command_refuses_it(tmp_path):
    data = _ir(tmp_path)
    twice = data.replace(b'"version":', b'"version":2,"version":', 1)
    p = tmp_path / "p.ir.json"
    p.write_bytes(twice)
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.load(p)
    first = str(info.value).split("\n")[0]
    assert first.startswith(f"{p}:1:") and 'the key "version" is given twice in one object' in first
    r = subprocess.run([str(Path(sys.executable).parent / "serq"), "check", str(p)], capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stderr.rstrip("\n") == str(info.value)


def test_decode_refuses_a_key_given_twice_as_load_does(tmp_path):
    # serq_ir.decode(bytes) took the last value ("horizon": 5, ..., "horizon": 100 ran to 100); the check
    # is decode's, so every caller has it (decode(check=False), for IR serQ wrote itself, skips it)
    data = _ir(tmp_path)
    twice = data.replace(b'"run":{', b'"run":{"horizon":1000,', 1)
    assert twice != data
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(twice, name="mem.ir.json")
    assert str(info.value).startswith("mem.ir.json:1:") and 'the key "horizon" is given twice' in str(info.value)
    assert serq_ir.decode(twice, check=False).run.horizon == 5.0  # msgspec's last value, unchecked


def test_a_regular_file_and_a_link_to_one_load(tmp_path):
    p = tmp_path / "p.ir.json"
    p.write_bytes(_ir(tmp_path))
    (tmp_path / "link.ir.json").symlink_to(p)
    assert serq_ir.load(p) == serq_ir.load(str(tmp_path / "link.ir.json")) == serq_ir.decode(p.read_bytes())
    assert json.loads(p.read_bytes())["version"] == serq_ir.IR_VERSION


@pytest.mark.parametrize("second", [b"3", b"1", b'"2"'])
def test_a_version_given_twice_is_a_key_given_twice_whatever_the_last(tmp_path, second):
    # the version is read first, alone: a second "version" other than this serq-ir's was told as a version
    # not supported ("IR version 3"), where any other key given twice is refused as given twice
    data = _ir(tmp_path)
    twice = data.replace(b'"version":2', b'"version":2,"version":' + second, 1)
    assert twice != data
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(twice, name="v.ir.json")
    assert 'the key "version" is given twice in one object' in str(info.value)
