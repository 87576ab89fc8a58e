"""Known defects, round 6 (serq-sweep).

1. One cut for long text in a sweep point's label: a swept value was cut by the label's own rule (60
   characters, ``...`` and ``(N characters)``) while its name was cut as every message cuts a name
   (serq.errors.clipped: past 120 characters, the first 60 and the last 59 around ``…``). Both are cut by
   clipped now (serq_sweep.core.quoted_label).
2. serq_sweep.find's messages named the command line's options (--over, --tol, --horizon) to a caller of the
   API, who gave arguments; they name the arguments now, as sweep() and compare() do.
"""

from __future__ import annotations

import pytest
from serq.errors import UsageError, UserError
from serq_sweep import sweep
from serq_sweep.core import quoted_label

PROGRAM = """def svc() = 0.5;
let k = 1;
stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (svc() * k); observe y = now - t0; }
run { horizon 10; warmup 0; seed 1; }
"""


def _cut(text: str) -> str:
    """The cut by hand: whole up to 120 characters, else the first 60 and the last 59 around …"""
    return text if len(text) <= 120 else text[:60] + "…" + text[-59:]


def test_a_long_value_is_cut_as_a_long_name_is():
    value = "(" + "a" * 99 + "b" * 100 + ")"  # 201 characters
    name = "n" * 80 + "m" * 80
    label = quoted_label({name: value})
    assert label == "n" * 60 + "…" + "m" * 59 + "=(" + "a" * 59 + "…" + "b" * 58 + ")"
    assert label == f"{_cut(name)}={_cut(value)}"


@pytest.mark.parametrize("n", [119, 120, 121])
def test_the_bound_is_the_names(n):
    value = "1" + " " * (n - 1)
    assert quoted_label({"f": value}) == "f=" + (value if n <= 120 else "1" + " " * 59 + "…" + " " * 59)


def test_the_point_of_an_error_cuts_its_value_as_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    body = "(" + "x" * 300  # does not parse: the error at its point
    with pytest.raises(UserError) as e:
        sweep("p.sq", defs={"svc": [body, "0.5"]}, workers=0, progress=False)
    assert str(e.value).endswith("\n(at the sweep's point svc=(" + "x" * 59 + "…" + "x" * 59 + ")")
    assert "characters)" not in str(e.value)


def test_a_point_given_twice_cuts_its_value_as_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    body = "0.5" + " " * 200  # one value twice
    with pytest.raises(UsageError) as e:
        sweep("p.sq", defs={"svc": [body, body]}, workers=0, progress=False)
    assert str(e.value).startswith("error: the point svc=0.5" + " " * 57 + "…" + " " * 59 + " is given twice")


# 2. serq_sweep.find's messages name its arguments, as sweep() and compare() do since 8db8cc8
# (serq.loading.argument_given); serq sweep --find names the options (serq.loading.option_given).

KNOB = """let k = 1;
pool slots { cap k; }
stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; hold slots (1) { run s (0.5); } observe y = now - t0; }
run { horizon 10; warmup 0; seed 1; }
"""

# (the keyword arguments of find, the options of serq sweep --find, and the two messages)
SAID = [
    (dict(over=("k", "4:1")), ["--over", "k", "4:1"],
     "over=('k', '4:1'): LO must be below HI, both finite", "--over k 4:1: LO must be below HI, both finite"),
    (dict(over=("k", "1:4:1"), tol=0.5), ["--over", "k", "1:4:1", "--tol", "0.5"],
     "over=('k', '1:4:1'): tol goes with a range LO:HI (a grid's search ends at neighbours on the grid)",
     "--over k 1:4:1: --tol goes with a range LO:HI (a grid's search ends at neighbours on the grid)"),
    (dict(over=("k", "1:1:1")), ["--over", "k", "1:1:1"],
     "over=('k', '1:1:1'): the grid has one value, 1; a search needs two (a step below HI - LO)",
     "--over k 1:1:1: the grid has one value, 1; a search needs two (a step below HI - LO)"),
    (dict(over=("k", "1:x")), ["--over", "k", "1:x"], "over=('k', '1:x'): 'x' is not a number",
     "--over k: 'x' is not a number"),
    (dict(over=("k", "1:4"), sets={"k": [1, 2]}), ["--over", "k", "1:4", "--set", "k=1,2"],
     "over=('k', '1:4'): k is also given with sets/defs", "--over k: k is also given with --set/--def"),
    (dict(over=("kk", "1:4")), ["--over", "kk", "1:4"],
     "p.sq: over=('kk', '1:4'): the program has no `let kk` (did you mean `k`?) (the knob find searches is a let)",
     "p.sq: --over kk: the program has no `let kk` (did you mean `k`?) (the knob --find searches is a let)"),
    (dict(over=("k", "1:4"), horizon=5, warmup=10), ["--over", "k", "1:4", "--horizon", "5", "--warmup", "10"],
     "warmup=10: warmup 10 is not below the horizon 5 (horizon=5)",
     "--warmup 10: warmup 10 is not below the horizon 5 (--horizon 5)"),
    (dict(over=("k", "1:4"), horizon=0), ["--over", "k", "1:4", "--horizon", "0"],
     "horizon=0: is not a positive number of seconds, or inf", None),
]


@pytest.mark.parametrize("kw, _, said, __", SAID)
def test_find_names_its_arguments(tmp_path, monkeypatch, kw, _, said, __):
    from serq_sweep import find

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(KNOB)
    with pytest.raises(UserError) as e:
        find("p.sq", "y.mean <= 1", workers=0, progress=False, **kw)
    msg = str(e.value)
    assert msg.endswith(said) and msg.count("\n") == 0, msg
    assert "--" not in msg.split(": the program")[0]


def test_find_without_a_condition_names_the_argument(tmp_path, monkeypatch):
    from serq_sweep import find

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(KNOB)
    with pytest.raises(UsageError) as e:
        find("p.sq", [], ("k", "1:4"), workers=0, progress=False)
    assert str(e.value) == "error: conditions: no condition"


@pytest.mark.timeout(120)
def test_serq_sweep_find_names_its_options(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    serq = str(Path(sys.executable).parent / "serq")
    (tmp_path / "p.sq").write_text(KNOB)
    for _, argv, _, said in SAID:
        if said is None:  # (click's own message for --horizon 0)
            continue
        r = subprocess.run([serq, "sweep", "p.sq", "--find", "y.mean <= 1", *argv, "--workers", "0", "--no-progress"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
        assert r.returncode in (1, 2) and r.stdout == "" and r.stderr.rstrip("\n").endswith(said), r.stderr
