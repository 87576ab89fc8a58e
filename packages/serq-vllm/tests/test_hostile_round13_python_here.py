"""``serq vllm real --python NAME`` with a name without a folder: the file of that name in the current folder
when there is one (the option names a path), else a command of that name on PATH. The file was looked for
on PATH alone: ``--python venv-python`` beside it said ``No such file or directory`` of a file that was
there, and a FIFO of that name the same."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from serq_vllm.real import BridgeError, run_real_in

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
SCENARIO = {"budget": 64, "max_seqs": 8, "block_size": 16, "num_blocks": 40, "requests": [{"prompt": 9, "out": 2}]}


def _program(folder: Path, name: str) -> None:
    p = folder / name
    p.write_text("#!/bin/sh\ncat >/dev/null\necho not-the-answer\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)


def test_a_program_here_named_without_a_folder_is_run(tmp_path, monkeypatch):
    _program(tmp_path, "venv-python")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BridgeError) as e:  # it ran: what it wrote is no answer
        run_real_in("venv-python", SCENARIO, timeout=30)
    assert str(e.value).startswith("error: --python venv-python: no answer of the bridge in its output"), str(e.value)
    assert "It wrote 'not-the-answer'." in str(e.value)


def test_a_fifo_here_is_that_path_and_is_no_program(tmp_path, monkeypatch):
    os.mkfifo(tmp_path / "pipe")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BridgeError) as e:
        run_real_in("pipe", SCENARIO, timeout=30)
    assert str(e.value) == "error: --python pipe: Permission denied"  # exec of what is no program: EACCES


def test_a_name_neither_here_nor_on_path_says_so(tmp_path):
    (tmp_path / "s.json").write_text('{"budget": 64, "max_seqs": 8, "block_size": 16, "num_blocks": 40, '
                                     '"requests": [{"prompt": 9, "out": 2}]}')
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    r = subprocess.run([SERQ, "vllm", "real", "s.json", "--python", "nonesuch"], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr == "error: --python nonesuch: no such file here, nor a command of that name on PATH\n"
