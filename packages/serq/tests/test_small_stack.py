"""A program may nest 1 000 deep, and parsing, linking, formatting and running it recurse through C frames in
CPython (about 300 bytes a level and more): under a soft stack limit of 256 KB (``ulimit -S -s 256``) a program
of 990 nested branches ended ``serq ast``, ``serq ir`` and ``serq run`` in a segmentation fault (status -11, no
message). The ``serq`` command raises its soft stack limit to 8 MB, or its hard limit when that is lower
(``serq.shared.stack_room``), before it does anything else."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="the stack grows on demand as Linux grows it")


def _small_stack():
    resource.setrlimit(resource.RLIMIT_STACK, (256 * 1024, resource.getrlimit(resource.RLIMIT_STACK)[1]))


def _program(tmp_path: Path, n: int = 990) -> Path:
    p = tmp_path / "deep.sq"
    p.write_text("workload { arrive poisson(1); }\n"
                 "session { " + "branch (1) { " * n + "observe x = 1;" + "}" * n + " }\n"
                 "run { horizon 1; }\n")
    return p


def _serq(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=120, preexec_fn=_small_stack)


def test_a_deep_program_under_a_small_stack_is_read_and_told(tmp_path):
    hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
    if hard != resource.RLIM_INFINITY and hard < 8 * 2**20:
        pytest.skip("a hard stack limit below 8 MB: the command cannot raise its own")
    p = _program(tmp_path)
    r = _serq("ast", str(p))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\"node\": \"SBranch\"") == 990
    for cmd in ("run", "ir", "check"):
        r = _serq(cmd, str(p), *(("--no-progress",) if cmd == "run" else ()))
        assert r.returncode == 1, (cmd, r.returncode, r.stderr)  # the branches' own limit, told
        assert "nest more than 32 deep" in r.stderr and "Traceback" not in r.stderr
    # the closing braces are not spaced as fmt spaces them: said, then written so (the lines kept), which is
    # its form (a second fmt --check passes)
    r = _serq("fmt", "--check", str(p))
    assert (r.returncode, r.stdout, r.stderr) == (1, f"would reformat {p}\n", "")
    r = _serq("fmt", str(p))
    assert (r.returncode, r.stdout, r.stderr) == (0, f"reformatted {p}\n", "")
    assert p.read_text() == ("workload { arrive poisson(1); }\nsession { " + "branch (1) { " * 990 + "observe x = 1; "
                             + "} " * 990 + "}\nrun { horizon 1; }\n")
    r = _serq("fmt", "--check", str(p))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_the_limit_is_raised_only_when_below(monkeypatch):
    from serq import shared

    calls = []
    monkeypatch.setattr(resource, "setrlimit", lambda rl, v: calls.append(v))
    for soft, hard, want in ((256 * 1024, resource.RLIM_INFINITY, (8 * 2**20, resource.RLIM_INFINITY)),
                             (256 * 1024, 4 * 2**20, (4 * 2**20, 4 * 2**20)),
                             (256 * 1024, 256 * 1024, None),
                             (8 * 2**20, resource.RLIM_INFINITY, None),
                             (resource.RLIM_INFINITY, resource.RLIM_INFINITY, None),
                             (64 * 2**20, resource.RLIM_INFINITY, None)):
        calls.clear()
        monkeypatch.setattr(resource, "getrlimit", lambda rl, s=soft, h=hard: (s, h))
        shared.stack_room()
        assert calls == ([want] if want else []), (soft, hard)
