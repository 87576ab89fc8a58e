"""``serq compare`` under one seed, of arms that draw no random number.

Such a program runs the same run under every seed, so its one seed's figures are exact; compare refused it
with "serq compare needs two or more seeds (--seeds 1..10) for its CIs", as if more seeds would tell
something. It now says that no arm draws and that ``serq sweep`` of the same arms under that seed compares
them. Arms that draw (a draw, Poisson arrivals), or that do not compile, are refused as before, before a
point is compiled for the comparison.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys

import pytest
from serq.errors import UsageError
from serq_sweep import pairing

CONST = """let w = 1;
stage s : fifo;
workload { arrive batch(2); }
session { run s (w); end; }
run { horizon 10; }
"""
OLD = "error: serq compare needs two or more seeds (--seeds 1..10) for its CIs"
NEW = ("error: serq compare needs two or more seeds for its CIs, and no arm here draws a random number (no draw, "
       "no Poisson arrivals, no trace sampled): every seed runs the same run, so one seed's figures are exact "
       "and there are no CIs to give; `serq sweep {how} --seeds 1` compares the arms' figures")


def _serq(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300, stdin=subprocess.DEVNULL)


def _write(tmp_path, **programs: str) -> None:
    for name, text in programs.items():
        (tmp_path / f"{name}.sq").write_text(text)


@pytest.mark.parametrize("args, how", [
    (("a.sq", "b.sq"), "a.sq b.sq"),
    (("a.sq", "--set", "w=1,2,3"), "a.sq --set w=1,2,3"),
])
def test_arms_that_draw_nothing_are_pointed_at_a_sweep(tmp_path, args, how):
    _write(tmp_path, a=CONST, b=CONST.replace("let w = 1;", "let w = 2;"))
    r = _serq(tmp_path, "compare", *args, "--seeds", "1", "--workers", "0", "--no-progress")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [NEW.format(how=how)]


def test_the_sweep_it_names_compares_the_arms(tmp_path):
    """The command said runs, one row an arm: 2 sessions at 0 on one FIFO server, each of work w, wait
    (0 + w) / 2 and service w, by hand."""
    _write(tmp_path, a=CONST)
    r = _serq(tmp_path, "sweep", "a.sq", "--set", "w=1,2,3", "--seeds", "1", "--workers", "0", "--no-progress")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(row["w"], float(row["stages.s.service"]), float(row["stages.s.wait"])) for row in rows] == [
        ("1", 1.0, 0.5), ("2", 2.0, 1.0), ("3", 3.0, 1.5)]


@pytest.mark.parametrize("b", [
    CONST.replace("batch(2)", "poisson(1)"),  # random arrivals
    CONST.replace("run s (w);", "run s (~exp(w));"),  # a draw
    CONST.replace("run s (w);", "run s (nosuch);"),  # no program: the seeds' refusal, not its error
])
def test_arms_that_draw_or_do_not_compile_keep_the_seeds_refusal(tmp_path, b):
    _write(tmp_path, a=CONST, b=b)
    r = _serq(tmp_path, "compare", "a.sq", "b.sq", "--seeds", "1", "--workers", "0", "--no-progress")
    assert r.returncode == 2 and r.stderr.splitlines() == [OLD]


def test_the_api_says_it_in_its_arguments(tmp_path):
    _write(tmp_path, a=CONST)
    with pytest.raises(UsageError) as e:
        pairing.compare(str(tmp_path / "a.sq"), sets={"w": [1, 2]}, seeds=[1], workers=0)
    assert str(e.value) == ("error: compare() needs two or more seeds for its CIs, and no arm here draws a random "
                            "number (no draw, no Poisson arrivals, no trace sampled): every seed runs the same run, "
                            "so one seed's figures are exact and there are no CIs to give; sweep() of the same arms "
                            "with seeds=[1] compares the arms' figures")
