"""Known defects of serq-sweep, round 22.

1. A run that failed in ``serq sweep``, ``serq compare`` or ``serq sweep --find`` named its point, not that a
   value of the point came from ``--set``, where ``serq run --set P=-1`` notes ``note: `P` is -1, given by
   --set P`` after a run-time error: each notes its point's ``--set`` values the same way
   (serq.loading.set_notes), before the line naming the point and seed; so does a run setting the values make
   wrong (a horizon ``--set`` gave below ``--warmup``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = [sys.executable, "-c", "from serq.cli import main; main()"]

# at t=1 (renewal(1)) session 0 runs s for P: a negative work when P < 0
PLAIN = """let P = 1;
let N = 1;
stage s : fifo(N);
workload {
  arrive renewal(1);
}
session {
  set t0 = now;
  run s (P + serial * 0);
  observe response = now - t0;
}
run { horizon 10; }
"""
ERROR = ["p.sq:9:3: error: at t=1, session 0: the run's work is negative (-1)", "    run s (P + serial * 0);",
         "    ^"]


def serq(tmp_path, *args) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PLAIN)
    return subprocess.run([*SERQ, *args, "--no-progress", "--workers", "0"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)


def test_a_sweeps_failed_run_notes_its_sets(tmp_path):
    r = serq(tmp_path, "sweep", "p.sq", "--set", "P=-1", "--set", "N=2", "--seeds", "5..6", "-o", "t.csv")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    first = lines.index("error: 2 run(s) failed; the first:")
    assert lines[first + 1:] == [*ERROR, "note: `P` is -1, given by --set P", "note: `N` is 2, given by --set N",
                                 "(at the sweep's point P=-1, N=2, seed 5)"]


def test_a_comparisons_failed_run_notes_the_arms_value(tmp_path):
    r = serq(tmp_path, "compare", "p.sq", "--set", "P=-1,-2", "--seeds", "1..2")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == ["error: 4 run(s) failed; the first:", *ERROR,
                                     "note: `P` is -1, given by --set P", "(at the sweep's point P=-1, seed 1)"]


def test_a_capacity_searchs_failed_run_notes_the_sets(tmp_path):
    r = serq(tmp_path, "sweep", "p.sq", "--set", "P=-1", "--find", "response.mean <= 1", "--over", "N", "1:3:1")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [*ERROR, "note: `P` is -1, given by --set P",
                                     "(at N=1 of the capacity search, P=-1, seed 1)"]


def test_a_run_setting_the_sets_make_wrong_notes_them(tmp_path):
    (tmp_path / "h.sq").write_text(PLAIN.replace("horizon 10", "horizon H").replace("let N = 1;", "let N = 1;\nlet H = 10;"))
    r = serq(tmp_path, "sweep", "h.sq", "--set", "H=5", "--warmup", "8")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == ["h.sq: error: --warmup 8: warmup 8 is not below the horizon 5",
                                     "note: `H` is 5, given by --set H", "(at the sweep's point H=5)"]


def test_the_python_api_names_its_argument(tmp_path):
    import serq_sweep
    from serq.errors import UserError

    (tmp_path / "p.sq").write_text(PLAIN)
    with pytest.raises(UserError) as info:
        serq_sweep.compare(str(tmp_path / "p.sq"), sets={"P": [-1, -2]}, seeds="1..2", workers=0, progress=False)
    assert str(info.value).splitlines()[-2:] == ["note: `P` is -1, given by sets['P']",
                                                 "(at the sweep's point P=-1, seed 1)"]


# 2. serq compare labelled an arm by its value alone (`3000 - 8010`): the heading, `arm` and `base` of --out and
#    of compare()'s frame name the swept name (`blocks=3000`); two FILEs stay labelled by the files.

BLOCKS = """let blocks = 8010;
stage s : fifo;
workload {
  arrive renewal(1);
}
session {
  set t0 = now;
  run s (blocks / 16000);
  observe response = now - t0;
}
run { horizon 10; }
"""


def test_compare_names_the_swept_name_in_its_labels(tmp_path):
    (tmp_path / "b.sq").write_text(BLOCKS)
    r = subprocess.run([*SERQ, "compare", "b.sq", "--set", "blocks=8010,3000", "--seeds", "1..2", "--figure",
                        "response.mean", "-o", "c.csv", "--no-progress", "--workers", "0"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "blocks=3000 - blocks=8010, paired over 2 seeds (95 % CIs):"
    # renewal(1) with service blocks/16000 < 1: no wait, the response is the service, 3000/16000 and 8010/16000
    assert (tmp_path / "c.csv").read_text().splitlines()[1] == (
        "blocks=3000,blocks=8010,observes.response.mean,2,0.500625,0.1875,-0.313125,0.0,0.0,,2,2")


def test_compares_frame_and_two_files_labels(tmp_path):
    import serq_sweep

    (tmp_path / "b.sq").write_text(BLOCKS)
    (tmp_path / "c.sq").write_text(BLOCKS.replace("8010", "3000"))
    d = serq_sweep.compare(str(tmp_path / "b.sq"), defs=None, sets={"blocks": [8010, 3000]}, seeds="1..2",
                           workers=0, progress=False, figures=["response.mean"])
    assert list(d["arm"]) == ["blocks=3000"] and list(d["base"]) == ["blocks=8010"]
    d = serq_sweep.compare([str(tmp_path / "b.sq"), str(tmp_path / "c.sq")], seeds="1..2", workers=0,
                           progress=False, figures=["response.mean"])
    assert list(d["arm"]) == [str(tmp_path / "c.sq")] and list(d["base"]) == [str(tmp_path / "b.sq")]


# 3. serq compare --figure mean --figure response.mean compared the one figure they name once, silently, where
#    --figure F --figure F is refused: two names of one figure are refused too (status 2, both spellings), before
#    the runs, and after them when no probe could resolve the names before.

def test_compare_refuses_two_names_of_one_figure(tmp_path):
    (tmp_path / "b.sq").write_text(BLOCKS)
    r = subprocess.run([*SERQ, "compare", "b.sq", "--set", "blocks=8010,3000", "--seeds", "1..2", "--figure",
                        "mean", "--figure", "events", "--figure", "response.mean", "-o", "c.csv", "--no-progress",
                        "--workers", "0"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stdout == "" and not (tmp_path / "c.csv").exists()
    assert r.stderr == ("error: --figure mean and --figure response.mean: both name the figure "
                        "observes.response.mean (give it once)\n")


def test_compares_api_refuses_them_in_its_arguments(tmp_path):
    import serq_sweep
    from serq.errors import UsageError

    (tmp_path / "b.sq").write_text(BLOCKS)
    with pytest.raises(UsageError) as info:
        serq_sweep.compare(str(tmp_path / "b.sq"), sets={"blocks": [8010, 3000]}, seeds="1..2", workers=0,
                           progress=False, figures=["observes.response.mean", "response.mean"])
    assert str(info.value) == ("error: figures=observes.response.mean and figures=response.mean: both name the "
                               "figure observes.response.mean (give it once)")


def test_the_comparison_of_a_table_refuses_them_too(tmp_path):
    from serq.errors import UsageError
    from serq_sweep import pairing

    (tmp_path / "b.sq").write_text(BLOCKS)
    plan = pairing.arms_plan([str(tmp_path / "b.sq")], sets={"blocks": [1, 2]}, seeds="1..2")
    columns = ["point", "blocks", "seed", "status", "message", "key", "observes.response.mean", "events"]
    table = [{"point": p.index, "blocks": p.index + 1, "seed": s, "status": "ok", "message": "", "key": f"k{p.index}{s}",
              "observes.response.mean": 1.0, "events": 3} for p in plan.points for s in plan.seeds]
    with pytest.raises(UsageError) as info:
        pairing.comparisons(plan, columns, table, ["mean", "events", "response.mean"])
    assert "--figure mean and --figure response.mean: both name the figure observes.response.mean" in str(info.value)
    rows, _ = pairing.comparisons(plan, columns, table, ["mean", "events"])  # one name each: compared in order
    assert [r["figure"] for r in rows] == ["observes.response.mean", "events"]


# 7. compare([]) said "no program to sweep" and find([], …) was an IndexError; aggregate of a frame of no rows
#    gave one row of runs 0, a point no sweep had: each call says there is no program in its own words, and no
#    run aggregates to no row, with the columns a sweep's points have.

@pytest.mark.parametrize("call, said", [(lambda s: s.sweep([]), "no program to sweep"),
                                        (lambda s: s.compare([]), "no program to compare"),
                                        (lambda s: s.find([], "x <= 1", ("N", "1:2")), "no program to search")])
def test_no_program_is_said_for_the_call(call, said):
    import serq_sweep
    from serq.errors import UserError

    with pytest.raises(UserError) as info:
        call(serq_sweep)
    assert str(info.value) == f"error: {said}"


def test_aggregate_of_no_run_is_no_row(tmp_path):
    import pandas as pd
    import serq_sweep

    assert serq_sweep.aggregate(pd.DataFrame()).to_dict("list") == {"runs": []}
    (tmp_path / "b.sq").write_text(BLOCKS)
    frame = serq_sweep.sweep(str(tmp_path / "b.sq"), sets={"blocks": [8010, 3000]}, workers=0, progress=False)
    full = serq_sweep.aggregate(frame)
    assert list(full["observes.response.mean:mean"]) == [8010 / 16000, 3000 / 16000]
    empty = serq_sweep.aggregate(frame.iloc[0:0])
    assert len(empty) == 0 and list(empty.columns) == list(full.columns)
    assert list(empty.columns)[:3] == ["point", "blocks", "runs"]
