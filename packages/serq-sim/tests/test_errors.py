"""Run-time errors: ``FILE:LINE:COL: error: at t=T, session N: MESSAGE``, the source line and a caret."""

from __future__ import annotations

import math

import pytest
import serq_sim
from irb import P, b, draw
from serq_ir import nodes as N

SRC = "workload { arrive batch(1); }\nsession {\n  branch (g) { end; }\n  hold p (u) { }\n}\n"


@pytest.fixture
def src(tmp_path):
    f = tmp_path / "prog.sq"
    f.write_text(SRC)
    return str(f)


def test_branch_guard_not_0_or_1(src):
    p = P()
    sp = N.Span(file=src, line=3, col=3)
    prog = p.build([p.set_("g", 0.5), N.Branch(guard=p.ex("g"), then=[N.End()], span=sp)],
                   arrive=N.Batch(n=1), source=src)
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    msg = str(e.value)
    assert msg.splitlines()[0] == f"{src}:3:3: error: at t=0, session 0: branch guard is 0.5, not 0 or 1 " \
                                  "(a draw is written `branch with (p)`)"
    assert msg.splitlines()[1] == "    branch (g) { end; }"
    assert msg.splitlines()[2] == "    ^"


def test_nan_units(src):
    p = P()
    pool = p.pool("p", cap=10.0)
    sp = N.Span(file=src, line=4, col=3)
    prog = p.build([p.set_("u", b("-", math.inf, math.inf)),
                    N.Hold(pools=[N.HoldPool(pool=pool, units=p.ex("u"))], body=[], span=sp)],
                   arrive=N.Batch(n=2), source=src)
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    assert str(e.value).startswith(f"{src}:4:3: error: at t=0, session 0: the units of p are NaN")


@pytest.mark.parametrize("k", ["nan", "inf"])
def test_erlang_of_nan_or_infinite_phases_is_an_error(src, k):
    # found by fuzzing the IR: int(k) raised ValueError / OverflowError out of the run; then it was NaN
    # work; now the draw refuses its parameters (serq_ir.rules.draw_problem)
    p = P()
    s = p.stage("s", N.Delay())
    sp = N.Span(file=src, line=4, col=3)
    setk = p.set_("k", b("-", math.inf, math.inf) if k == "nan" else "inf")
    prog = p.build([setk, N.Run(stages=[s], work=draw("erlang", p.ex("k"), 1.0), span=sp)],
                   arrive=N.Batch(n=1), source=src)
    for tier in ("fast", "general"):
        want = ("a parameter is NaN" if k == "nan"
                else "the number of phases must be a whole number of at least 1")
        with pytest.raises(serq_sim.SimError,
                           match=rf"^{src}:4:3: error: at t=0, session 0: ~erlang\({'NaN' if k == 'nan' else 'inf'}, 1\): {want}"):
            serq_sim.run(prog, check_invariants=tier == "general")


def test_h2_of_an_infinite_mean_is_infinite():
    # found by fuzzing the IR: the rate 2q / mean was 0, a ZeroDivisionError out of the run
    p = P()
    s = p.stage("s", N.Delay())
    t = p.stage("t", N.Fifo())
    prog = p.build([p.set_("x", draw("h2", math.inf, 4.0)), p.observe("x", "x"), p.run(s, 1.0), p.run(t, 1.0)],
                   arrive=N.Batch(n=1))
    for tier in ("fast", "general"):
        r = serq_sim.run(prog, check_invariants=tier == "general")
        assert r.tier == tier and list(r.observe("x").values) == [math.inf]


def test_renewal_gap_must_be_positive(src):
    # a computed gap (a constant one is refused before the run: serq_ir.rules.gap_problem)
    p = P()
    gap = N.Binary(op="*", lhs=N.Num(value=0.0), rhs=N.Num(value=1.0), span=N.Span(file=src, line=1, col=19))
    prog = p.build([], arrive=N.Renewal(gap=gap), horizon=10.0, source=src)
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    assert str(e.value).startswith(f"{src}:1:19: error: at t=0: arrive renewal: the gap is 0; gaps must be "
                                   "positive and finite")


def test_bad_trace_row(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_PATH", str(tmp_path))  # a program without a source reads traces there too
    csv = tmp_path / "t.csv"
    csv.write_text("session,turn,new,out,think,forced\n0,1,100,5,0,0\n0,2,12x,5,0,0\n")
    p = P()
    p.trace_attrs()
    prog = p.build([N.Turn()], arrive=N.Batch(n=1), trace=N.Trace(path=str(csv)))
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    # at the cell's line and column, the line quoted with a caret under the cell, indented as a source's line
    assert str(e.value) == f"{csv}:3:5: error: column new: '12x' is not a number\n  0,2,12x,5,0,0\n      ^"


def test_a_trace_that_cannot_be_read(tmp_path):
    # named by the program: reported at the workload's trace clause, with the source line and a caret;
    # given as --trace: reported with the file's name alone (there is no clause to point at)
    import serq_frontend

    f = tmp_path / "tr.sq"
    f.write_text('stage s : delay;\nworkload { trace "nope.csv"; }\nsession { turn; run s (new); }\n'
                 "run { horizon 10; }\n")
    prog = serq_frontend.compile(str(f), sets={}, defs={})
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    lines = str(e.value).splitlines()
    assert lines[0].startswith(f"{f}:2:12: error: cannot read the trace {tmp_path / 'nope.csv'}: ")
    assert lines[1:] == ['  workload { trace "nope.csv"; }', "             ^"]
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog, trace=str(tmp_path / "other.csv"))
    assert str(e.value).startswith(f"{tmp_path / 'other.csv'}: error: cannot read the trace: ")


