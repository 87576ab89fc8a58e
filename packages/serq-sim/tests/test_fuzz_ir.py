"""Fuzzing the IR: the repository's programs (examples/**/*.sq, bench/*.sq) compiled, their JSON mutated
(numbers to 0, -1, 1e308, 1e400, "inf", "nan"; indices of slots, pools, stages and observes out of range;
wrong types; list items dropped, duplicated, swapped; keys dropped or added; node kinds swapped; subtrees
copied over others of their kind; random expressions; spans; run settings; truncation), then read and,
when they decode, run for a short while (fuzzir.py). Reading gives the IR's one-line error or a program;
running gives a report or a SimError; nothing else (no KeyError, IndexError, ZeroDivisionError,
OverflowError, RecursionError, TypeError…) may escape. The CLI part checks that `serq check`/`serq run` on
mutated IR files exit 1 with one message (the IR's: one line naming the file) and no traceback.

Deterministic (``derandomize=True``): the same examples every run. ``SERQ_FUZZ_EXAMPLES=N`` runs N
examples per test instead of the default, to search further (``SERQ_FUZZ_SEED=S`` then draws other
examples: the tests are no longer derandomized but seeded), e.g.::

    SERQ_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest -q -p no:cacheprovider \\
        packages/serq-sim/tests/test_fuzz_ir.py
"""

from __future__ import annotations

import random
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

import pytest
from fuzzir import (
    Chooser,
    capped,
    check_ir_message,
    fuzz_seed,
    fuzz_settings,
    mutate,
    outcome,
    programs,
    shortened,
)
from hypothesis import given
from hypothesis import strategies as st


@st.composite
def mutated_ir(draw):
    return mutate(Chooser(draw=draw))


def test_the_programs_compile_and_run_unmutated():
    for name, text in programs().items():
        assert outcome(text.decode(), name) in ("report", "sim-error"), name


@fuzz_seed
@fuzz_settings(300)
@given(mutated_ir())
def test_mutated_ir_reads_and_runs_or_gives_one_error(case):
    name, text = case
    outcome(text, name)


@fuzz_seed
@fuzz_settings(60)
@given(mutated_ir())
def test_mutated_ir_keeps_the_pool_invariants_in_the_general_engine(case):
    name, text = case
    outcome(text, name, check_invariants=True)


# -- the command line ----------------------------------------------------------------------------------------

SERQ = str(Path(sys.executable).parent / "serq")


def cli_cases() -> list[tuple[str, str]]:
    """A handful of mutated IR files: fixed ones, and the first of some seeded mutations that fail to read
    and that fail to run."""
    import json

    import serq_ir

    mg1 = json.loads(programs()["examples/single-turn/mg1.sq"])
    bad_slot = json.loads(json.dumps(mg1))
    bad_slot["session"][0]["slot"] = 99
    cases = [("ir-error", json.dumps(mg1)[:200]), ("ir-error", json.dumps(bad_slot)),
             ("ir-error", json.dumps({**mg1, "run": {**mg1["run"], "horizon": "x"}}))]
    rng = random.Random(1)
    want = {"ir-error": 1, "sim-error": 2}
    while any(want.values()):
        name, text = mutate(Chooser(rng=rng))
        got = outcome(text, name)
        if want.get(got):
            want[got] -= 1
            if got == "sim-error":  # as it ran: shortened
                text = serq_ir.encode(shortened(serq_ir.decode(text))).decode()
            cases.append((got, text))
    return cases


@pytest.mark.parametrize("command", ["check", "run"])
def test_the_cli_gives_one_message_for_a_mutated_ir_file(tmp_path, command, serq_in_process):
    for i, (what, text) in enumerate(cli_cases()):
        if command == "check" and what == "sim-error":
            continue
        f = tmp_path / f"m{i}.ir.json"
        if isinstance(text, bytes):
            f.write_bytes(text)
        else:
            f.write_text(text, encoding="utf-8")
        args = [command, str(f)] + (["--no-progress"] if command == "run" else [])
        # the first file as the command's own process (its memory capped); the others, which are about what the
        # command says, on serq.cli.main in this process
        r = subprocess.run(capped([SERQ, *args]), capture_output=True, text=True, timeout=60) if i == 0 \
            else serq_in_process(*args)
        assert r.returncode == 1, (what, r.returncode, r.stderr)
        assert "Traceback" not in r.stderr, (what, r.stderr)
        if what == "sim-error":
            first = r.stderr.split("\n")[0]
            # serq run checks the stage and pool kinds against the installed parts when it loads the file,
            # so a kind the simulator refuses (a mutated kind name) is refused there, as an IR error that
            # names the file and the JSON path
            assert ": error: " in first or (first.startswith(f"error: {f}: ") and " - at '" in first), r.stderr
        else:  # the IR's error: one line naming the file, or located (text that is not JSON or not UTF-8)
            check_ir_message(r.stderr, str(f))
        assert r.stdout == "", (what, r.stdout)


