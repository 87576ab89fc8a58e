"""One rule where two places wrote two, and messages that say what is wrong.

* Seeds: ``serq_sweep.find(..., seeds=["3"])`` ran the seed 3 (its seeds were joined as text) while
  ``serq_sweep.sweep`` refuses a str seed, and ``find(..., seeds=5)`` was a TypeError (``'int' object is not
  iterable``); both now read seeds by ``serq_sweep.axes.seeds_given``, as ``compare`` does.
* Figures: ``check_figures`` told an ambiguous figure name from a missing one by the words "is ambiguous"
  in the message, so a name with those words stopped the probe at its first program; ``figures.resolve``
  raises ``AmbiguousFigure`` or ``UnknownFigure`` (both UserError).
* ``serq compare p.sq --set x=0.5`` said "swept here: nothing": it names the one value given and what to
  give instead; two names of several values are named as a grid of arms.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.errors import UserError
from serq_sweep import core
from serq_sweep.axes import seeds_given
from serq_sweep.figures import AmbiguousFigure, UnknownFigure, resolve

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 0.5;
def service() = ~exp(1);
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (service()); observe response = now - t0; }
run { horizon 20; seed 1; }
"""
OTHER = PROGRAM.replace("observe response = now - t0;", "observe response = now - t0; observe later = now - t0 + 1;")


@pytest.mark.parametrize(("seeds", "said"), [
    (["3"], "a seed is an integer from 0 to 2**64 - 1 (18446744073709551615), not '3'"),
    ([1.5], "not 1.5"),
    ([True], "not True"),
    (-1, "not -1"),
    ([2**64], "not an integer of 65 bits"),  # (as serq_sim.run(seed=2**64) says it: serq.numbers.shown)
])
def test_find_and_sweep_refuse_the_same_seeds_in_the_same_words(tmp_path, seeds, said):
    (tmp_path / "p.sq").write_text(PROGRAM)
    p = str(tmp_path / "p.sq")
    with pytest.raises(UserError) as by_sweep:
        serq_sweep.sweep(p, seeds=seeds, workers=0)
    with pytest.raises(UserError) as by_find:
        serq_sweep.find(p, "response.mean <= 100", ("lam", "0.1:0.9"), seeds=seeds, workers=0)
    with pytest.raises(UserError) as by_compare:
        serq_sweep.compare(p, sets={"lam": [0.1, 0.2]}, seeds=seeds, workers=0)
    assert str(by_sweep.value) == str(by_find.value) == str(by_compare.value)
    assert said in str(by_sweep.value)


