"""Known defects of serq sweep, round 24.

``serq sweep --find … --over rte`` of a program of ``let lam`` and ``def rate()`` suggested only the lets
(here none: `rte` is close to no let), though the name meant was the definition's; the did-you-mean is now the
closest of the lets and the expression definitions (serq.errors.knob_hint), a definition said to be one, as
``--set rte`` of the program says too. A let is suggested as before.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError, knob_hint

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 0.5;
def rate() = lam * 2;
stage svc : fifo;
workload { arrive poisson(rate()); }
session { set t0 = now; run svc (~exp(1)); observe response = now - t0; end; }
run { horizon 50; }
"""


def _sweep(tmp_path, name, file="p.sq"):
    return subprocess.run([SERQ, "sweep", file, "--find", "response.mean <= 2", "--over", name, "0.1:0.9"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=100)


@pytest.mark.parametrize("name, meant", [("rte", "`rate`, an expression definition"), ("Rate", "`rate`, an "
                                         "expression definition"), ("lan", "`lam`"), ("lamb", "`lam`")])
def test_over_of_a_misspelt_name_suggests_a_let_or_a_definition_saying_which(tmp_path, name, meant):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _sweep(tmp_path, name)
    assert r.returncode == 1
    assert r.stderr == (f"error: p.sq: --over {name}: the program has no `let {name}` (did you mean {meant}?) (the "
                        "knob --find searches is a let)\n")


def test_a_name_near_nothing_suggests_nothing(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _sweep(tmp_path, "zzz")
    assert r.stderr == "error: p.sq: --over zzz: the program has no `let zzz` (the knob --find searches is a let)\n"


def test_the_python_api_says_it_too(tmp_path):
    from serq_sweep import find

    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError) as e:
        find(str(tmp_path / "p.sq"), "response.mean <= 2", over=("rte", "0.1:0.9"), workers=0, progress=False)
    assert "(did you mean `rate`, an expression definition?) (the knob find searches is a let)" in str(e.value)


def test_the_set_of_the_program_says_it_alike(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--set", "rte=1"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=100)
    assert r.returncode == 1
    assert r.stderr == ("p.sq: error: --set rte: the program has no `let rte` (did you mean `rate`, an expression "
                        "definition?)\n")


def test_knob_hint():
    assert knob_hint("rte", ["lam"], ["rate"]) == " (did you mean `rate`, an expression definition?)"
    assert knob_hint("lan", ["lam"], ["rate"]) == " (did you mean `lam`?)"
    assert knob_hint("xyz", ["lam"], ["rate"]) == ""
    assert knob_hint("rate", ["lam"], ["rate"]) == ""  # (the name itself is no suggestion)
