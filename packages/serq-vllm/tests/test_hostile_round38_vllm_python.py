"""SERQ_VLLM_PYTHON, which names the interpreter the tests marked ``vllm`` run the bridge in, pointing at
what is no Python with vLLM (vllm_python.py): the tests are skipped with one reason naming it and why, never
a traceback at collection, a wait without end, or a program taken for vLLM's interpreter because it exited 0."""

from __future__ import annotations

import os
import sys
import time

import pytest
from vllm_python import MARK, probe, vllm_python

pytestmark = pytest.mark.skipif(os.name != "posix", reason="shell scripts stand in for interpreters")


def script(tmp_path, name: str, body: str, *, mode: int = 0o755) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(mode)
    return str(path)


def test_a_file_that_is_no_program_is_told_not_raised(tmp_path):
    text = script(tmp_path, "passwd", "root:x:0:0", mode=0o644)
    assert probe(text) == "cannot run it: Permission denied"
    assert probe(str(tmp_path)) == "cannot run it: Permission denied"
    assert probe(str(tmp_path / "none")) == "cannot run it: No such file or directory"


def test_a_program_that_exits_0_without_answering_is_not_vllms_interpreter(tmp_path):
    # it was taken for one (only its status was asked), and the tests ran the bridge through it
    assert probe(script(tmp_path, "garbage", "echo garbage; echo more")) == (
        "it did not answer as a Python interpreter that imported vLLM; it wrote 'garbage'")
    assert probe(script(tmp_path, "quiet", "true")) == (
        "it did not answer as a Python interpreter that imported vLLM; it wrote nothing")


def test_a_python_without_vllm_is_told_its_last_error_line(tmp_path):
    fake = script(tmp_path, "py", "echo 'Traceback (most recent call last):' >&2\n"
                                  "echo \"ModuleNotFoundError: No module named 'vllm'\" >&2\nexit 1")
    assert probe(fake) == "`import vllm` failed (status 1): \"ModuleNotFoundError: No module named 'vllm'\""


def test_one_that_answers_is_taken(tmp_path):
    assert probe(script(tmp_path, "py", f"printf '{MARK} 0.33.0'")) is None


def test_one_that_never_answers_is_stopped_with_what_it_started(tmp_path):
    # a wait without end kept the collection of test_real.py waiting for ever; the shell's child, which holds
    # no pipe of ours, is stopped with it
    pid_file = tmp_path / "pid"
    hang = script(tmp_path, "hang", f"sleep 1000 &\necho $! > {pid_file}\nwait")
    assert probe(hang, timeout=0.5) == "no answer after 0.5 s to `import vllm`; stopped it"
    child = int(pid_file.read_text())
    for _ in range(1000):  # killed, it is gone or a zombie soon after (its reaping is its new parent's)
        if not gone(child):
            time.sleep(0.01)
    assert gone(child)


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except OSError:  # no /proc: whether it can be signalled
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def test_output_without_end_is_read_only_at_its_head(tmp_path):
    big = script(tmp_path, "big", "head -c 100000000 /dev/zero | tr '\\0' x; echo")
    why = probe(big)
    assert why.startswith("it did not answer as a Python interpreter that imported vLLM; it wrote 'xxx")
    assert why.endswith("xxx...'") and len(why) < 300


def test_the_skip_reason_names_serq_vllm_python(tmp_path, monkeypatch):
    if probe(sys.executable) is None:
        pytest.skip("vLLM is installed in this interpreter, which the tests then take")
    bad = script(tmp_path, "garbage", "echo garbage")
    monkeypatch.setenv("SERQ_VLLM_PYTHON", bad)
    assert vllm_python() == (None, f"vLLM is not installed in this interpreter; SERQ_VLLM_PYTHON={bad}: it did "
                                   "not answer as a Python interpreter that imported vLLM; it wrote 'garbage'; "
                                   "see docs/vllm-oracle.md")
    monkeypatch.setenv("SERQ_VLLM_PYTHON", script(tmp_path, "py", f"printf '{MARK} 0.33.0'"))
    assert vllm_python()[0] == str(tmp_path / "py")
