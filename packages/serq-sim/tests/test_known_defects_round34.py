"""Known defects, round 34, in serq-sim (run-time messages).

1. A run-time error in a ``--def`` body had no quoted line (``--def m:1:1: error: at t=0, session 0: …`` and
   nothing under it), where the compile's errors of the same body quote it: ``serq run`` now quotes the
   body it compiled, with the caret, as it quotes a file (serq.errors.texts_given, serq.loading.defs_quoted).
2. An IR file's spans name files relative to the folder it was compiled in; a run from another folder quoted
   the current folder's file of that name (another program's line) or nothing. The run reads them from the
   IR file's folder when every file they name is there, else from the current folder when every one is
   there, else quotes none (serq_sim.errors.span_folders).
3. A member index that names no member said ``pool index 2 out of range (the family has 2)``, not which
   family, where a statement may index several: ``pool q: index 2 …`` (serq_ir.rules.member_problem, every
   site: the general engine's pool_at/stage_at, the fast tier's generated code, a spill's tier, an IR file).
4. The report's warning of an ``evict by`` key that came out NaN named no session when the entry's session
   had ended, where a run-time error of the same key names the entry's owner (errors.of_entry): the NaN is
   noted for the entry's owner, living or ended (policies.evict_context's ``owner``, compile.nan_seen).
6. The not-steady warning fired on tiny ``arrivals N`` runs that are all ramp-up (pd_tiny.sq's four requests:
   "arrivals outpace the service"): the backlog is judged only when at least MIN_SAMPLES (40) sessions
   arrived over the bins judged (serq_sim.notes.steadiness); the few-samples warning says the rest.
7. The no-progress message mixed number formats for its times (``at t=9.88131e-320: … in 9.88e-320 s of
   simulated time since t=…``, ``%.3g`` and ``%.6g`` beside the errors' own): every time a message shows is
   serq_sim.errors.fmt_time's (the stall guards, the spin guard's clock, the report's warnings and notes).
"""

from __future__ import annotations

import pytest

DEF_PROGRAM = """\
def m() = 1;

stage server : fifo;

workload { arrive poisson(1); }

session {
  run server (m());
  end;
}

run { horizon 10; warmup 0; seed 1; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_run_time_error_in_a_def_body_quotes_the_body(serq, tmp_path, monkeypatch, tier):
    (tmp_path / "p.sq").write_text(DEF_PROGRAM)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq("run", "p.sq", "--no-progress", "--def", "m=1 + ~exp(now - 1)")
    assert r.returncode == 1
    assert r.stderr.splitlines()[:3] == [
        "--def m:1:5: error: at t=0, session 0: ~exp(-1): the mean is negative",
        "  1 + ~exp(now - 1)",
        "      ^",
    ], r.stderr
    # the note at the use quotes the file as before
    assert "p.sq:8:15: note: in the expansion of `m`, used here\n    run server (m());\n" in r.stderr
    # the body is quoted only while its run runs: the same span read afterwards names no text
    from serq.errors import source_excerpt

    assert source_excerpt("--def m", 1, 5) == ""


LIB = """\
def f() =
  ~exp(now - 5);
"""

LIB_PROGRAM = """\
use "lib.sq";

stage server : fifo;

workload { arrive poisson(1); }

session {
  run server (f());
  end;
}

run { horizon 10; warmup 0; seed 1; }
"""

#: what the run of LIB_PROGRAM's IR says, its lines quoted from the files it was compiled from
QUOTED = """\
lib.sq:2:3: error: at t=0, session 0: ~exp(-5): the mean is negative
    ~exp(now - 5);
    ^
p.sq:8:15: note: in the expansion of `f`, used here
    run server (f());
                ^
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_an_ir_file_run_from_another_folder_quotes_the_files_it_was_compiled_from(serq, tmp_path, monkeypatch,
                                                                                  tier):
    lu, elsewhere = tmp_path / "lu", tmp_path / "elsewhere"
    lu.mkdir()
    elsewhere.mkdir()
    (lu / "lib.sq").write_text(LIB)
    (lu / "p.sq").write_text(LIB_PROGRAM)
    # another program of the same name where the runs below are made and where an IR file is put
    (tmp_path / "p.sq").write_text("// another program\n" * 20)
    monkeypatch.chdir(lu)
    ir = serq("ir", "p.sq")
    assert ir.returncode == 0, ir.stderr
    (lu / "p.ir.json").write_text(ir.stdout)
    (tmp_path / "x.ir.json").write_text(ir.stdout)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    # the IR beside its sources, run from the parent folder (which has a p.sq of its own): the IR file's folder
    monkeypatch.chdir(tmp_path)
    r = serq("run", "lu/p.ir.json", "--no-progress")
    assert (r.returncode, r.stderr) == (1, QUOTED)
    # the IR elsewhere, run from the folder it was compiled in: the current folder (the IR's folder has a p.sq
    # but no lib.sq, so it is not the folder the IR was compiled in)
    monkeypatch.chdir(lu)
    r = serq("run", "../x.ir.json", "--no-progress")
    assert (r.returncode, r.stderr) == (1, QUOTED)
    # from a folder that has neither: the places alone, not another file's lines
    monkeypatch.chdir(elsewhere)
    r = serq("run", "../x.ir.json", "--no-progress")
    assert (r.returncode, r.stderr) == (1, "".join(QUOTED.splitlines(keepends=True)[i] for i in (0, 3)))


def _program(src: str):
    import serq_frontend

    return serq_frontend.compile(source=src, sets={}, defs={})


