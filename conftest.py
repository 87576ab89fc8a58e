"""Settings of the whole test suite.

What serQ keeps between runs (serq-frontend's LALR tables and compile cache) goes to a folder made for
this test session and removed after it, never to the user's ``~/.cache``: ``SERQ_CACHE_DIR`` is set
before any test runs, so the commands the tests start in child processes use it too.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
from types import SimpleNamespace

import pytest

try:
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None

_KEY = "SERQ_CACHE_DIR"


# -- property tests: the same examples every run -------------------------------------------------------------
#
# A property test (hypothesis) draws its examples by a fixed derivation and keeps no database of failing
# examples: a test that passed cannot fail on the next run, or on CI, by drawing other examples (a random
# draw of vllm.sq under a budget of 12.5 made one fail once in a while), and no `.hypothesis` folder is
# written into the tree. A test's own settings keep what they say (the fuzzers' SERQ_FUZZ_SEED).
# SERQ_HYPOTHESIS_SEARCH=1 (a switch: serq.switches) draws fresh examples, to search further.
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - a part's tests installed without it
    pass
else:
    _hypothesis_settings.register_profile("serq", derandomize=True, database=None)
    _hypothesis_settings.register_profile("serq-search", database=None)
    from serq.switches import switch as _switch

    # (serq.switches' rule, as every SERQ_* switch: 'off', 'no', 'false', any case, are off; it read any value but
    # blank and '0' as on, so SERQ_HYPOTHESIS_SEARCH=off drew fresh examples)
    _hypothesis_settings.load_profile("serq-search" if _switch("SERQ_HYPOTHESIS_SEARCH", False) else "serq")


def pytest_configure(config):
    # a suite started as a background job of a shell without job control (`nohup python3 dev.py test &`) gets
    # SIGINT ignored, every process it starts takes it ignored too, and the tests of what Ctrl-C does to a
    # command (a SIGINT the child sends itself) would see none delivered: Python's own handler, as a terminal's
    # run of the suite has it (an ignored signal stays ignored through fork and exec; a handled one does not)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    folder = tempfile.mkdtemp(prefix="serq-test-cache-")
    config._serq_cache = (folder, os.environ.get(_KEY))
    os.environ[_KEY] = folder


def pytest_unconfigure(config):
    folder, before = getattr(config, "_serq_cache", (None, None))
    if folder is None:
        return
    if before is None:
        os.environ.pop(_KEY, None)
    else:
        os.environ[_KEY] = before
    shutil.rmtree(folder, ignore_errors=True)


# -- the test modules' rewritten bytecode, kept -------------------------------------------------------------
#
# pytest rewrites the asserts of every test module it imports (to say what each side was) and keeps the result
# in the module's __pycache__, but only where Python may write bytecode: under PYTHONDONTWRITEBYTECODE (as
# dev.py's set-up notes, an environment this suite runs in sets it) every collection rewrote all 1 300 modules
# again, about 20 s of CPU of the 28 s a process spends collecting, in each pytest-xdist worker. While the
# tests are collected, the rewritten modules (and the helpers beside them) are written as Python writes
# them (as dev.py compiles the parts' own modules); a module unchanged since is read back. The tests run
# with the interpreter's setting as it was, and the processes they start inherit PYTHONDONTWRITEBYTECODE as
# it was. A tree pytest may not write to is read as before.

@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    import sys

    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        yield
    finally:
        sys.dont_write_bytecode = before


# -- the cyclic collector of a test process ------------------------------------------------------------------
#
# As the serq command does for its own work (serq.cli: what start-up made frozen, the first threshold raised):
# what the collection of the tests made (the modules, their functions and classes, some 15 000 test items and
# their marks) lives as long as the process and is frozen (gc.freeze: no later collection walks it), and the
# first threshold is 10 000 allocations, not 700. A worker's full collections walked about a million objects
# each (0.3-0.5 s), and its young collections, between tests and in the tests' own code (a compile or a run
# raises the threshold while it works, serq.shared.collector_raised), ran every 700 allocations: in the
# frontend's tests run in one process, 27 s of the collector's time of 75 s of CPU, 9.5 s at 10 000. Cyclic
# garbage is still collected, at most about 10 000 objects later. A test of the collector's thresholds sets
# the ones it needs (test_compile_collector, test_run_collector).

#: the collector's first threshold in a test process
TEST_GC_THRESHOLD = 10_000


def pytest_collection_finish(session):
    import gc

    gc.collect()  # (the garbage of the collection freed first: frozen, it would stay)
    gc.freeze()
    first, *rest = gc.get_threshold()
    if 0 < first < TEST_GC_THRESHOLD:
        gc.set_threshold(TEST_GC_THRESHOLD, *rest)


# -- what a test changes in its process must be as it was when the test ends ---------------------------------
#
# The tests share their processes (a pytest-xdist worker runs hundreds). A CPU-time timer that one test left
# armed, with SIGPROF's default handler given back, killed its worker seconds of CPU later, in an unrelated
# test and with no message ("node down: Not properly terminated"). So after each test its process's interval
# timers, resource limits and signal handlers are compared with what they were before it: a test that left
# one changed fails (an error at its teardown, naming what it left), and what it left is put back (the timers
# disarmed first), so that no later test pays for it.

_TIMERS = {getattr(signal, n): n for n in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF")
           if hasattr(signal, n)}
_LIMITS = {getattr(resource, n): n for n in sorted(dir(resource), reverse=True) if n.startswith("RLIMIT_")} \
    if resource else {}
_SIGNALS = {s: s.name for s in signal.Signals if s.name not in ("SIGKILL", "SIGSTOP")}


def _process_state() -> dict:
    state = {("timer", t): signal.getitimer(t) for t in _TIMERS}
    state.update({("limit", r): resource.getrlimit(r) for r in _LIMITS})
    if threading.current_thread() is threading.main_thread():  # (a handler is set from the main thread only)
        state.update({("handler", s): signal.getsignal(s) for s in _SIGNALS})
    return state


def _put_back(kind: str, what: int, value) -> None:
    if kind == "timer":
        signal.setitimer(what, *value)
    elif kind == "limit":
        resource.setrlimit(what, value)
    elif value is not None:  # (None: a handler that was not set from Python, which Python cannot set again)
        signal.signal(what, value)


@pytest.fixture(autouse=True)
def _leaves_its_process_as_it_found_it():
    before = _process_state()
    yield
    after = _process_state()
    # timers first: a handler given back while its timer is still armed may end the process
    changed = sorted((k for k in before if after.get(k) != before[k]), key=lambda k: k[0] != "timer")
    if not changed:
        return
    for kind, what in changed:
        try:
            _put_back(kind, what, before[kind, what])
        except (OSError, ValueError, TypeError):  # pragma: no cover - e.g. a hard limit lowered for good
            pass
    names = {"timer": _TIMERS, "limit": _LIMITS, "handler": _SIGNALS}
    left = "; ".join(f"{names[kind][what]} {before[kind, what]!r} -> {after[kind, what]!r}"
                     for kind, what in changed)
    pytest.fail(f"the test left its process changed (now put back): {left}", pytrace=False)


# -- the peak memory of a command a test starts ----------------------------------------------------------------
#
# os.wait4's ru_maxrss of a child counts the memory of the process it was forked from: Linux keeps, at the
# child's exec, the high-water mark of the address space it leaves, which is the parent's copy (or, under
# vfork, the parent's own). A test worker that had grown to 300 MB saw every command it started at 300 MB
# or more, and a bound on a command's memory failed for the tests that ran before it. So the command runs as
# the child of a small launcher (a fresh interpreter, ~10 MB), which reports the command's own peak.

#: the launcher: runs ``args`` as its child (killed after ``timeout`` seconds when above 0), writes the
#: child's peak resident bytes to ``out`` and exits with its status (128 + the signal that ended it)
_LAUNCH = (
    "import os, subprocess, sys, threading\n"
    "out, timeout, args = sys.argv[1], float(sys.argv[2]), sys.argv[3:]\n"
    "p = subprocess.Popen(args)\n"
    "timer = threading.Timer(timeout, p.kill) if timeout > 0 else None\n"
    "if timer is not None:\n"
    "    timer.start()\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "if timer is not None:\n"
    "    timer.cancel()\n"
    "with open(out, 'w') as f:\n"
    "    f.write(str(usage.ru_maxrss * 1024))\n"
    "code = os.waitstatus_to_exitcode(status)\n"
    "sys.exit(code if code >= 0 else 128 - code)\n"
)


@pytest.fixture
def peak_memory(tmp_path_factory):
    """``run(args, timeout=None, **popen) -> (returncode, peak resident bytes)``: the command ``args`` run
    (``popen``: cwd, stdin, stdout, stderr, as ``subprocess.Popen`` takes them) under a small launcher that
    reports its own peak (``ru_maxrss``), not the test process's; killed after ``timeout`` seconds, if given
    (returncode 137 then)."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("peak")
    counter = [0]

    def run(args, timeout=None, **popen):
        counter[0] += 1
        out = folder / f"peak{counter[0]}"
        p = subprocess.Popen([sys.executable, "-c", _LAUNCH, str(out), str(timeout or 0), *map(str, args)], **popen)
        p.wait()
        return p.returncode, int(out.read_text())

    return run


