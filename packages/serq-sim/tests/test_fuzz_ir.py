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
def test_the_cli_gives_one_message_for_a_mutated_ir_file(tmp_path, command):
    for i, (what, text) in enumerate(cli_cases()):
        if command == "check" and what == "sim-error":
            continue
        f = tmp_path / f"m{i}.ir.json"
        if isinstance(text, bytes):
            f.write_bytes(text)
        else:
            f.write_text(text, encoding="utf-8")
        args = [SERQ, command, str(f)] + (["--no-progress"] if command == "run" else [])
        r = subprocess.run(capped(args), capture_output=True, text=True, timeout=60)
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


# -- the guard of a run: its address-space cap and its alarm never outlive it ------------------------------


def _limits_after(fire_where, monkeypatch):
    import resource
    import signal

    import fuzzir

    before = resource.getrlimit(resource.RLIMIT_AS), signal.getsignal(fuzzir.SIGNAL)
    real_limit, real_timer = fuzzir._limit_memory, signal.setitimer
    if fire_where == "after the cap is set":
        def limit(*a):
            real_limit(*a)
            raise fuzzir.OverTime  # as an alarm there would
        monkeypatch.setattr(fuzzir, "_limit_memory", limit)
    elif fire_where == "in the finally":
        def timer(which, seconds, *a):
            if seconds == 0:
                signal.raise_signal(fuzzir.SIGNAL)  # the alarm comes just before it is disarmed
            return real_timer(which, seconds, *a)
        monkeypatch.setattr(fuzzir.signal, "setitimer", timer)
    capped = None
    with pytest.raises(fuzzir.OverTime):
        with fuzzir.cpu_limit(5.0):
            capped = resource.getrlimit(resource.RLIMIT_AS)
            if fire_where == "in the body":
                signal.raise_signal(fuzzir.SIGNAL)
    monkeypatch.undo()
    return before, capped, (resource.getrlimit(resource.RLIMIT_AS), signal.getsignal(fuzzir.SIGNAL))


@pytest.mark.parametrize("fire_where", ["in the body", "in the finally"])
def test_the_guard_restores_the_address_space_and_the_alarm_handler(fire_where, monkeypatch):
    import resource

    before, capped, after = _limits_after(fire_where, monkeypatch)
    if before[0][0] == resource.RLIM_INFINITY:  # the cap was set in the body
        assert capped is not None and capped[0] != resource.RLIM_INFINITY
    assert after == before


def test_the_guard_restores_the_address_space_when_the_alarm_comes_as_the_cap_is_set(monkeypatch):
    before, _, after = _limits_after("after the cap is set", monkeypatch)
    assert after == before


def test_a_command_a_fuzz_test_starts_has_its_address_space_capped():
    import fuzzir

    grab = f"import mmap; mmap.mmap(-1, {fuzzir.CHILD_MEMORY})"
    r = subprocess.run(capped([sys.executable, "-c", grab]), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "Cannot allocate memory" in r.stderr, r.stderr
    ok = subprocess.run(capped([sys.executable, "-c", "print(1)"]), capture_output=True, text=True, timeout=60)
    assert (ok.returncode, ok.stdout) == (0, "1\n"), ok.stderr
