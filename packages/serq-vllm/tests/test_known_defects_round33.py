"""Known defects, round 33, in serq-vllm.

3. ``serq vllm real`` without ``--python`` ran the bridge in serQ's own process with no time limit (and
   ``--timeout`` was refused there): a vLLM that never answered kept the command waiting for ever. It runs
   in serQ's own interpreter as a process of its own, with the same ``--timeout`` (default 600 s) and
   message as ``--python``'s.
4. SIGTERM to scripts/fuzz_real.py ended it at once and left its worker (the vLLM interpreter, in a session
   of its own) running, and Ctrl-C while the worker started (vLLM's import) did too. The script handles
   both as a serq command does (serq.signals: SIGTERM raises as Ctrl-C does, a run of serQ stops on it), the
   worker is stopped on every way out of its start, and the script ends "terminated", 143 ("interrupted", 130).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="shell scripts as the interpreter, signals")

SERQ = str(Path(sys.executable).parent / "serq")
LATE = "no answer after 1 s; stopped it (give it longer with --timeout SECONDS, or inf)\n"


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped yet counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _gone(pid: int, within: float = 10.0) -> bool:
    end = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def _pid(file: Path) -> int:
    for _ in range(400):
        text = file.read_text() if file.exists() else ""
        if text.endswith("\n"):
            return int(text)
        time.sleep(0.05)
    raise AssertionError(f"{file} was not written")


def _end(file: Path, command: bytes) -> None:
    """Kill the process whose pid ``file`` holds if it still runs ``command`` (a failing test leaves nothing
    running), and only that one."""
    if not file.exists() or not file.read_text().endswith("\n"):
        return
    pid = int(file.read_text())
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if command not in f.read():
                return
        os.kill(pid, signal.SIGKILL)
    except (FileNotFoundError, ProcessLookupError):
        pass


def _sleeping_vllm(tmp_path: Path) -> Path:
    """An installed vLLM whose import writes its pid to ``pid`` and sleeps."""
    site = tmp_path / "site"
    (site / "vllm-9.9.dist-info").mkdir(parents=True)
    (site / "vllm-9.9.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 9.9\n")
    (site / "vllm").mkdir()
    (site / "vllm" / "__init__.py").write_text(
        "import os, time\n"
        f"with open({str(tmp_path / 'pid')!r}, 'w') as f:\n"
        "    f.write(f'{os.getpid()}\\n')\n"
        "time.sleep(1000)\n")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    return site


def test_a_vllm_that_never_answers_in_serqs_interpreter_is_stopped_at_the_timeout(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(_sleeping_vllm(tmp_path)))
    try:
        r = subprocess.run([SERQ, "vllm", "real", "vllm/preempt", "--timeout", "1"], capture_output=True,
                           text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
        assert (r.returncode, r.stdout) == (1, ""), r.stderr
        assert r.stderr.startswith("error: the bridge in serQ's interpreter (") and r.stderr.endswith(LATE), r.stderr
        assert len(r.stderr.splitlines()) == 1, r.stderr
        assert _gone(_pid(tmp_path / "pid"))
    finally:
        _end(tmp_path / "pid", b"python")


DRIVER = """import sys

from serq_vllm import real

real.vllm_version = lambda: "9.9"  # (the fake interpreter stands in for one that has vLLM)
sys.executable = sys.argv[1]
sys.argv = ["serq", "vllm", "real", "vllm/preempt", *sys.argv[2:]]
from serq.cli import main

main()
"""


def test_serqs_own_interpreter_that_sleeps_has_the_timeout(tmp_path):
    fake = tmp_path / "fake"
    fake.write_text("#!/bin/sh\nsleep 1000 &\necho $! > pid\nwait\n")
    fake.chmod(0o755)
    p = subprocess.Popen([sys.executable, "-c", DRIVER, str(fake), "--timeout", "1"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        sleeper = _pid(tmp_path / "pid")
        out, err = p.communicate(timeout=60)
        assert (p.returncode, out) == (1, "") and err == f"error: the bridge in serQ's interpreter ({fake}): {LATE}"
        assert _gone(sleeper)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        _end(tmp_path / "pid", b"sleep")


SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "fuzz_real.py"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("ready", [False, True], ids=["starting", "running"])
def test_a_signal_to_fuzz_real_stops_its_worker(tmp_path, sig, ready):
    fake = tmp_path / "fake"
    fake.write_text("#!/bin/sh\n" + ("echo '{\"ready\": \"0.0\"}'\n" if ready else "")
                    + "sleep 1000 &\necho $! > pid\nwait\n")
    fake.chmod(0o755)
    p = subprocess.Popen([sys.executable, str(SCRIPT), "--python", str(fake), "-n", "1", "--size", "tiny", "-q"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        sleeper = _pid(tmp_path / "pid")  # the worker runs (and has started what it started)
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        said = "terminated" if sig == signal.SIGTERM else "interrupted"
        assert (p.returncode, err) == (128 + sig, f"{said}\n"), err
        assert _gone(sleeper)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        _end(tmp_path / "pid", b"sleep")
