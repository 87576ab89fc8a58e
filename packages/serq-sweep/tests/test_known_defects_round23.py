"""Known defects of serq sweep, round 23: a capacity search over an expression definition.

``serq sweep --find … --over rate`` of a program where ``rate`` is ``def rate() = …`` (examples/single-turn/
vllm_bursts.sq) said only "the program has no `let rate` (the knob --find searches is a let)". A search's values
reach the program as ``--set`` gives a `let` its value, a number it bisects; ``--set rate`` of a definition says
that it is one and that ``--def`` gives its body (01543da9). The search now says so too, and what it takes: a
definition's body is given with ``--def`` (one, or a list: an axis of the search), no range of bodies is
searched, and a definition searched is one whose body reads a `let` searched instead. A name that is neither
is told as before, with the closest `let`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 0.5;
def rate() = lam * 2;
stage svc : fifo;
workload { arrive poisson(rate()); }
session { set t0 = now; run svc (~exp(1)); observe response = now - t0; end; }
run { horizon 50; }
"""

SAID = ("`rate` is an expression definition: {over} searches a `let`, its values given to the program as {set} "
        "gives one; {def_} gives a definition's body, one or several (an axis of the search), but no range of "
        "bodies is searched: to search it, make its body read a `let` (`let r = 1;` and `r` in the body) and "
        "search {over_r}")


def test_a_search_over_a_definition_says_it_is_one(tmp_path):
    """Mutation: without search._a_definition the message ended "the program has no `let rate` (the knob --find
    searches is a let)"."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--find", "response.mean <= 2", "--over", "rate", "0.1:0.9",
                        "--workers", "0", "--no-progress"], capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("error: p.sq: --over rate: the program has no `let rate`; "
                        + SAID.format(over="--over", set="--set rate", def_="--def rate", over_r="--over r") + "\n")


def test_the_python_api_names_its_arguments(tmp_path, monkeypatch):
    from serq_sweep import find

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError) as e:
        find("p.sq", "response.mean <= 2", ("rate", "0.1:0.9"), workers=0, progress=False)
    msg = str(e.value)
    assert msg.endswith("p.sq: over=('rate', '0.1:0.9'): the program has no `let rate`; "
                        + SAID.format(over="over", set="sets['rate']", def_="defs['rate']", over_r="over=('r', …)"))
    assert "--" not in msg


def test_the_way_the_message_gives_runs(tmp_path):
    # the definition's body reading a let, and the search over that let: what the message says to do
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--find", "response.mean <= 2", "--over", "lam", "0.1:0.4",
                        "--workers", "0", "--no-progress", "--seeds", "1"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=100)
    assert r.returncode == 0, r.stderr


def test_a_name_that_is_neither_is_told_as_before(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--find", "response.mean <= 2", "--over", "lan", "0.1:0.9"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 1
    assert r.stderr == ("error: p.sq: --over lan: the program has no `let lan` (did you mean `lam`?) (the knob "
                        "--find searches is a let)\n")
