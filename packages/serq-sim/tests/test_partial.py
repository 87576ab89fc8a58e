"""A run stopped early (``max_events``, ``max_wall``, Ctrl-C, SIGTERM) ends with its partial report, marked
as such, in the Python API and at ``serq run`` (exit status 3 for a bound, 130 for SIGINT, 143 for
SIGTERM); the same bound stops both tiers at the same event."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json

SERQ = str(Path(sys.executable).parent / "serq")

# an M/M/1 queue: two events per customer (an arrival, a completion); fast tier
MM1 = """stage s : fifo;
workload { arrive poisson(0.5); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 1e12; seed 4; }
"""
# the same behind a pool of blocks (the fast tier takes cap-only pools): the general engine
MM1_POOL = """pool slots { cap 1; block 1; }
stage s : fifo;
workload { arrive poisson(0.5); }
session { hold slots (1) { set t0 = now; run s (~exp(1)); observe response = now - t0; } }
run { horizon 1e12; seed 4; }
"""


def _compile(src: str):
    return serq_frontend.compile(source=src)


@pytest.mark.parametrize("src, tier", [(MM1, "fast"), (MM1_POOL, "general"),
                                       (MM1_POOL.replace(" block 1;", ""), "fast")])
def test_max_events_stops_at_exactly_n_events_with_a_partial_report(src, tier):
    r = serq_sim.run(_compile(src), max_events=4321)
    assert r.tier == tier
    assert r.result.events == 4321
    assert r.partial == "max-events" and r.interrupted and r.result.partial == "max-events"
    assert r.exit_status == 3
    assert any("stopped after 4321 events (--max-events 4321)" in n for n in r.result.notes), r.result.notes
    assert 0 < r.result.end < 1e12
    # the figures are those of the first 4321 events: the full run's samples start with them
    full = serq_sim.run(_compile(src), max_events=10_000)
    n = len(r.observe("response"))
    assert n > 1000
    assert list(full.observe("response").values[:n]) == list(r.observe("response").values)


@pytest.mark.parametrize("src", [MM1, MM1_POOL.replace(" block 1;", "")], ids=["stage", "cap-only pool"])
def test_a_bound_stops_both_tiers_at_the_same_event(src, monkeypatch):
    program = _compile(src)
    fast = serq_sim.run(program, max_events=777)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    general = serq_sim.run(program, max_events=777)
    assert (fast.tier, general.tier) == ("fast", "general")
    assert encode_json(fast) == encode_json(general)


def test_a_run_that_ends_before_the_bound_is_not_partial():
    r = serq_sim.run(_compile(MM1.replace("horizon 1e12", "horizon 100")), max_events=10**9, max_wall=1e6)
    assert r.partial is None and not r.interrupted and r.exit_status == 0
    assert r.result.end == 100


@pytest.mark.parametrize("src", [MM1, MM1_POOL])
def test_max_wall_stops_a_run_that_would_not_end(src):
    t0 = time.monotonic()
    r = serq_sim.run(_compile(src), max_wall=0.3)
    took = time.monotonic() - t0
    assert r.partial == "max-wall" and r.exit_status == 3
    assert 0.3 <= took < 10
    assert r.result.events > 0 and r.result.end < 1e12
    assert any("--max-wall 0.3" in n for n in r.result.notes)


# serq_sim.run's one rule for its arguments (docs/language.md): a value of the right type not allowed is a
# ValueError, the wrong type (a float or bool count, a str) a TypeError, each naming the argument
@pytest.mark.parametrize(("bad", "error"), [(0, ValueError), (-1, ValueError), (1.5, TypeError),
                                            (True, TypeError), ("10", TypeError)])
def test_max_events_must_be_a_positive_integer(bad, error):
    with pytest.raises(error, match="max_events"):
        serq_sim.run(_compile(MM1), max_events=bad)


@pytest.mark.parametrize(("bad", "error"), [(0, ValueError), (-1.0, ValueError), (math.nan, ValueError),
                                            (math.inf, ValueError), ("1", TypeError)])
def test_max_wall_must_be_positive(bad, error):
    with pytest.raises(error, match="max_wall"):
        serq_sim.run(_compile(MM1), max_wall=bad)


def test_keyboard_interrupt_in_the_api_is_a_partial_report():
    # a KeyboardInterrupt raised from inside the run (as Ctrl-C would) ends it with the partial report
    from serq_sim import engine

    calls = {"n": 0}
    original = engine.Simulation.end_session

    def end_session(self, s):
        calls["n"] += 1
        if calls["n"] == 500:
            raise KeyboardInterrupt
        original(self, s)

    engine.Simulation.end_session = end_session
    try:
        r = serq_sim.run(_compile(MM1_POOL))
    finally:
        engine.Simulation.end_session = original
    assert r.partial == "interrupted" and r.exit_status == 130
    assert r.result.ended == 499
    assert any(n.startswith("note: interrupted at t=") for n in r.result.notes)


# --- serq run ------------------------------------------------------------------------------------------

def _write(tmp_path, src: str) -> str:
    prog = tmp_path / "prog.sq"
    prog.write_text(src)
    return str(prog)


def test_cli_max_events_exits_3_with_the_partial_report(tmp_path):
    p = subprocess.run([SERQ, "run", _write(tmp_path, MM1), "--max-events", "1000"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 3, p.stderr
    assert p.stdout.startswith("run: PARTIAL (max-events)  ")
    assert "events 1000" in p.stdout
    assert "Traceback" not in p.stderr
    p = subprocess.run([SERQ, "run", _write(tmp_path, MM1), "--max-events", "1000", "--json"],
                       capture_output=True, text=True, timeout=60)
    doc = json.loads(p.stdout)
    assert p.returncode == 3 and doc["partial"] == "max-events" and doc["interrupted"] is True
    assert doc["events"] == 1000


def test_cli_max_wall_exits_3(tmp_path):
    p = subprocess.run([SERQ, "run", _write(tmp_path, MM1_POOL), "--max-wall", "0.5", "--json"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 3, p.stderr
    assert json.loads(p.stdout)["partial"] == "max-wall"


@pytest.mark.parametrize("flag", [["--max-events", "0"], ["--max-events", "x"], ["--max-wall", "0"],
                                  ["--max-wall", "-1"], ["--max-wall", "nan"],
                                  ["--max-wall", "inf"]])
def test_cli_bad_bounds_are_usage_errors(tmp_path, flag):
    p = subprocess.run([SERQ, "run", _write(tmp_path, MM1), *flag], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and flag[0] in p.stderr


def _start(tmp_path, src: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([SERQ, "run", _write(tmp_path, src), "--no-progress", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=os.environ)


def _wait_until_caught(proc: subprocess.Popen, sigs, timeout: float = 60.0) -> None:
    status = f"/proc/{proc.pid}/status"
    if not os.path.exists(status):  # not Linux: the delay counts from the start of the process
        return
    want = sum(1 << (int(sig) - 1) for sig in sigs)
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        try:
            with open(status) as f:
                caught = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
        except (OSError, StopIteration):
            return
        if caught & want == want:
            return
        time.sleep(0.002)


def _signalled(tmp_path, src: str, *signals_: tuple[float, int]) -> tuple[subprocess.Popen, bytes, bytes]:
    """Run ``src`` with --json and send each ``(delay, signal)`` in turn. Nothing says when start-up is
    over (a signal before it is one line on stderr and no report), so the first delay grows until the run
    had begun."""
    for first in (3.0, 8.0, 20.0, 45.0):
        proc = _start(tmp_path, src, "--json")
        try:
            for k, (delay, sig) in enumerate(signals_):
                time.sleep(first if k == 0 else delay)
                proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
            proc.wait()  # reaped here, not by a later test's collector
        if out:
            return proc, out, err
        assert err.strip() in (b"interrupted", b"terminated"), err
    raise AssertionError("the run never began")


@pytest.mark.parametrize("src", [MM1, MM1_POOL])
def test_sigterm_writes_the_partial_report_and_exits_143(tmp_path, src):
    proc, out, err = _signalled(tmp_path, src, (0, signal.SIGTERM))
    assert proc.returncode == 143, err
    doc = json.loads(out)
    assert doc["partial"] == "sigterm" and doc["interrupted"] is True
    assert doc["observes"]["response"]["count"] > 100
    # (the statement and the session it came in named before the time when it came in a session's statement)
    assert any(re.match(r"note: terminated \(SIGTERM\)( at [^ ]+:\d+:\d+, session \d+)? at t=", n)
               for n in doc["notes"]), doc["notes"]
    assert b"Traceback" not in err


@pytest.mark.parametrize("src", [MM1, MM1_POOL])
def test_two_ctrl_c_20ms_apart_keep_the_partial_report(tmp_path, src):
    # a large report (many samples to summarise) takes a while to write: the second Ctrl-C arrives then
    proc, out, err = _signalled(tmp_path, src, (0, signal.SIGINT), (0.02, signal.SIGINT))
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert doc["partial"] == "interrupted"
    assert b"Traceback" not in err


def _stacks_of_stuck(proc: subprocess.Popen) -> str:
    """The Python stacks of every thread of a ``serq`` that did not exit (started with PYTHONFAULTHANDLER:
    SIGABRT makes it print them on stderr and end), read with the rest of its stderr; the pipes closed."""
    proc.send_signal(signal.SIGABRT)
    try:
        _out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, err = proc.communicate()
    return err.decode(errors="replace")[-6000:]


@pytest.mark.parametrize("delay", [0.15, 0.3, 0.5, 0.8])
@pytest.mark.parametrize("sig, status, word", [(signal.SIGINT, 130, b"interrupted"),
                                               (signal.SIGTERM, 143, b"")])
def test_a_signal_during_start_up_is_one_line_and_no_traceback(tmp_path, monkeypatch, delay, sig, status, word):
    # A process that has not exited 60 s after the signal is stuck: its threads' stacks are taken (faulthandler)
    # and shown in the run's warnings, and the case is tried once more (the second try must pass). Seen once,
    # in a whole-suite run from a fresh clone (SIGTERM at 0.15 s), never in 400 runs of the case alone at
    # random delays: most likely the signal was handled where msgspec drops the exception (see
    # test_a_signal_whose_exception_is_dropped_in_start_up_still_stops_serq, and serq.signals for the mend).
    monkeypatch.setenv("PYTHONFAULTHANDLER", "1")
    stuck = []
    for _attempt in range(2):
        proc = _start(tmp_path, MM1)
        try:
            # serq handles both signals from the first lines of its main; before them the interpreter itself
            # is starting (on a loaded machine that can take longer than the delay): count the delay from the
            # moment the handlers are in place (Linux's /proc says which signals a process catches)
            _wait_until_caught(proc, (signal.SIGINT, signal.SIGTERM))
            time.sleep(delay)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
            break
        except subprocess.TimeoutExpired:
            stuck.append(_stacks_of_stuck(proc))
            with warnings.catch_warnings():  # shown in the run's warnings summary, not an error (the suite's)
                warnings.simplefilter("always")
                warnings.warn(f"serq did not exit 60 s after {sig.name} ({delay} s into start-up); its stacks:"
                              f"\n{stuck[-1]}", stacklevel=1)
        finally:
            if proc.returncode is None:
                proc.kill()
            proc.communicate()  # reaped and its pipes closed here, not by a later test's collector
    else:
        raise AssertionError("serq did not exit after the signal, twice:\n" + "\n----\n".join(stuck))
    assert proc.returncode == status, err
    assert b"Traceback" not in err, err
    # either start-up was cut short (one line) or the run had begun (its partial report)
    if out:
        assert out.startswith(b"run: INTERRUPTED" if sig == signal.SIGINT else b"run: PARTIAL (sigterm)")
    else:
        assert err.strip() in ((b"interrupted",) if sig == signal.SIGINT else (b"terminated",)), err
    assert word in err or out


# ``serq`` whose handlers, once in place, see the signal handled where C code calls Python code and drops what
# it raises, with no trace: "dict", PyDict_GetItem comparing a key whose __eq__ is Python code; "msgspec",
# msgspec making serq_ir.codec's decoder, which hashes the IR's typing unions (Python code) and drops what the
# hash raises. The second is how a whole-suite run once left `serq run` going after a SIGTERM 0.15 s into
# start-up (the handler had noted the signal, so a second one would have been ignored; the horizon is 1e12).
# serq_ir.codec now builds its decoders with such signals held back (pthread_sigmask) and delivered after the
# build: the spin there ends when the signal is pending, and it is handled once the build is done.
_DROPPING_SERQ = r"""
import ctypes, os, signal, sys, typing
from serq import signals

