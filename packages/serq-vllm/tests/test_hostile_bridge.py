"""`serq vllm real --python PATH` with a program that is not a Python interpreter (or one that writes
something else than the bridge's answer): its output was handed to json.loads as it was, and anything
but JSON ended in a JSONDecodeError traceback, and a program that echoed the scenario (`cat`) had the
question printed as the answer. Anything but the answer's JSON object is one message naming --python,
status 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
SCENARIO = {"budget": 48, "max_seqs": 8, "block_size": 8, "num_blocks": 14, "requests": [{"prompt": 9, "out": 4}]}


def _program(tmp_path: Path, body: str) -> str:
    exe = tmp_path / "fake"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(0o755)
    return str(exe)


@pytest.mark.skipif(os.name != "posix", reason="a shell script as the interpreter")
@pytest.mark.parametrize("body, wrote", [
    ("cat\n", f"It wrote {json.dumps(SCENARIO)[:80]!r}."),  # echoes the scenario: JSON, but the question
    ("echo '[1, 2]'\n", "It wrote '[1, 2]'."),
    ("echo 'Python 2.7: not this one'\n", "It wrote 'Python 2.7: not this one'."),
    ("echo '{\"unclosed\": '\n", "It wrote '{\"unclosed\":'."),
    ("exit 0\n", "It wrote nothing."),
])
def test_a_python_that_answers_no_json_object_is_one_message(tmp_path, body, wrote):
    (tmp_path / "s.json").write_text(json.dumps(SCENARIO))
    fake = _program(tmp_path, body)
    r = subprocess.run([SERQ, "vllm", "real", "s.json", "--python", fake], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr == (f"error: --python {fake}: no answer of the bridge in its output (a JSON object of first, "
                        f"done, preempted, cached, preemptions, steps, config, vllm): is it a Python interpreter? "
                        f"{wrote}\n"), r.stderr
    assert len(r.stderr.splitlines()) == 1 and r.stdout == ""
