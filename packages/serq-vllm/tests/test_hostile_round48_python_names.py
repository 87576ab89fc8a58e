"""``serq vllm real --python PATH`` names the interpreter in its messages as every message names a file
(serq.errors.shown_path): one of more than 240 characters cut around '…', a line break in it escaped.

Before, each message printed the name whole: a --python of 5 000 characters (the system's 'File name too
long') made a message of over 5 000 characters, and a folder with a line break in its name split the
message's one line in two."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import shown_path
from serq_vllm import real

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(os.name != "posix", reason="shell scripts as the interpreter")]

SERQ = str(Path(sys.executable).parent / "serq")
SCENARIO = {"budget": 48, "max_seqs": 8, "block_size": 8, "num_blocks": 14, "requests": [{"prompt": 9, "out": 4}]}


def _program(folder: Path, body: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "py"
    exe.write_text("#!/bin/sh\ncat > /dev/null\n" + body)
    exe.chmod(0o755)
    return str(exe)


def _long_folder(tmp_path: Path) -> Path:
    return tmp_path / ("a" * 200) / ("b" * 200)


def _error(python: str) -> str:
    with pytest.raises(real.BridgeError) as e:
        real.run_real_in(python, SCENARIO, timeout=30)
    return str(e.value)


def test_a_long_name_is_cut_in_each_message(tmp_path):
    for body, tail in [("exit 3\n", ": exit status 3"),
                       ("echo '{}'\n", ": no answer of the bridge in its output (a JSON object of first, done, "
                                       "preempted, cached, preemptions, steps, config, vllm): is it a Python "
                                       "interpreter? It wrote '{}'.")]:
        fake = _program(_long_folder(tmp_path), body)
        assert len(fake) > 400
        shown = shown_path(fake)
        assert len(shown) == 240 and "…" in shown and shown.endswith("/py")
        message = _error(fake)
        head = "error: " if body.startswith("exit") else "error: --python "
        assert message == head + shown + tail, message
        assert fake not in message


def test_a_name_too_long_to_open_is_one_short_message(tmp_path):
    name = "x" * 5000
    message = _error(name)
    assert message == f"error: --python {'x' * 120}…{'x' * 119}: File name too long", message[:300]


def test_a_line_break_in_the_name_is_escaped_on_the_command_line(tmp_path):
    fake = _program(tmp_path / "d\nir", "exit 3\n")
    (tmp_path / "s.json").write_text(json.dumps(SCENARIO))
    r = subprocess.run([SERQ, "vllm", "real", "s.json", "--python", fake], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stdout == ""
    escaped = fake.replace("\n", "\\n")  # the two characters backslash and n
    assert r.stderr == f"error: {escaped}: exit status 3\n", r.stderr
    assert r.stderr.count("\n") == 1