def test_one_int_is_one_seed_in_find_too(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    columns, rows = serq_sweep.find(str(tmp_path / "p.sq"), "response.mean <= 100", ("lam", "0.1:0.9"),
                                    seeds=5, tol=0.2, workers=0)
    assert rows and seeds_given(5) == [5] and seeds_given("1..3") == [1, 2, 3] == seeds_given((1, 2, 3))


def test_resolve_raises_a_class_for_each_kind_of_miss():
    cols = ["observes.response.mean", "observes.later.mean", "events"]
    assert resolve("response.mean", cols) == "observes.response.mean"
    with pytest.raises(AmbiguousFigure) as a:
        resolve("mean", cols)
    with pytest.raises(UnknownFigure) as u:
        resolve("respons.mean", cols)
    assert isinstance(a.value, UserError) and isinstance(u.value, UserError)
    assert not isinstance(a.value, UnknownFigure) and not isinstance(u.value, AmbiguousFigure)
    assert str(a.value) == "error: figure 'mean' is ambiguous: observes.response.mean, observes.later.mean"


def test_check_figures_goes_by_the_class_not_the_words(tmp_path, monkeypatch):
    # a name whose "no figure" message holds the words "is ambiguous" was taken for an ambiguous one: the
    # probe stopped at the first program, though a later one may have the figure
    (tmp_path / "a.sq").write_text(PROGRAM)
    (tmp_path / "b.sq").write_text(OTHER)
    plan = core.plan([str(tmp_path / "a.sq"), str(tmp_path / "b.sq")], seeds=[1])
    import serq_sweep.worker as worker

    probed = []
    real = worker.run_task

    def counting(*args, **kw):
        probed.append(args[2])
        return real(*args, **kw)

    monkeypatch.setattr(worker, "run_task", counting)
    with pytest.raises(UnknownFigure) as e:
        core.check_figures(plan, ["x is ambiguous"])
    assert str(e.value) == "error: no figure 'x is ambiguous' in the results"
    assert len(probed) == 2  # both programs were looked at
    probed.clear()
    core.check_figures(plan, ["later.mean"])  # only the second program has it
    assert len(probed) == 2
    probed.clear()
    with pytest.raises(AmbiguousFigure):
        core.check_figures(plan, ["mean"])  # ambiguous in the second: more figures only add tails
    assert len(probed) == 2


def _compare(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([SERQ, "compare", "p.sq", *args, "--workers", "0", "--no-progress"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


HEAD = ("error: serq compare compares two or more programs, or one program under two or more values of one --set "
        "or --def name: ")


@pytest.mark.parametrize(("args", "said"), [
    (["--set", "lam=0.5"],
     "--set lam=0.5 gives one value, a setting of the one arm there is, so there is nothing to compare it with; "
     "give a name two or more values to compare them (--set lam=0.5,VALUE), or give two or more FILEs"),
    (["--def", "service=~exp(2)"],
     "--def service=~exp(2) gives one value, a setting of the one arm there is, so there is nothing to compare it "
     "with; give a name two or more values to compare them (--def service given again: --def service=EXPR), or "
     "give two or more FILEs"),
    (["--set", "lam=0.5", "--def", "service=~exp(2)"],
     "--set lam=0.5, --def service=~exp(2) each give one value, settings of the one arm there is"),
    ([], "one program and no --set or --def is one arm, with nothing to compare it with; give two or more FILEs, "
         "or a name two or more values (--set B=8192,512)"),
    (["--set", "lam=0.5,0.6", "--def", "service=~exp(2)", "--def", "service=~det(1)"],
     "here 2 things each have two or more values (--set lam, --def service), a grid of arms; compare one at a "
     "time (give the others one value each)"),
])
def test_compare_says_why_there_are_no_arms(tmp_path, args, said):
    r = _compare(tmp_path, *args)
    assert r.returncode == 2 and r.stderr.startswith(HEAD + said), r.stderr  # a usage error
    assert "swept here" not in r.stderr and len(r.stderr.splitlines()) == 1


def test_two_programs_and_a_swept_name_are_a_grid(tmp_path):
    (tmp_path / "q.sq").write_text(OTHER)
    r = _compare(tmp_path, "q.sq", "--set", "lam=0.5,0.6")
    assert r.returncode == 2 and "(the programs, --set lam), a grid of arms" in r.stderr, r.stderr


FOREVER = """let lam = 1000000;
stage s : fifo(1000000);
workload { arrive poisson(lam); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 1e9; }
"""


@pytest.mark.timeout(90)
@pytest.mark.parametrize("command", ["sweep", "compare"])
def test_a_name_of_one_figure_in_each_program_but_two_in_the_table_is_refused_before_the_runs(tmp_path, command):
    # `mean` is observes.response.mean in a.sq, but the table of a.sq and b.sq has observes.later.mean too:
    # the name was found ambiguous after every run (the probe stopped at a.sq, where it resolved)
    (tmp_path / "a.sq").write_text(FOREVER)
    (tmp_path / "b.sq").write_text(FOREVER.replace("observe response", "observe later = now - t0 + 1; observe response"))
    flag = "--show" if command == "sweep" else "--figure"
    r = subprocess.run([SERQ, command, "a.sq", "b.sq", flag, "mean", "--seeds", "1,2", "--workers", "0",
                        "--no-progress"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stderr == f"error: {flag}: figure 'mean' is ambiguous: observes.later.mean, observes.response.mean\n" \
        or r.stderr == f"error: {flag}: figure 'mean' is ambiguous: observes.response.mean, observes.later.mean\n", \
        r.stderr


@pytest.mark.parametrize("text", ["response.mean <=", "response.mean < =5", "response.mean == = 5", "x >="])
def test_a_condition_without_its_number_says_so(text):
    # 'x <=' was read as x < '=' and refused as "'=' is not a number"
    from serq_sweep.search import parse_condition

    with pytest.raises(UserError) as info:
        parse_condition(text)
    assert str(info.value) == (f"error: --find {text!r}: expected FIGURE OP NUMBER, OP one of <= < >= > == != "
                               "(e.g. 'ttft.p99 <= 1')")
    assert parse_condition("x<-1") == ("x", "<", -1.0) and parse_condition(" x>=inf ") == ("x", ">=", float("inf"))