@pytest.fixture
def serq_in_process(capsys):
    """``serq ARGS…`` in this process (serq.cli.main, as a shell runs it): its exit status and output, as
    ``subprocess.run(…, capture_output=True, text=True)`` gives them, without the start-up of a new
    interpreter (for a test of what a command reports, not of the process that runs it)."""
    from serq.cli import main

    def call(*args: str) -> SimpleNamespace:
        capsys.readouterr()  # (what the test printed before is not the command's)
        with pytest.raises(SystemExit) as info:
            main(list(args))
        out = capsys.readouterr()
        return SimpleNamespace(returncode=info.value.code or 0, stdout=out.out, stderr=out.err)

    return call


# -- what several workers' tests read, made once for the whole run ------------------------------------------
#
# A module's fixture runs in each pytest-xdist worker that gets one of its tests (the suite's tests are spread
# over the workers test by test), so a fixture that runs a sweep ran it once a worker. ``once_per_run`` makes
# a folder's contents once for the test run: the first worker to need it builds it (under a lock) in the
# parent its workers' temporary folders share, the others wait for it and read it. A build that fails leaves
# nothing behind, so the next worker that needs it builds it again (and fails as the first did).

@pytest.fixture(scope="session")
def once_per_run(tmp_path_factory):
    """``make(name, build) -> folder``: the folder ``name`` after ``build(folder)`` filled it, once for the
    whole test run (every worker that asks gets the same folder, built by the first that asked)."""
    from pathlib import Path

    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: each worker builds its own
        fcntl = None

    def make(name: str, build) -> Path:
        shared = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER") and fcntl is not None:
            shared = shared.parent
        folder, done = shared / f"once-{name}", shared / f"once-{name}.done"
        with open(shared / f"once-{name}.lock", "w") as lock:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                try:
                    build(folder)
                except BaseException:
                    shutil.rmtree(folder, ignore_errors=True)
                    raise
                done.write_text("")
        return folder

    return make
