"""Known defects, round 36, in serq-sim.

1. A horizon of inf bounds nothing: ``serq_sim.run(program, horizon=math.inf)`` of a workload that starts
   sessions for ever (an open one without a count of arrivals, a closed population) ran until the process was
   killed, where the same call without a horizon is refused (test_api_endless_runs). It is refused the same
   way, the horizon given to run() or in the run block; ``serq run --horizon inf`` of such a program warned
   that the run has no end and ran for ever: it is refused too unless --max-events or --max-wall bounds it
   (docs/simulator.md, docs/language.md "A run needs a horizon where it runs").
"""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim

# ---------------------------------------------------------------- 1. a horizon of inf is no bound

BODY = "stage s : delay;\nsession { run s (1); end; }\n"
ENDLESS = "and its workload never stops starting sessions: give horizon=T (math.inf with max_events or max_wall"


def _program(workload: str, run: str = ""):
    return serq_frontend.compile(source=f"workload {{ {workload} }}\n{BODY}{run}")


@pytest.mark.timeout(60)  # (before: the run never returned)
@pytest.mark.parametrize("workload", ["arrive poisson(2);", "arrive renewal(0.5);", "arrive closed(3);"])
def test_a_horizon_of_inf_given_to_run_is_no_bound(workload):
    with pytest.raises(ValueError) as info:
        serq_sim.run(_program(workload), horizon=math.inf)
    assert str(info.value) == f"run() was given horizon=inf, which is no bound, {ENDLESS}: until one of them stops it)"


@pytest.mark.timeout(60)
def test_a_horizon_of_inf_in_the_run_block_is_no_bound():
    with pytest.raises(ValueError, match="the program's run block gives horizon inf, which is no bound, and its "
                                         "workload never stops starting sessions"):
        serq_sim.run(_program("arrive poisson(2);", "run { horizon inf; }\n"))
    # a finite horizon given to run() bounds the run block's inf: the run ends there
    assert serq_sim.run(_program("arrive poisson(2);", "run { horizon inf; }\n"), horizon=4).result.end == 4.0


@pytest.mark.timeout(60)
def test_a_run_of_inf_that_something_ends_still_runs():
    p = _program("arrive poisson(2);")
    # a bound on its events: 50 events, partial
    r = serq_sim.run(p, horizon=math.inf, max_events=50)
    assert (r.partial, r.result.events) == ("max-events", 50)
    # a count of arrivals: three sessions of one unit each, drained, as without a horizon
    r = serq_sim.run(p, horizon=math.inf, arrivals=3)
    assert r.partial is None and (r.result.arrivals, r.result.ended) == (3, 3)
    assert r.result.end == serq_sim.run(p, arrivals=3).result.end
    # a batch ends when no event is left: four sessions of 1 at t = 0 end at 1
    r = serq_sim.run(_program("arrive batch(4);"), horizon=math.inf)
    assert (r.partial, r.result.end, r.result.ended) == (None, 1.0, 4)


CLI_PROGRAM = "stage f : fifo;\nworkload { arrive poisson(0.5); }\nsession { run f (1); }\nrun { horizon 10; }\n"
REFUSED = ("{file}: error: the run has no end: horizon inf and arrivals that never stop (`arrive poisson`), and no "
           "--max-events or --max-wall to stop it; give --arrivals N (or `arrivals N;` in the run block), a finite "
           "horizon, or --max-events N or --max-wall S (a partial report where it stops)\n")


def _serq(argv, capsys) -> tuple[int, str, str]:
    from serq.cli import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("given", [["--horizon", "inf"], ["--set", "x=1"]])
def test_serq_run_refuses_a_run_with_no_end_that_nothing_bounds(tmp_path, capsys, given):
    p = tmp_path / "p.sq"
    text = CLI_PROGRAM if given[0] == "--horizon" else "let x = 1;\n" + CLI_PROGRAM.replace("horizon 10", "horizon inf")
    p.write_text(text)
    code, out, err = _serq(["run", str(p), "--no-progress", *given], capsys)
    if given[0] == "--horizon":
        assert (code, out, err) == (1, "", REFUSED.format(file=p)), err
    else:  # the run block's horizon inf: the refusal points at it (test_no_end_at_the_run_block)
        said = REFUSED.format(file=p).removeprefix(f"{p}: error: ")
        assert (code, out, err) == (1, "", f"{p}:5:7: error: run {{ horizon inf; }}: {said}  run {{ horizon inf; }}\n"
                                           "        ^\n"), err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("bound", [["--max-events", "40"], ["--max-wall", "0.5"]])
