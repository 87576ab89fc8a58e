"""A trace's columns before and after `turn;` (peer programs, round 20: a capacity planner replaying a trace of
multi-turn sessions through lib/vllm.sq).

The planner's session began with `loop { set prompt = K + new; … }` and called `turn;` only at the end of
each pass: its first request read the trace's `new` before any row was loaded, a prompt of 0 tokens, and the
run stopped inside lib/vllm.sq with "the run's work is negative (-1)", far from the cause. The linker now
warns at the first read of a trace column that some path reaches before any `turn;` (link.Unloaded), naming
the column and the others read so. The semantics themselves are pinned by hand against a trace of two rows:
every column reads 0 before the first `turn;`, `more` is 1 while the session's trace has a row after the
one loaded and 0 at its last, and a `turn;` past the last row loads nothing (the columns keep the last
row's values, `more` stays 0, `turn_no` still counts), on both tiers."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from tiers import run_on_tier

pytestmark = pytest.mark.timeout(60)

TRACE = "session,turn,new,out,think,forced\n0,1,10,5,2,0\n0,2,20,6,3,0\n"

HEAD = """stage s : delay;

workload {
  arrive renewal(1);
  trace "t.csv" ordered;
%s}
"""
TAIL = "\nrun { horizon 100; warmup 0; arrivals 1; }\n"


def program(tmp_path: Path, session: str, workload: str = "") -> Path:
    (tmp_path / "t.csv").write_text(TRACE)
    p = tmp_path / "p.sq"
    p.write_text(HEAD % workload + "\nsession {\n" + session + "}\n" + TAIL)
    return p


def warnings_of(tmp_path: Path, capsys, session: str, workload: str = "") -> str:
    capsys.readouterr()
    serq_frontend.compile(program(tmp_path, session, workload))
    return located(capsys.readouterr().err)


def located(err: str) -> str:
    """The warnings with the program's folder left out of their places (``p.sq:LINE:COL``)."""
    return err[err.index("p.sq:"):] if "p.sq:" in err else err


def test_a_session_without_its_first_turn_is_warned_at_the_read(tmp_path, capsys):
    # the planner's program, in small: `turn;` only at the end of each pass
    err = warnings_of(tmp_path, capsys, "  loop {\n    set prompt = 1 + new;\n    run s (out);\n"
                                        "    branch (more) {\n      run s (think);\n      turn;\n    } else {\n"
                                        "      end;\n    }\n  }\n")
    assert err.startswith("p.sq:10:22: warning: `new` is read before the session's first `turn;`, where it is 0 "
                          "(and so `out`, `think`, `more`): "), err
    assert err.endswith("\n      set prompt = 1 + new;\n                       ^\n"), err
    assert err.count("warning") == 1


@pytest.mark.parametrize("session", [
    # the first turn first: nothing to say
    "  turn;\n  loop {\n    run s (new);\n    branch (more) {\n      turn;\n    } else {\n      end;\n    }\n  }\n",
    # a turn on both arms of a branch before the read
    "  branch (serial == 0) {\n    turn;\n  } else {\n    turn;\n  }\n  run s (new);\n",
    # a column the session gave a value itself
    "  set new = 4;\n  run s (new);\n  turn;\n",
    # the hold's cache is read after its body, which turned
    "  hold p (1) {\n    turn;\n  } cache (new);\n",
    # an arm that ends does not reach the read
    "  branch (serial == 0) {\n    end;\n  } else {\n    turn;\n  }\n  run s (out);\n",
])
def test_reads_after_a_turn_on_every_path_are_not_warned(tmp_path, capsys, session):
    p = program(tmp_path, session)
    if "hold p" in session:
        p.write_text(p.read_text().replace("stage s : delay;", "stage s : delay;\npool p { cap 10; }"))
    capsys.readouterr()
    serq_frontend.compile(p)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("session", "workload", "at", "name"), [
    # one arm turns, the other reads on: the read is reached by a path with no turn
    ("  branch (serial == 0) {\n    turn;\n  }\n  run s (think);\n", "", "12:10", "think"),
    # init runs at arrival, before any turn
    ("  turn;\n", "  init {\n    set a = forced;\n  }\n", "7:13", "forced"),
    # a hold's header is read before its body turns
    ("  hold p (out) {\n    turn;\n  }\n", "", "10:11", "out"),
])
def test_reads_some_path_reaches_before_a_turn_are_warned(tmp_path, capsys, session, workload, at, name):
    p = program(tmp_path, session, workload)
    if "hold p" in session:
        p.write_text(p.read_text().replace("stage s : delay;", "stage s : delay;\npool p { cap 10; }"))
    capsys.readouterr()
    serq_frontend.compile(p)
    err = located(capsys.readouterr().err)
    assert err.startswith(f"p.sq:{at}: warning: `{name}` is read before the session's first `turn;`"), err


SESSION = """  observe n0 = new;
  turn;
  observe n1 = new;
  observe m1 = more;
  run s (think);
  turn;
  observe n2 = new;
  observe m2 = more;
  turn;
  observe n3 = new;
  observe o3 = out;
  observe m3 = more;
  observe k3 = turn_no;
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_what_each_turn_loads_by_hand(tmp_path, capsys, tier):
    p = program(tmp_path, SESSION)
    prog = serq_frontend.compile(p)
    assert "`new` is read before the session's first `turn;`" in capsys.readouterr().err
    _, outcome, _ = run_on_tier(prog, tier)
    assert outcome[0] == "report", outcome
    r = serq_sim.run(prog)
    got = {name: (float(r.observe(name).values[0]), float(r.observe(name).times[0])) for name in r.result.observes}
    # the session arrives at 1 (renewal(1)); row 1 (new 10, think 2) loads at its first turn, so the second
    # turn is at 1 + 2 = 3 and loads row 2 (new 20, out 6), its last; the third turn loads nothing
    assert got == {"n0": (0.0, 1.0), "n1": (10.0, 1.0), "m1": (1.0, 1.0), "n2": (20.0, 3.0), "m2": (0.0, 3.0),
                   "n3": (20.0, 3.0), "o3": (6.0, 3.0), "m3": (0.0, 3.0), "k3": (3.0, 3.0)}
