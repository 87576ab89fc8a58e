"""``serq vllm real --python PATH`` (``serq_vllm.real.run_real_in``) with a program that does not behave as
the bridge does: it never keeps serq waiting past its time limit, never fills serq's memory, never ends in
a traceback, and is killed, with whatever it started, when serq stops.

Before: the program ran under ``subprocess.run(..., capture_output=True, text=True)`` with no time limit.
One that never answered (a script that sleeps) kept the command waiting for ever; one that wrote without
end (``yes``) was read into memory until it ran out; output or error output that was not UTF-8 ended in a
``UnicodeDecodeError`` traceback; a program that answered but left a child holding its output open (``sleep
1000 &``) kept the command waiting for that child; Ctrl-C or SIGTERM to serq left a script's children
running; a program killed by a signal was reported as "exit status -9". Now the bridge has ``--timeout
SECONDS`` (default 600, ``inf`` for none), runs in a session of its own, and its output is read to at most
``serq.files.MAX_JSON`` bytes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from serq_vllm import real

pytestmark = pytest.mark.skipif(os.name != "posix", reason="shell scripts as the interpreter, signals")

SERQ = str(Path(sys.executable).parent / "serq")
SCENARIO = {"budget": 48, "max_seqs": 8, "block_size": 8, "num_blocks": 14, "requests": [{"prompt": 9, "out": 4}]}
ANSWER = {"first": [2], "done": [5], "preempted": [0], "cached": [0], "preemptions": 0, "steps": 6,
          "config": {}, "vllm": "fake"}


def _program(tmp_path: Path, body: str, name: str = "fake") -> str:
    exe = tmp_path / name
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(0o755)
    return str(exe)


def _limited() -> None:  # pragma: no cover - in the child, before serq starts
    """At most 2 GiB of address space for serq: one that read a program writing without end into memory
    fails here, not the machine."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def _serq(tmp_path: Path, *args: str, timeout: float = 30) -> tuple[subprocess.CompletedProcess, float]:
    (tmp_path / "s.json").write_text(json.dumps(SCENARIO))
    t = time.monotonic()
    r = subprocess.run([SERQ, "vllm", "real", "s.json", *args], capture_output=True, cwd=tmp_path, timeout=timeout,
                       stdin=subprocess.DEVNULL, preexec_fn=_limited)
    return r, time.monotonic() - t


def _one_error(r: subprocess.CompletedProcess) -> str:
    err = r.stderr.decode("utf-8", errors="replace")
    assert r.returncode == 1 and "Traceback" not in err and r.stdout == b"", err
    assert len(err.splitlines()) == 1, err
    return err.rstrip("\n")


def _gone(pid: int, within: float = 5.0) -> bool:
    """The process ``pid`` has ended (a zombie nobody reaped yet counts as ended) within ``within`` seconds."""
    end = time.monotonic() + within
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            alive = state != "Z"
        except FileNotFoundError:
            alive = False
        except OSError:  # pragma: no cover - no /proc
            try:
                os.kill(pid, 0)
                alive = True
            except ProcessLookupError:
                alive = False
        if not alive:
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.05)