def test_serq_run_with_a_bound_runs_and_warns(tmp_path, capsys, bound):
    p = tmp_path / "p.sq"
    p.write_text(CLI_PROGRAM)
    code, out, err = _serq(["run", str(p), "--no-progress", "--horizon", "inf", *bound], capsys)
    assert code == 3 and "run: PARTIAL" in out, (code, out, err)
    assert err.count("warning: the run has no end") == 1 and "error" not in err, err


# ---------------------------------------------------------------- 4. a family's policies are judged once a class
#
# A family of 10**5 pools took some 11 s and 640 MB to build: each member's eviction order and preemption policy
# was looked up in its registry, and judged serQ's own or a third party's (guards.check_policy, build's test of
# plugins), once a member, 2 * 10**5 times. What every member of a family shares is found once now (the factory
# once a node, the judgement once a class): the count of judgements does not grow with the family, and the report
# is the one it was (a family of 1 000: 12.8 M calls against 6.6 M, docs/performance.md).

FAMILY = """pool kv[{n}] {{ cap 100; block 16; evict lru; }}
stage s : delay;
workload {{ arrive batch(3); }}
session {{ hold kv[serial % {n}] (10) {{ run s (1); }} }}
run {{ horizon 50; seed 1; }}
"""


def test_a_familys_policies_are_judged_once_a_class(monkeypatch):
    from serq_sim import build, guards

    judged: list = []
    real = guards.first_party

    def counted(obj):
        judged.append(obj)
        return real(obj)

    monkeypatch.setattr(guards, "first_party", counted)
    monkeypatch.setattr(build, "first_party", counted)
    counts = []
    for n in (3, 300):
        judged.clear()
        r = serq_sim.run(serq_frontend.compile(source=FAMILY.format(n=n)))
        assert [p.admissions for p in r.result.pools[:3]] == [1, 1, 1]  # (each of the 3 sessions its member)
        counts.append(len(judged))
    assert counts[0] == counts[1] > 0, counts


def test_a_family_runs_as_it_did_on_both_tiers(monkeypatch):
    from tiers import same_json

    # three sessions at 0 on members 0, 1, 2 of a family of 5, each holding 10 of 100 (a block of 16) for its
    # delay of 1, of a horizon of 50
    r = same_json(serq_frontend.compile(source=FAMILY.format(n=5)), monkeypatch)
    pools = r["pools"]
    assert [(p["index"], p["admissions"]) for p in pools] == [(0, 1), (1, 1), (2, 1), (3, 0), (4, 0)]
    assert [(p["used"], p["holders"]) for p in pools] == [(16 / 50, 1 / 50)] * 3 + [(0.0, 0.0)] * 2


# ---------------------------------------------------------------- 6. serq_sim.run quotes a def body too
#
# A run-time error in the body of a definition given to serq_frontend.compile(defs=…) was placed at
# ``defs['m']:1:5`` and quoted nothing, where ``serq run --def`` quotes the body's line with a caret
# (test_known_defects_round34): the compile notes the bodies with the program (serq_ir.folders.note_texts), and
# the run quotes from them, on both tiers. A copy of the program has no note: the place alone, as before.

DEF_PROGRAM = """def m() = 1;
stage server : fifo;
workload { arrive poisson(1); }
session { run server (m()); end; }
run { horizon 10; warmup 0; seed 1; }
"""


def test_an_api_run_time_error_in_a_def_body_quotes_the_body(tmp_path, monkeypatch):
    import msgspec
    from tiers import same_error

    (tmp_path / "p.sq").write_text(DEF_PROGRAM)
    monkeypatch.chdir(tmp_path)
    program = serq_frontend.compile("p.sq", defs={"m": "1 + ~exp(now - 1)"})
    message = same_error(program, monkeypatch)
    assert message.splitlines()[:3] == [
        "defs['m']:1:5: error: at t=0, session 0: ~exp(-1): the mean is negative",
        "  1 + ~exp(now - 1)",
        "      ^",
    ], message
    assert "p.sq:4:23: note: in the expansion of `m`, used here\n  session { run server (m()); end; }\n" in message
    # a copy has no note of the bodies: the place alone
    copy = msgspec.structs.replace(program, run=program.run)
    with pytest.raises(serq_sim.SimError) as info:
        serq_sim.run(copy)
    assert str(info.value).splitlines()[:2] == [
        "defs['m']:1:5: error: at t=0, session 0: ~exp(-1): the mean is negative",
        "p.sq:4:23: note: in the expansion of `m`, used here"], str(info.value)