HOW = sys.argv[1]
install = signals.install

def spin():  # tell the test, then run until its signal has been handled here, or is held back (pending)
    os.write(2, b"ready\n")
    while signals.received() is None and not signal.sigpending():
        pass

class Key:
    def __hash__(self):
        return 1

    def __eq__(self, other):
        spin()
        return False

def install_then_drop():
    install()
    if HOW == "dict":
        get = ctypes.pythonapi.PyDict_GetItem
        get.restype = ctypes.c_void_p
        get.argtypes = [ctypes.py_object, ctypes.py_object]
        get({Key(): 1}, Key())
        return
    union = typing._UnionGenericAlias
    plain = union.__hash__
    spun = []

    def hash_(self):
        if not spun and sys._getframe(1).f_globals.get("__name__") == "serq_ir.codec":  # called by msgspec
            spun.append(1)
            spin()
        return plain(self)

    union.__hash__ = hash_
    import serq_ir.codec
    union.__hash__ = plain
    if not spun:
        os.write(2, b"msgspec hashed no union for serq_ir.codec\n")
        os._exit(99)

signals.install = install_then_drop
import serq.cli
serq.cli.main(sys.argv[2:])
"""


@pytest.mark.timeout(150)
@pytest.mark.parametrize("how", ["dict", "msgspec"])
@pytest.mark.parametrize("sig, status, line", [(signal.SIGINT, 130, b"interrupted"),
                                               (signal.SIGTERM, 143, b"terminated")], ids=["SIGINT", "SIGTERM"])
def test_a_signal_whose_exception_is_dropped_in_start_up_still_stops_serq(tmp_path, how, sig, status, line):
    import typing

    if how == "msgspec" and not hasattr(typing, "_UnionGenericAlias"):  # pragma: no cover - a later Python
        pytest.skip("typing has no _UnionGenericAlias")
    proc = subprocess.Popen([sys.executable, "-c", _DROPPING_SERQ, how, "run", _write(tmp_path, MM1), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert proc.stderr.readline() == b"ready\n"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)  # unless the signal is delivered again: never (horizon 1e12)
    finally:
        if proc.returncode is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == status, err
    assert b"Traceback" not in err and b"Exception ignored" not in err, err
    if out:  # delivered again once the run had begun: its partial report
        assert out.startswith(b"run: INTERRUPTED" if sig == signal.SIGINT else b"run: PARTIAL (sigterm)")
    else:
        assert err.strip() == line, err
