"""Known defects of a sweep, checked against docs/language.md and docs/sweep.md.

A run with no end (docs/language.md, "A run needs a horizon where it runs"): a horizon of inf, no `arrivals
N`, and arrivals that never stop stops only at a bound or a signal. ``serq sweep`` and ``serq compare`` say so
on stderr before the runs, once a program, not once a point (the points of one program differ in their
values, not in whether their runs end)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import core

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """let lam = 0.5;
stage f : fifo;
workload { arrive poisson(lam); }
session { run f (1); }
run { horizon 10; }
"""
NO_END = ("warning: the run has no end: horizon inf and arrivals that never stop (`arrive poisson`); it stops "
          "only at --max-events, --max-wall, --max-samples or a signal, with a partial report; give --arrivals "
          "N (or `arrivals N;` in the run block) or a finite horizon")


@pytest.fixture
def programs(tmp_path):
    for name in ("p.sq", "q.sq"):
        (tmp_path / name).write_text(PROGRAM)
    return str(tmp_path / "p.sq"), str(tmp_path / "q.sq")


def test_a_sweep_of_runs_with_no_end_says_it_once(programs):
    p, _ = programs
    r = subprocess.run([SERQ, "sweep", p, "--set", "lam=0.5,0.6,0.7", "--seeds", "1,2", "--horizon", "inf",
                        "--max-events", "50", "--workers", "0", "--no-progress"],
                       capture_output=True, text=True, timeout=60)
    assert r.stderr.splitlines() == [f"serq: {NO_END}"], r.stderr
    assert r.stdout.count("max-events") == 2 * 3 * 2  # 6 runs cut short (status and partial): they ran


def test_one_warning_for_each_program(programs):
    p, q = programs
    plan = core.plan([p, q], sets={"lam": [0.5, 0.6]}, horizon=float("inf"), max_events=50)
    assert plan.warnings == [f"{p}: {NO_END}", f"{q}: {NO_END}"]


@pytest.mark.parametrize("kw", [{"horizon": 10.0}, {"horizon": float("inf"), "arrivals": 5}])
def test_a_sweep_whose_runs_end_says_nothing(programs, kw):
    assert core.plan([programs[0]], sets={"lam": [0.5, 0.6]}, **kw).warnings == []


def test_compare_says_it_once_too(programs):
    p, _ = programs
    r = subprocess.run([SERQ, "compare", p, "--set", "lam=0.5,0.6", "--horizon", "inf", "--max-events", "50",
                        "--workers", "0", "--no-progress"], capture_output=True, text=True, timeout=60)
    assert r.stderr.count("has no end") == 1 and f"serq: {NO_END}" in r.stderr.splitlines(), r.stderr


# A run setting the sweep API is given is named as the caller gave it, the argument (`horizon=`), not the
# command line's option: sweep(horizon=10**5000) said "--horizon (...)", an option the caller never wrote.
# serq.loading.apply_run_overrides makes the words for both, told the name to use (option_given,
# argument_given); serq sweep and serq compare keep their options.

def _error(call, *args, **kw) -> str:
    from serq.errors import UserError

    with pytest.raises(UserError) as info:
        call(*args, workers=0, progress=False, **kw)
    return str(info.value)


@pytest.mark.parametrize("kw, said", [
    ({"horizon": 10**5000}, "error: horizon=(an integer of 16610 bits): is not a positive number of seconds, or inf"),
    ({"horizon": 0}, "error: horizon=0: is not a positive number of seconds, or inf"),
    ({"warmup": -1}, "error: warmup=-1: is not a finite number of seconds, at least 0"),
    ({"arrivals": 0}, "error: arrivals=0: must be a positive integer"),
])
def test_the_sweep_api_names_its_arguments(programs, kw, said):
    from serq_sweep import sweep

    assert _error(sweep, programs[0], **kw) == said


def test_a_window_the_api_leaves_names_both_arguments(programs):
    from serq_sweep import sweep

    p = programs[0]
    assert _error(sweep, p, horizon=5, warmup=10) == f"{p}: error: warmup=10: warmup 10 is not below the horizon 5 " \
                                                      "(horizon=5)"


def test_compare_api_names_its_arguments_too(programs):
    from serq_sweep import compare

    assert _error(compare, programs[0], sets={"lam": [0.5, 0.6]}, horizon=-1).startswith(
        "error: horizon=-1: is not a positive number of seconds, or inf")


def test_a_run_time_error_of_an_api_setting_names_the_argument(programs):
    # 100 arrivals of poisson(0.5) by the horizon 1 cannot be: the run's error names the settings' origins
    from serq_sweep import sweep

    frame = sweep(programs[0], arrivals=100, horizon=1, workers=0, progress=False)
    (message,) = list(frame["message"])
    assert "arrivals=100: " in message and "(horizon=1)" in message and "--" not in message, message


def test_the_command_line_keeps_its_options_and_the_runs_their_keys(programs):
    p = programs[0]
    r = subprocess.run([SERQ, "sweep", p, "--horizon", "5", "--warmup", "10", "--workers", "0", "--no-progress"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr == (f"{p}: error: --warmup 10: warmup 10 is not below the horizon 5 "
                                              "(--horizon 5)\n"), r.stderr
    # the origin a setting's message names is a span, which a run's key leaves out: one run either way
    from serq.loading import argument_given

    cli, api = (core.plan([p], horizon=20.0, arrivals=5, **kw) for kw in ({}, {"given": argument_given}))
    assert [cli.key(x, 1) for x in cli.points] == [api.key(x, 1) for x in api.points]