# ---------------------------------------------------------------- 7. the records kept under a warm-up are views
#
# Records.arrays() under a warm-up took the kept rows by a mask, a copy of every column; the rows kept are a run
# of rows (by `time` always: rows are written in time order), so they are a slice of the run's buffers now. The
# values are those of the run without a warm-up, the rows with a key at or after it.

RECORDS = """stage s : fifo;
workload { arrive poisson(2); }
session { set t0 = now; run s (~exp(1)); record r { sent = t0; wait = now - t0; } end; }
run { horizon 40; seed 3; }
"""

RECORDS_BY_TIME = RECORDS.replace("sent = t0; ", "")


@pytest.mark.parametrize("source, key", [(RECORDS_BY_TIME, "time"), (RECORDS, "sent")])
def test_records_under_a_warm_up_are_the_rows_after_it(monkeypatch, source, key):
    import numpy as np

    program = serq_frontend.compile(source=source)
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        whole = serq_sim.run(program, warmup=0).records(kind="numpy")
        table = serq_sim.run(program, warmup=10).record_table()
        kept = table.frame("numpy")
        rows = whole[key] >= 10
        assert 0 < rows.sum() < len(rows)
        assert list(kept) == list(whole)
        for name in whole:
            assert np.array_equal(kept[name], whole[name][rows]), name
            assert not kept[name].flags.writeable
        # a run of rows: the float columns are views of the run's buffers, not copies
        buffers = table._table
        assert np.shares_memory(kept["time"], np.frombuffer(buffers.times))
        assert np.shares_memory(kept["wait"], np.frombuffer(buffers.values[buffers.columns.index("wait")]))


# ---------------------------------------------------------------- 10. the not-steady warning of a finite run
#
# A finite run that drains (`arrivals N`) is judged over its bins up to its last arrival; one whose service
# keeps up is not warned (M/M/1 at rho 0.25, 400 arrivals), and one whose backlog climbs until its last arrival
# (rho 2: the arrivals' mean 0.5 s apart, a service of 1 s) is, in words of its own: its backlog grows until
# its last arrival and then drains, not "a queue that grows without bound" as a run to its horizon's does.

FINITE = """stage svc : fifo;
workload {{ arrive poisson({rate}); }}
session {{ run svc (~exp(1)); }}
run {{ horizon 2000; arrivals 400; seed 1; }}
"""


def test_a_finite_run_is_warned_in_its_own_words(monkeypatch):
    from tiers import same_json

    kept_up = same_json(serq_frontend.compile(source=FINITE.format(rate=0.25)), monkeypatch)
    assert not [n for n in kept_up["notes"] if "not steady" in n]
    over = same_json(serq_frontend.compile(source=FINITE.format(rate=2)), monkeypatch)
    (note,) = [n for n in over["notes"] if "not steady" in n]
    assert "grows without bound" not in note
    assert note.endswith("Arrivals outpace the service up to the last of them (the backlog drains after it), or "
                         "the warm-up is too short: the figures are of that climb, not of a steady state, and the "
                         "means depend on how many arrive (`arrivals 400`)"), note


# ---------------------------------------------------------------- 1. a trace does not end an open workload
#
# serq_sim.run took a workload with a trace for one that ends with it, so `arrive poisson` beside a trace of two
# sessions, run without a horizon (or at inf), never returned: each arrival replays a trace session, the last
# one passed again from the first (docs/language.md). It is refused as any open workload is, and serq run says
# the run has no end.


@pytest.mark.timeout(60)  # (before: the run never returned)
def test_an_open_workload_with_a_trace_is_refused_too(tmp_path, monkeypatch, capsys):
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n0,1,5,1,0.1,0\n1,1,5,1,0.1,0\n")
    (tmp_path / "p.sq").write_text('stage s : delay;\nworkload { arrive poisson(1); trace "t.csv"; }\n'
                                   "session { turn; run s (new); end; }\nrun { horizon 10; }\n")
    monkeypatch.chdir(tmp_path)
    program = serq_frontend.compile("p.sq")
    with pytest.raises(ValueError, match="run\\(\\) was given horizon=inf, which is no bound, and its workload never "
                                         "stops starting sessions"):
        serq_sim.run(program, horizon=math.inf)
    # bounded, it runs: one session a second, each replaying a trace session
    r = serq_sim.run(program, horizon=math.inf, arrivals=5)
    assert (r.partial, r.result.arrivals, r.result.ended) == (None, 5, 5)
    code, out, err = _serq(["run", "p.sq", "--no-progress", "--horizon", "inf"], capsys)
    assert code == 1 and "the run has no end: horizon inf and arrivals that never stop (`arrive poisson`)" in err