TWO_FAMILIES = """\
pool q[2] { cap 4; }
stage s[2] : fifo;
workload { arrive batch(3); }
session {
  hold q[serial] (1) {
    run s[SECOND] (1);
  }
}
run { horizon 10; }
"""


def test_an_index_that_names_no_member_names_its_family(monkeypatch):
    from tiers import same_error

    # session 1 holds q[0] and runs s[2]: the stage family is the one out of range
    text = same_error(_program(TWO_FAMILIES.replace("SECOND", "serial + 1").replace("q[serial]", "q[0]")),
                      monkeypatch)
    assert text.splitlines()[0] == ("<source>:6:9: error: at t=0, session 1: stage s: index 2 out of range "
                                    "(the family has 2)"), text
    # session 2 holds q[2]: the pool family
    text = same_error(_program(TWO_FAMILIES.replace("SECOND", "0")), monkeypatch)
    assert text.splitlines()[0].endswith("session 2: pool q: index 2 out of range (the family has 2)"), text
    # a fraction, in the expression of a member's observable
    text = same_error(_program(TWO_FAMILIES.replace("SECOND", "0").replace(
        "hold q[serial] (1)", "hold q[0] (used(q[serial / 2]))")), monkeypatch)
    assert text.splitlines()[0].endswith("session 1: pool q: index 0.5 is not a whole number (the family has 2)")


def test_a_constant_index_of_an_ir_file_names_its_family():
    import json

    import serq_ir
    from serq_ir import IRError

    d = json.loads(serq_ir.encode(_program(TWO_FAMILIES.replace("SECOND", "1"))))
    d["session"][0]["pools"][0]["pool"]["index"] = {"kind": "Num", "value": 7.0}
    with pytest.raises(IRError) as info:
        serq_ir.decode(json.dumps(d).encode(), name="p.ir.json")
    assert "pool q: index 7 out of range (the family has 2)" in str(info.value)


#: every key NaN (0 * inf): at t=1 sessions 0 and 1 end, caching an entry each, and session 2's hold evicts;
#: the keys are read for the entries in their release order, session 0's first, whose session has ended
NAN_EVICT = """\
let A = inf;
pool p { cap 2; evict by (prio * A - age); }
stage s : fifo;
workload {
  arrive batch(4);
  init {
    set prio = 0;
  }
}
session {
  hold p (1) { run s (1); } cache (1);
}
run { horizon 10; }
"""


def test_a_nan_evict_key_of_an_ended_sessions_entry_names_the_session(monkeypatch):
    import serq_sim
    from tiers import same_json

    prog = _program(NAN_EVICT)
    same_json(prog, monkeypatch)
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        notes = [n for n in serq_sim.run(prog).notes if "`evict by`" in n]
        assert len(notes) == 1 and "is NaN (first at t=1, session 0):" in notes[0], notes


def _ramp(n: int) -> str:
    """``n`` sessions, one a time unit, each living ``n``: the backlog climbs 1, 2, …, n through the arrivals
    (none ends before the last arrives), a ramp from empty and nothing else."""
    return (f"stage s : delay;\nworkload {{ arrive renewal(1); }}\nsession {{ run s ({n}); }}\n"
            f"run {{ horizon 10000; arrivals {n}; }}\n")


def test_a_backlog_of_too_few_sessions_is_not_judged(monkeypatch):
    from pathlib import Path

    from tiers import same_json

    def steady(report: dict) -> list[str]:
        return [n for n in report["notes"] if n.startswith("warning: the run is not steady")]

    # 39 arrivals over the bins: no warning; 40: the climb is told, "40 sessions arrived and 2 ended"
    assert steady(same_json(_program(_ramp(39)), monkeypatch)) == []
    (note,) = steady(same_json(_program(_ramp(40)), monkeypatch))
    assert "40 sessions arrived and 2 ended in that time" in note, note
    # pd_tiny.sq's four requests fill its engines from empty: told of its few request rows, not of a climb
    import serq_frontend

    tiny = serq_frontend.compile(path=str(Path(__file__).parent / "peer_programs27" / "pd_tiny.sq"))
    notes = same_json(tiny, monkeypatch)["notes"]
    assert steady({"notes": notes}) == []
    assert any(n.startswith("warning: too few samples after the warm-up (t = 0) for the CI of the request "
                            "metrics (at least 40 rows; their quantiles are given all the same): record "
                            "request 4") for n in notes), notes


def test_the_stall_message_shows_its_times_as_every_message_does(monkeypatch):
    from tiers import same_error

    # arrivals 5e-324 apart (the least subnormal): the clock crawls, and the guard stops the run at 9.88131e-320;
    # the span since the instant began is that time too, shown alike (it was 9.88e-320)
    src = "stage s : delay;\nworkload { arrive renewal(5e-324); }\nsession { run s (1); }\nrun { horizon 1; }\n"
    text = same_error(_program(src), monkeypatch)
    assert text.splitlines()[0] == (
        "<source>:2:12: error: at t=9.88131e-320: no progress: more than 10000 arrivals in 9.88131e-320 s of "
        "simulated time since t=0 (steps far below any time scale: at that pace the run would not reach its end); "
        "the events due now: arrive renewal"), text


def test_the_spin_message_shows_the_clock_as_every_message_does():
    from serq_sim.compile import spin_message
    from serq_sim.errors import fmt_time

    # at t = 2**40 the doubles are 2**-12 apart: times below 2**-13 do not move the clock
    text = spin_message(2.0 ** 40)
    assert text.endswith(f"; at t=1099511627776 a time below {fmt_time(2.0 ** -13)} does not move the clock: its "
                         f"doubles there are {fmt_time(2.0 ** -12)} apart)"), text