def test_cli_exits_1_with_the_message(tmp_path, src):
    import subprocess
    import sys

    import serq_ir

    p = P()
    sp = N.Span(file=src, line=3, col=3)
    prog = p.build([p.set_("g", draw("uniform", 0.2, 0.8)), N.Branch(guard=p.ex("g"), then=[], span=sp)],
                   arrive=N.Batch(n=1), source=src)
    f = tmp_path / "p.ir.json"
    f.write_text(serq_ir.encode_pretty(prog))
    r = subprocess.run([sys.executable, "-m", "serq", "run", str(f), "--no-progress"], capture_output=True,
                       text=True)
    assert r.returncode == 1
    assert r.stderr.startswith(f"{src}:3:3: error: at t=0, session 0: branch guard is 0.")
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("tier", ["general", ""])
def test_a_loop_that_never_waits_is_an_error(tmp_path, monkeypatch, tier):
    # the loop's head is passed SPIN_LIMIT + 1 times at t=0: session 0 never lets time pass. Both tiers
    # (this program is in the fast tier's class) give the same message at the loop's source position.
    f = tmp_path / "spin.sq"
    f.write_text("stage s : delay;\nworkload { arrive batch(1); }\nsession {\n  set x = 0;\n"
                 "  loop {\n    set x = x + 1;\n    branch (x < 0) { run s (1); } else { }\n  }\n}\n"
                 "run { horizon 10; }\n")
    import serq_frontend
    from serq_sim.compile import SPIN_LIMIT

    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(str(f), sets={}, defs={})
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    first = str(e.value).splitlines()[0]
    assert first == (f"{f}:5:3: error: at t=0, session 0: loop: {SPIN_LIMIT} passes at one instant without "
                     "simulated time passing (none of them reached a run, hold or grow that took time; a "
                     "`choose` of n candidates in it counts n passes)")


def test_a_loop_that_waits_at_times_is_not_an_error():
    # a loop whose passes wait now and then (the run of 1 every third pass) is fine, however long it runs
    p = P()
    d = p.stage("d", N.Delay())
    body = [p.set_("x", b("+", "x", 1.0, p)),
            N.Branch(guard=b("==", b("%", "x", 3.0, p), 0.0), then=[p.run(d, 1.0)], orelse=[])]
    prog = p.build([p.set_("x", 0.0), N.Loop(body=body)], arrive=N.Batch(n=2), horizon=5000.0)
    r = serq_sim.run(prog)
    assert r.result.end == 5000.0


def test_a_span_file_name_with_control_characters_is_printed_escaped():
    # found by fuzzing the IR at 2000 examples: a span naming "x\ny" split the one-line message in two (the
    # first line without "error:"); an IR is data, so its file names are printed with escapes
    p = P()
    sp = N.Span(file="x\ny\x1b[2J.sq", line=3, col=3)
    prog = p.build([p.set_("g", 0.5), N.Branch(guard=p.ex("g"), then=[N.End()], span=sp)], arrive=N.Batch(n=1))
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    assert str(e.value).splitlines()[0] == ("x\\ny\\x1b[2J.sq:3:3: error: at t=0, session 0: branch guard is 0.5, "
                                            "not 0 or 1 (a draw is written `branch with (p)`)")


@pytest.mark.parametrize("before, line, after, shown", [
    # the lines are counted as the parser counts them (at "\n" only): a form feed, a vertical tab, a
    # file separator or a Unicode line separator in an earlier comment does not shift the line quoted
    ("// a\x0cb\x0bc\x1cd\u2028e\u2029f\x85g\n", "  branch (g) { end; }", "", "  branch (g) { end; }"),
    # control characters in the line are escapes (an escape sequence would drive the terminal)
    ("", "  branch (g) { end; } // \x1b]0;title\x07\x1b[2J", "", "  branch (g) { end; } // \\x1b]0;title\\x07\\x1b[2J"),
    # a byte-order mark at the start is not part of the first line
    ("\ufeff", "  branch (g) { end; }", "", "  branch (g) { end; }"),
])
def test_the_line_a_run_time_error_quotes(tmp_path, before, line, after, shown):
    f = tmp_path / "prog.sq"
    f.write_text(before + line + after + "\n", encoding="utf-8")
    no = 1 + before.count("\n")
    p = P()
    prog = p.build([p.set_("g", 0.5), N.Branch(guard=p.ex("g"), then=[N.End()], span=N.Span(file=str(f), line=no,
                                                                                              col=3))],
                   arrive=N.Batch(n=1), source=str(f))
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    lines = str(e.value).splitlines()
    assert lines[1:] == [f"  {shown}", "    ^"]


def test_a_long_line_a_run_time_error_quotes_is_cut_around_the_caret(tmp_path):
    f = tmp_path / "prog.sq"
    f.write_text("// " + "x" * 300_000 + " branch (g) { end; } // " + "y" * 300_000 + "\n")
    col = 3 + 300_000 + 2
    p = P()
    prog = p.build([p.set_("g", 0.5), N.Branch(guard=p.ex("g"), then=[N.End()], span=N.Span(file=str(f), line=1,
                                                                                              col=col))],
                   arrive=N.Batch(n=1), source=str(f))
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    lines = str(e.value).splitlines()
    assert len(lines) == 3 and len(lines[1]) == 2 + 3 + 200 + 3
    shown, caret = lines[1][2:], lines[2].index("^") - 2
    assert shown.startswith("...x") and shown.endswith("y...") and shown[caret: caret + 6] == "branch"
