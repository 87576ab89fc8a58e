"""``serq`` as the process's own command ends at ``os._exit`` once its outputs are out, without the
interpreter's teardown, and with the status, the standard output and error it would have had.

The teardown took apart what the command had frozen (``serq.cli._leave_to_exit``) around native libraries
already gone: Arrow's ended ``serq plot`` of a refused Parquet table with SIGABRT (``terminate called
without an active exception``) about once in 20 runs under load, after its message (the parallel runs of
packages/serq-sweep/tests/test_exit_parquet.py). Here: a finalizer of an object a module holds, which the
teardown runs and an end without it does not, and what the end still owes (statuses, streams, logging)."""

from __future__ import annotations

import subprocess
import sys

import pytest

# the ``serq`` command as its script runs it (serq.cli.entry), with an object whose finalizer says when the
# interpreter's teardown frees it (a module's global: freed as the modules are taken apart)
PROBE = """import os, sys
import serq.cli as c
class Torn:
    def __del__(self):
        os.write(2, b"torn down\\n")
c.torn = Torn()
if os.environ.get("PROBE_LOG"):
    command = c._main
    def _main(argv):  # logging imported by the command (as Dask's is), its handler buffering
        import logging
        from logging.handlers import MemoryHandler
        target = logging.StreamHandler(sys.stderr)
        h = MemoryHandler(capacity=1000, flushLevel=logging.CRITICAL + 1, target=target)
        logging.getLogger("probe").addHandler(h)
        logging.getLogger("probe").warning("logged before the end")
        return command(argv)
    c._main = _main
if os.environ.get("PROBE_ATEXIT"):  # a program running the command has its own function at exit
    import atexit
    atexit.register(lambda: os.write(2, b"its own\\n"))
sys.argv = ["serq", *sys.argv[1:]]
c.entry()
"""

PROGRAM = """stage d : delay;
workload { arrive poisson(1); }
session { run d (1); }
run { horizon 20; }
"""


def _probe(tmp_path, *args, env=None):
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    (tmp_path / "d.sq").write_text(PROGRAM)
    return subprocess.run([sys.executable, str(probe), *args], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, env=env)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args, status", [
    (["run", "d.sq", "--no-progress"], 0),
    (["run", "nowhere.sq"], 1),
    (["run", "d.sq", "--horizon", "x"], 2),
])
def test_the_command_ends_without_the_teardown_with_its_status(tmp_path, args, status):
    p = _probe(tmp_path, *args)
    assert p.returncode == status, p.stderr
    assert "torn down" not in p.stderr, p.stderr
    if status == 0:
        assert p.stdout.startswith("run: horizon 20") and p.stdout.endswith("\n"), p.stdout
    else:
        assert p.stderr.startswith("error: "), p.stderr


@pytest.mark.timeout(60)
def test_logging_handlers_are_flushed_at_the_end(tmp_path):
    import os

    p = _probe(tmp_path, "check", "d.sq", env=dict(os.environ, PROBE_LOG="1"))
    assert p.returncode == 0, p.stderr
    assert "logged before the end" in p.stderr, p.stderr
    assert "torn down" not in p.stderr


@pytest.mark.timeout(60)
def test_a_large_output_to_a_pipe_is_whole(tmp_path):
    # the IR of a program of 3 000 statements: about 1 MB through a pipe, still buffered when the command returns
    body = "".join(f"  set x{i} = {i};\n" for i in range(3000))
    (tmp_path / "big.sq").write_text(PROGRAM.replace("session { run d (1); }",
                                                     "session {\n" + body + "  run d (1);\n}"))
    p = _probe(tmp_path, "ir", "big.sq")
    assert p.returncode == 0, p.stderr
    import json

    ir = json.loads(p.stdout)
    assert "x2999" in p.stdout and isinstance(ir, dict)


@pytest.mark.timeout(60)
def test_a_function_at_exit_registered_before_the_command_still_runs(tmp_path):
    import os

    # (then the process ends as Python ends it, teardown and all: that function may need it)
    p = _probe(tmp_path, "check", "d.sq", env=dict(os.environ, PROBE_ATEXIT="1"))
    assert p.returncode == 0, p.stderr
    assert "its own" in p.stderr, p.stderr


def test_main_called_in_a_program_leaves_the_process_alone(tmp_path):
    # not the process's own command (serq.cli.main from Python): the interpreter ends as it would
    script = ("import serq.cli as c, sys\n"
              "try:\n    c.main(['check', 'd.sq'])\nexcept SystemExit as e:\n    print('status', e.code)\n"
              "print('went on')\n")
    (tmp_path / "d.sq").write_text(PROGRAM)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.endswith("status 0\nwent on\n"), p.stdout
