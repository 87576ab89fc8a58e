"""Known defects, round 31, in the frontend.

1. The live-state lint (stale.Taint) walked the workload's `turn` block again at every `turn;`: a session of
   n `turn;` and a block of n sets took n² steps (3 000 of each: 12 s to compile). The block is now walked
   once per state entering it, its effect kept; the verdicts are the same.
2. The unset-read and trace-column warnings (link.Unset, link.Unloaded) after a `branch with` one arm of
   which ends: the statement reaches those analyses as the plain branch it means (the branch_with layer
   writes `branch (~bernoulli(p))`), whose arms are walked apart, so a read after it is checked by the way of
   the arm that goes on. These pin that, for both warnings and both kinds of branch.
9. `D pull P latency inf share …;` (and a link's `serve … latency inf;`) linked, and every transfer waited for
   ever before it began: the run said nothing of it (its sessions held their pools to the horizon, no
   warning). A latency of inf is refused at it, as language.txt's "a number or a constant over lets" of the
   wait before each transfer means a finite one."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq_frontend import CompileError, stale

STALE = "is set from live pool or stage state"


def _turns_program(turns: int, sets: int) -> str:
    block = " ".join(f"set a{i} = {i};" for i in range(sets))
    return ("stage svc : fifo;\nworkload {\n  arrive batch(1);\n  turn { " + block + " }\n}\n"
            "session {\n" + "  turn;\n" * turns + "  run svc (1);\n  end;\n}\nrun { horizon 10; }\n")


def test_the_turn_block_is_walked_once_not_at_every_turn(monkeypatch):
    # 60 `turn;` and a block of 40 sets: every turn enters the block in the same state (nothing live), so
    # its 40 statements are walked once; at every turn they were walked again, 60 * 40 = 2 400 statements
    walked = []
    stmt = stale.Taint.stmt
    monkeypatch.setattr(stale.Taint, "stmt", lambda self, s, state: walked.append(s) or stmt(self, s, state))
    serq_frontend.compile(source=_turns_program(60, 40))
    assert len(walked) == 60 + 2 + 40, len(walked)  # the session's 62 statements, the block's 40 once


def test_a_hold_still_sees_what_a_turn_it_runs_again_set_inside_it():
    # the block sets `c` from live state, then from none: after the turn `c` is not live, but inside the
    # block it was, and a preemption runs the hold again from its header (the lint's rule). The turn inside
    # the hold enters the block as the first turn did (nothing live): its walk is the one kept, and what
    # the block saw inside it must still reach the hold's header
    src = ("pool kv { cap 10; }\nstage svc : fifo;\n"
           "workload { arrive batch(1); turn { set c = used(kv); set c = 1; } }\n"
           "session {\n  turn;\n  hold kv (c) { turn; }\n  end;\n}\n")
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=src)
    assert str(e.value).splitlines()[0] == (
        f"<source>:6:12: error: `c` {STALE} (at 3:36) and read in a hold's header: the header is read at "
        "admission, the set when the session queued; read the state in `at admission (…)` instead")


def test_turns_in_different_states_are_told_apart(capfd):
    # the second turn enters the block with `q` live (set from `used(kv)` by the session); the block's set of
    # `q` from nothing live ends that: the queue key reads no live state, as the first turn's walk found
    # for the state it entered in, and the verdict is the walk's for each state
    src = ("pool kv { cap 10; queue by (q); }\nstage svc : fifo;\n"
           "workload { arrive batch(1); turn { set p = q; set q = 1; } }\n"
           "session {\n  turn;\n  set q = used(kv);\n  turn;\n  hold kv (1) { run svc (1); }\n"
           "  observe x = p;\n  end;\n}\n")
    serq_frontend.compile(source=src)
    assert STALE not in capfd.readouterr().err


UNSET = "is read here before any statement sets it, so it reads 0"


def _warnings(capfd, source: str, path: Path | None = None) -> str:
    capfd.readouterr()
    if path is None:
        serq_frontend.compile(source=source)
    else:
        path.write_text(source)
        serq_frontend.compile(path)
    return capfd.readouterr().err


@pytest.mark.parametrize("branch", [
    "branch with (0.5) { end; } else { }",
    "branch with (0.5) { end; }",
    "branch with (0.5) { } else { end; }",
    "branch with (0.5) { set w = 1; } else { end; }",
    "branch (1 > 0) { end; } else { }",  # a plain branch went on already: the same rule
])
def test_a_read_after_a_branch_one_arm_of_which_ends_is_checked(capfd, branch):
    src = ("stage svc : fifo;\nworkload { arrive batch(1); }\nsession {\n  " + branch + "\n"
           "  observe x = y;\n  set y = 1;\n  end;\n}\n")
    err = _warnings(capfd, src)
    assert err.startswith(f"<source>:5:15: warning: `y` {UNSET} (an attribute is 0 until the session sets it; the "
                          "first statement that sets it is at 6:3)"), err


def test_a_branch_with_whose_arms_both_end_leaves_nothing_to_check(capfd):
    src = ("stage svc : fifo;\nworkload { arrive batch(1); }\nsession {\n  set y = 1;\n"
           "  branch with (0.5) { observe x = y; end; } else { end; }\n}\n")
    assert _warnings(capfd, src) == ""


def test_a_trace_column_read_after_a_branch_with_that_may_end_is_warned(capfd, tmp_path):
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n0,1,10,5,2,0\n")
    src = ("stage s : delay;\nworkload {\n  arrive renewal(1);\n  trace \"t.csv\" ordered;\n}\n"
           "session {\n  branch with (0.5) { end; } else { }\n  run s (new);\n  turn;\n  end;\n}\n")
    err = _warnings(capfd, src, tmp_path / "p.sq")
    assert err.startswith(f"{tmp_path / 'p.sq'}:8:10: warning: `new` is read before the session's first "
                          "`turn;`, where it is 0"), err


PULL = """queue P[2] : prefill {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  prefill (p) { hold kv (p) { run (p); } lease kv (inf); }
}
queue D[2] : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  decode (p) from src { hold kv (p) { transfer (p) from src to kv (p); } }
}
let x0 = 1;
D pull P latency LATENCY share maxmin;
queue gw : gateway { route { P[0].prefill (prompt); D[1].decode (prompt) from P[0]; } }
workload { arrive batch(1); init { set prompt = 32; } session { request gw; end; } }
run { horizon 1000; }
"""

LINK = ("queue L[2] : link { serve ps(10) latency LATENCY; }\npool a { cap 9; }\npool b { cap 9; }\n"
        "let x0 = 1;\nshare maxmin;\nstage M : ps(5);\nworkload { arrive none; }\n"
        "session { hold b (1) { transfer on L[1], M (3) from a to b (1); } }\n")

INF_LATENCY = ("is inf{}: every transfer would wait for ever before it began, and none would finish; a latency is a "
               "finite number of seconds (0 for none)")


@pytest.mark.parametrize("program, line, col, what", [
    (PULL, 14, 18, "the latency of `D pull P`"),
    (LINK, 1, 42, "the latency of link `L`"),
])
@pytest.mark.parametrize("latency", ["inf", "2 * inf"])
def test_a_latency_of_inf_is_refused_at_it(program, line, col, what, latency):
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=program.replace("LATENCY", latency))
    lines = str(e.value).splitlines()
    assert lines[0] == f"<source>:{line}:{col}: error: {what} " + INF_LATENCY.format(""), lines
    assert lines[2].index("^") == col + 1, lines


@pytest.mark.parametrize("program", [PULL, LINK])
def test_a_latency_of_inf_given_for_a_let_says_so(program):
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=program.replace("LATENCY", "x0"), sets={"x0": float("inf")})
    assert " (`x0` is inf, given in place of its `let` at " in str(e.value).splitlines()[0], str(e.value)


@pytest.mark.parametrize("program", [PULL, LINK])
@pytest.mark.parametrize("latency", ["0", "x0", "1e300"])
def test_a_finite_latency_links_as_before(program, latency):
    serq_frontend.compile(source=program.replace("LATENCY", latency))
