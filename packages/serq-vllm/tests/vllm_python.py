"""The interpreter that the tests marked ``vllm`` run the bridge in: the one ``SERQ_VLLM_PYTHON`` names when
it imports vLLM, else this one when it does; None, and why, when neither does (docs/vllm-oracle.md).

Each is asked to import vLLM and write a line saying so, in a session of its own, with its output in files
(not pipes), for at most :data:`PROBE_TIMEOUT` seconds. ``SERQ_VLLM_PYTHON`` naming what is no program
(a text file, a folder) ended the collection of the tests in a traceback (PermissionError), one that never
ended (a script that waits) kept it waiting for ever, and a script that exits 0 (``echo``) passed for an
interpreter with vLLM, so the tests ran against it and failed on its output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile

#: how long an interpreter has to import vLLM and answer (its import takes some 10-30 s on a CPU)
PROBE_TIMEOUT = 120.0
#: what a probed interpreter writes first on its standard output when it has imported vLLM
MARK = "serq-vllm-probe"
_PROBE = f"import sys, vllm; sys.stdout.write({MARK!r} + ' ' + str(getattr(vllm, '__version__', '?')))"
#: how much of a probed program's output is read, and how long a line of it is quoted
_READ = 4096
_QUOTED = 200


def _quoted(data: bytes, *, last: bool) -> str:
    lines = [x.strip() for x in data.decode("utf-8", "replace").splitlines() if x.strip()]
    if not lines:
        return ""
    line = lines[-1] if last else lines[0]
    return repr(line if len(line) <= _QUOTED else line[:_QUOTED] + "...")


def probe(python: str, *, timeout: float = PROBE_TIMEOUT) -> str | None:
    """None when ``python`` imports vLLM and says so within ``timeout`` seconds; else why not, one line."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen([python, "-c", _PROBE], stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True)
        except OSError as e:
            return f"cannot run it: {e.strerror or e}"
        try:
            try:
                status = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                return f"no answer after {timeout:g} s to `import vllm`; stopped it"
        finally:
            # it, and whatever it started and left running, are stopped
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
        out.seek(0)
        head = out.read(_READ)
        err.seek(0, os.SEEK_END)
        err.seek(max(0, err.tell() - _READ))
        tail = err.read()
    if status != 0:
        told = _quoted(tail, last=True)
        return f"`import vllm` failed (status {status})" + (f": {told}" if told else "")
    if not head.startswith(MARK.encode()):
        told = _quoted(head, last=False)
        return "it did not answer as a Python interpreter that imported vLLM" + (f"; it wrote {told}" if told
                                                                                 else "; it wrote nothing")
    return None


def vllm_python(*, timeout: float = PROBE_TIMEOUT) -> tuple[str | None, str]:
    """The interpreter to run the bridge in (``SERQ_VLLM_PYTHON``'s when it has vLLM, else this one's when it
    has), and, when there is none, why (the skip's reason)."""
    reasons = []
    env = os.environ.get("SERQ_VLLM_PYTHON")
    if env:
        why = probe(env, timeout=timeout)
        if why is None:
            return env, ""
        reasons.append(f"SERQ_VLLM_PYTHON={env}: {why}")
    if probe(sys.executable, timeout=timeout) is None:
        return sys.executable, ""
    reasons.insert(0, "vLLM is not installed in this interpreter")
    return None, "; ".join(reasons) + "; see docs/vllm-oracle.md"