# -- the guard of a run: its address-space cap, its alarm and its timer never outlive it --------------------


def _limits_after(fire_where, monkeypatch):
    """Run a guard whose alarm comes at ``fire_where``; the address-space limit and the SIGPROF handler
    before it, the limit in its body, the limit, handler and CPU-time timer after it, and the seconds of each
    ``setitimer`` call the guard made (0: a disarming).

    A timer that a guard leaves armed sends SIGPROF later, whose default action ends the process: a test
    run's worker died of one that ``fire_where="in the finally"`` left armed (5 s of CPU time), at a later,
    unrelated test, with no message. Here a handler of this test's receives it instead, and the timer is
    disarmed and the default handler back whatever the guard did."""
    import gc
    import resource
    import signal

    import fuzzir

    real_limit, real_timer = fuzzir._limit_memory, signal.setitimer
    default = signal.signal(fuzzir.SIGNAL, lambda signum, frame: None)
    try:
        before = resource.getrlimit(resource.RLIMIT_AS), signal.getsignal(fuzzir.SIGNAL)
        calls = []

        def in_gc(phase, info):  # a gc callback as hypothesis keeps one, in which the alarm comes
            if phase == "start":
                signal.raise_signal(fuzzir.SIGNAL)

        def timer(which, seconds, *a):
            calls.append(seconds)
            if seconds == 0 and fire_where == "in the finally":
                signal.raise_signal(fuzzir.SIGNAL)  # the alarm comes just before it is disarmed
            result = real_timer(which, seconds, *a)
            if seconds == 0 and fire_where == "in a gc callback after the disarm" and calls.count(0) == 1:
                gc.callbacks.append(in_gc)  # the alarm came before the disarm, and is handled in a collection
                try:
                    gc.collect()
                finally:
                    gc.callbacks.remove(in_gc)
            return result

        monkeypatch.setattr(fuzzir.signal, "setitimer", timer)
        if fire_where == "after the cap is set":
            def limit(*a):
                real_limit(*a)
                raise fuzzir.OverTime  # as an alarm there would
            monkeypatch.setattr(fuzzir, "_limit_memory", limit)
        capped = None
        ends = nullcontext() if fire_where == "in a gc callback after the disarm" else pytest.raises(fuzzir.OverTime)
        with ends:
            with fuzzir.cpu_limit(5.0):
                capped = resource.getrlimit(resource.RLIMIT_AS)
                if fire_where == "in the body":
                    signal.raise_signal(fuzzir.SIGNAL)
        monkeypatch.undo()
        after = resource.getrlimit(resource.RLIMIT_AS), signal.getsignal(fuzzir.SIGNAL)
        return before, capped, after, real_timer(fuzzir.TIMER, 0), calls
    finally:
        real_timer(fuzzir.TIMER, 0)
        signal.signal(fuzzir.SIGNAL, default)


def _check_the_guard_left_nothing(before, after, timer, calls):
    assert after == before
    assert timer == (0.0, 0.0), f"the guard left its timer armed: {timer}"
    assert 0 in calls and not any(calls[calls.index(0):]), f"the timer was armed again after its disarming: {calls}"


@pytest.mark.parametrize("fire_where", ["in the body", "in the finally"])
def test_the_guard_restores_the_address_space_the_alarm_handler_and_the_timer(fire_where, monkeypatch):
    import resource

    before, capped, after, timer, calls = _limits_after(fire_where, monkeypatch)
    if before[0][0] == resource.RLIM_INFINITY:  # the cap was set in the body
        assert capped is not None and capped[0] != resource.RLIM_INFINITY
    _check_the_guard_left_nothing(before, after, timer, calls)


def test_the_guard_restores_the_address_space_when_the_alarm_comes_as_the_cap_is_set(monkeypatch):
    before, _, after, timer, calls = _limits_after("after the cap is set", monkeypatch)
    _check_the_guard_left_nothing(before, after, timer, calls)


def test_an_alarm_handled_in_a_gc_callback_as_the_guard_ends_does_not_arm_the_timer_again(monkeypatch):
    # the alarm, handled in a gc callback, arms the timer again to be raised outside it; once the body is
    # over and the timer disarmed, that would leave it armed (1 ms) with the default handler given back
    before, _, after, timer, calls = _limits_after("in a gc callback after the disarm", monkeypatch)
    _check_the_guard_left_nothing(before, after, timer, calls)


def test_a_command_a_fuzz_test_starts_has_its_address_space_capped():
    import fuzzir

    grab = f"import mmap; mmap.mmap(-1, {fuzzir.CHILD_MEMORY})"
    r = subprocess.run(capped([sys.executable, "-c", grab]), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "Cannot allocate memory" in r.stderr, r.stderr
    ok = subprocess.run(capped([sys.executable, "-c", "print(1)"]), capture_output=True, text=True, timeout=60)
    assert (ok.returncode, ok.stdout) == (0, "1\n"), ok.stderr
