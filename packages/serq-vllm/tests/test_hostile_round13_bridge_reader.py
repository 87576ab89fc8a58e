"""The bridge run on its own (``python real.py SCENARIO.json``, docs/vllm-oracle.md) reads its scenario file by
the rules serQ reads one by, each fault one line and status 1: a FIFO blocked it for ever, and a folder, a
missing file, an empty file, text that is not JSON or not UTF-8 were tracebacks; a key given twice was read
as its last value, silently."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from serq_vllm import real
from serq_vllm.real import _Unreadable, read_scenario_file

pytestmark = pytest.mark.timeout(60)

BRIDGE = real.__file__


@pytest.mark.parametrize("data, said", [
    (b"", "s.json:1:1: error: the file is empty (a scenario is a JSON object)"),
    (b" \n\t", "s.json:1:1: error: the file is empty (a scenario is a JSON object)"),
    (b'{"budget": 64,\n  "requests" []}', "s.json:2:14: error: not JSON: Expecting ':' delimiter"),
    (b'{"budget": 64, "budget": 1}', 's.json: error: the key "budget" is given twice in one object'),
    (b'{"requests": [\n {"prompt": "caf\xe9"}]}', "s.json:2:17: error: not UTF-8 text (byte 0xE9)"),
    (b"[" * 100_000 + b"]" * 100_000, "s.json: error: not a scenario: JSON nested too deeply"),
])
def test_a_file_that_is_no_scenario_is_one_line(tmp_path, monkeypatch, data, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_bytes(data)
    with pytest.raises(_Unreadable) as e:
        read_scenario_file("s.json")
    assert str(e.value) == said


def test_a_byte_order_mark_is_skipped(tmp_path):
    (tmp_path / "s.json").write_bytes(b'\xef\xbb\xbf{"requests": [1]}')
    assert read_scenario_file(str(tmp_path / "s.json")) == {"requests": [1]}


def test_what_is_no_file_is_one_line_and_a_fifo_is_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "folder.json").mkdir()
    for name, said in [("pipe.json", "error: pipe.json: cannot read: is a FIFO (a named pipe), not a file\n"),
                       ("folder.json", "error: folder.json: cannot read: Is a directory\n"),
                       ("none.json", "error: none.json: cannot read: No such file or directory\n")]:
        r = subprocess.run([sys.executable, BRIDGE, name], capture_output=True, text=True, cwd=tmp_path, timeout=30,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 1 and r.stdout == "" and r.stderr == said, r.stderr
