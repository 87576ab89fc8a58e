"""``--over NAME LO:HI:STEP`` of a grid of one value (a step wider than the range, or LO equal to HI) said
``error: --tol 0: must be positive``, a flag the user had not given (the default tolerance, (HI - LO) / 64,
was 0); and ``--tol`` with a grid was ignored (the grid's neighbours end the search). Each is one message
naming ``--over`` before any run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep.search import find

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 50; seed 1; }
"""


@pytest.mark.parametrize("spec, said", [
    ("0.1:0.9:1", "over=('lam', '0.1:0.9:1'): the grid has one value, 0.1; a search needs two (a step below HI - LO)"),
    ("0.5:0.5:1", "over=('lam', '0.5:0.5:1'): the grid has one value, 0.5; a search needs two (a step below HI - LO)"),
])
def test_a_grid_of_one_value_is_named_by_over(tmp_path, spec, said):
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError) as info:
        find(str(tmp_path / "p.sq"), "response.mean <= 3", ("lam", spec), workers=0)
    assert str(info.value) == f"error: {said}"


def test_a_tolerance_with_a_grid_is_refused(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError) as info:
        find(str(tmp_path / "p.sq"), "response.mean <= 3", ("lam", "0.1:0.9:0.1"), tol=0.5, workers=0)
    assert str(info.value) == ("error: over=('lam', '0.1:0.9:0.1'): tol goes with a range LO:HI (a grid's search ends "
                               "at neighbours on the grid)")


@pytest.mark.timeout(60)
def test_the_command_says_so_without_a_search(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--find", "response.mean <= 3", "--over", "lam", "0.1:0.9:1",
                        "--workers", "0", "--no-progress"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2  # a usage error
    assert "--tol" not in r.stderr
    assert r.stderr.strip() == ("error: --over lam 0.1:0.9:1: the grid has one value, 0.1; a search needs two (a "
                                "step below HI - LO)")


def test_a_grid_of_two_values_and_a_range_still_search(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    columns, rows = find(str(tmp_path / "p.sq"), "response.mean <= 100", ("lam", "0.1:0.9:0.4"), workers=0)
    assert rows[0]["outcome"] == "holds_everywhere"
    columns, rows = find(str(tmp_path / "p.sq"), "response.mean <= 100", ("lam", "0.1:0.9"), tol=0.1, workers=0)
    assert rows[0]["outcome"] == "holds_everywhere"
