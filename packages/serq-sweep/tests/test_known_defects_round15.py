"""Known defects, round 15 (serq-sweep)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import serq_sweep
from serq_sim.errors import SimError

pytestmark = pytest.mark.timeout(60)

SERQ = [sys.executable, "-c", "from serq.cli import main; main()"]


def serq(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([*SERQ, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


# --- a trace given to a program without a trace clause is named as the caller gave it ---------------------
#
# docs/sweep.md: the Python API's messages name its arguments (horizon=5, over=('B', '1:8')), the command
# line's its options. The refusal of a trace with nothing to replace said `--trace FILE` to a caller of
# sweep(trace=...), find(trace=...) and compare(trace=...), who gave no flag.

PLAIN = """let N = 1;
stage gpu : fifo(N);
workload { arrive poisson(2); }
session { run gpu (0.1); }
run { horizon 20; }
"""
TRACE = "session,turn,new,out,think,forced\n1,1,10,2,0,0\n"
TAIL = ": the program's workload reads no trace (no `trace \"FILE\"` clause) for it to replace"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "plain.sq").write_text(PLAIN)
    (tmp_path / "week.csv").write_text(TRACE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_sweep_find_and_compare_name_the_argument_trace(folder):
    want = "plain.sq: error: trace=week.csv" + TAIL
    with pytest.raises(SimError) as e:
        serq_sweep.sweep("plain.sq", trace="week.csv", workers=0)
    assert str(e.value) == want
    with pytest.raises(SimError) as e:
        serq_sweep.find("plain.sq", "turns >= 1", ("N", "1:4:1"), trace="week.csv", workers=0)
    assert str(e.value) == want
    with pytest.raises(SimError) as e:
        serq_sweep.compare("plain.sq", sets={"N": [1, 2]}, trace="week.csv", workers=0)
    assert str(e.value) == want


def test_the_command_line_still_names_the_option(folder):
    want = "plain.sq: error: --trace week.csv" + TAIL + "\n"
    for args in (["sweep", "plain.sq", "--trace", "week.csv"],
                 ["sweep", "plain.sq", "--find", "turns >= 1", "--over", "N", "1:4:1", "--trace", "week.csv"],
                 ["compare", "plain.sq", "--set", "N=1,2", "--trace", "week.csv"]):
        r = serq(*args, "--workers", "0", cwd=folder)
        assert (r.returncode, r.stdout, r.stderr) == (1, "", want), args


# --- a search that holds at both ends says that its value is the top of the range ---------------------------
#
# docs/sweep.md: a condition that holds at both ends is `holds_everywhere` with the value HI, the largest
# value of the range that holds; the fewest needed is LO or below. The search evaluates the two ends only and
# cannot tell a question of the most (an arrival rate) from one of the fewest (engines), so the value stays
# HI, as the docs promise, and a note says which end answers which question.
#
# By hand: arrivals every 0.5 s (renewal), each job 1 s on fifo(N). One server is offered twice its capacity
# (the response grows without bound); two or more serve every job at once on arrival: the response is 1 s
# exactly. So `observes.r.mean <= 1` fails at N=1 and holds from N=2 on.

FLEET = """let N = 1;
let lam = 2;
stage gpu : fifo(N);
workload { arrive renewal(1 / lam); }
session { set t0 = now; run gpu (1); observe r = now - t0; }
run { horizon 50; }
"""
COND = "observes.r.mean <= 1"


def note(lo, hi, at=""):
    return (f"note: holds_everywhere{at}: the conditions hold at both ends, N={lo} and N={hi}: the value reported "
            f"is the top, N={hi}, the largest that holds; the smallest that holds is N={lo} or below (for the "
            f"fewest, give a LO at which the conditions fail); no crossing in the range, or an even number of them, "
            "where the conditions are not monotone in N: the search evaluated the ends alone, so they may fail "
            "between them\n")


def test_holds_everywhere_reports_the_top_and_says_so(tmp_path, capsys):
    (tmp_path / "fleet.sq").write_text(FLEET)
    r = serq("sweep", "fleet.sq", "--find", COND, "--over", "N", "2:4:1", "--workers", "0", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # (then the condition's mean there: the response is 1 s exactly from N=2 on)
    assert r.stdout.split("\n")[1].split() == ["4", "holds_everywhere", "4", "nan", "2", "1"], r.stdout
    assert r.stderr == note(2, 4)
    # from Python: the same rows, the same note
    cols, rows = serq_sweep.find(str(tmp_path / "fleet.sq"), COND, ("N", "2:4:1"), workers=0, progress=False)
    assert [(x["N"], x["outcome"], x["holds"]) for x in rows] == [(4, "holds_everywhere", 4)]
    assert capsys.readouterr().err == note(2, 4)
    # the point of each search named when other names are swept; a point whose search finds a boundary is not
    cols, rows = serq_sweep.find(str(tmp_path / "fleet.sq"), COND, ("N", "2:4:1"), sets={"lam": [2, 4]}, workers=0,
                                 progress=False)
    # (lam 4: arrivals every 0.25 s need four servers; three are offered 4/3 of their capacity)
    assert [(x["lam"], x["N"], x["outcome"]) for x in rows] == [(2, 4, "holds_everywhere"), (4, 4, "found_smallest")]
    assert capsys.readouterr().err == note(2, 4, " at lam=2")


def test_the_other_outcomes_have_no_note(tmp_path):
    (tmp_path / "fleet.sq").write_text(FLEET)
    r = serq("sweep", "fleet.sq", "--find", COND, "--over", "N", "1:4:1", "--workers", "0", cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.split("\n")[1].split() == ["2", "found_smallest", "2", "1", "3", "1"], r.stdout