def _end(pid: int) -> None:
    """Kill the ``sleep 1000`` a fake interpreter started if it is still there, whatever the test found (a
    failing test leaves nothing running), and only that process."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if f.read().split(b"\0")[:2] != [b"sleep", b"1000"]:
                return
        os.kill(pid, signal.SIGKILL)
    except (FileNotFoundError, ProcessLookupError):
        pass


def _pid(tmp_path: Path) -> int:
    for _ in range(200):
        text = (tmp_path / "pid").read_text() if (tmp_path / "pid").exists() else ""
        if text.endswith("\n"):
            return int(text)
        time.sleep(0.05)
    raise AssertionError("the fake interpreter did not start its child")


def test_a_python_that_never_answers_is_stopped_at_the_timeout_with_what_it_started(tmp_path):
    fake = _program(tmp_path, "sleep 1000 &\necho $! > pid\nwait\n")
    try:
        r, took = _serq(tmp_path, "--python", fake, "--timeout", "1.5")
        assert _one_error(r) == (f"error: --python {fake}: no answer after 1.5 s; stopped it (give it longer with "
                                 "--timeout SECONDS, or inf)")
        assert took < 20
        assert _gone(_pid(tmp_path))
    finally:
        if (tmp_path / "pid").exists():
            _end(_pid(tmp_path))


def test_the_python_api_takes_the_time_limit_too(tmp_path):
    fake = _program(tmp_path, "exec sleep 1000\n")
    t = time.monotonic()
    with pytest.raises(real.BridgeError) as info:
        real.run_real_in(fake, SCENARIO, timeout=0.5)
    assert time.monotonic() - t < 20
    assert str(info.value).startswith(f"error: --python {fake}: no answer after 0.5 s; stopped it")
    assert real.TIMEOUT == 600
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        real.run_real_in(fake, SCENARIO, timeout=0)


def test_a_python_that_writes_without_end_is_stopped(tmp_path):
    r, took = _serq(tmp_path, "--python", _program(tmp_path, "exec yes\n"), timeout=120)
    assert _one_error(r).endswith(": wrote more than 256 MiB without the bridge's answer; stopped it")
    assert took < 60


@pytest.mark.parametrize("body, wrote", [
    ("printf '\\377\\376{\\n'\n", "It wrote '\ufffd\ufffd{'."),          # not UTF-8: replaced
    ("printf '%s\\n' '{\"first\": [1]}'\n", "It wrote '{\"first\": [1]}'."),  # JSON, but not the answer's keys
])
def test_output_that_is_not_the_answer_is_one_message(tmp_path, body, wrote):
    fake = _program(tmp_path, body)
    r, _ = _serq(tmp_path, "--python", fake)
    assert _one_error(r) == (f"error: --python {fake}: no answer of the bridge in its output (a JSON object of "
                             "first, done, preempted, cached, preemptions, steps, config, vllm): is it a Python "
                             f"interpreter? {wrote}")


def test_error_output_that_is_not_utf8_and_an_exit_by_a_signal_are_one_message(tmp_path):
    fake = _program(tmp_path, "printf 'bad \\377 byte\\n' >&2\nexit 3\n")
    r, _ = _serq(tmp_path, "--python", fake)
    assert _one_error(r) == f"error: {fake}: bad \ufffd byte"
    fake = _program(tmp_path, "kill -9 $$\n", "killed")
    r, _ = _serq(tmp_path, "--python", fake)
    assert _one_error(r) == f"error: {fake}: stopped by signal 9"


def test_an_answer_is_taken_though_a_child_of_the_python_holds_its_output(tmp_path):
    fake = _program(tmp_path, f"cat > /dev/null\nsleep 1000 &\necho $! > pid\necho '{json.dumps(ANSWER)}'\n")
    try:
        r, took = _serq(tmp_path, "--python", fake)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == ANSWER and took < 20
        assert _gone(_pid(tmp_path))
    finally:
        if (tmp_path / "pid").exists():
            _end(_pid(tmp_path))


@pytest.mark.parametrize("sig, status, line", [(signal.SIGINT, 130, "interrupted"),
                                               (signal.SIGTERM, 143, "terminated")])
def test_a_signal_to_serq_stops_the_python_and_what_it_started(tmp_path, sig, status, line):
    fake = _program(tmp_path, "sleep 1000 &\necho $! > pid\nwait\n")
    (tmp_path / "s.json").write_text(json.dumps(SCENARIO))
    p = subprocess.Popen([SERQ, "vllm", "real", "s.json", "--python", fake], cwd=tmp_path, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child = None
    try:
        child = _pid(tmp_path)
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
        assert p.returncode == status and err.decode().strip() == line and out == b"", err
        assert _gone(child)
    finally:
        if p.poll() is None:  # pragma: no cover - the failure this test is about
            p.kill()
            p.wait()
        if child is not None:
            _end(child)


@pytest.mark.parametrize("args, message", [
    (["--timeout", "0"], "0 is not a positive number of seconds, or inf"),
    (["--timeout", "nan"], "nan is not a positive number of seconds, or inf"),
])
def test_a_bad_timeout_is_a_usage_error(tmp_path, args, message):
    r, _ = _serq(tmp_path, *args)
    assert r.returncode == 2 and message in r.stderr.decode(), r.stderr


def test_inf_is_no_time_limit(tmp_path):
    fake = _program(tmp_path, f"cat > /dev/null\necho '{json.dumps(ANSWER)}'\n")
    r, _ = _serq(tmp_path, "--python", fake, "--timeout", "inf")
    assert r.returncode == 0 and json.loads(r.stdout) == ANSWER, r.stderr
