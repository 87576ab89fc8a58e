"""Known defects, round 18 (serq-sim).

The warning that sessions wait for ever at the end of a run named a third party's stage that holds them
(its stage, kind, plugin and the run statements), but of serQ's own stages said only "2 at a stage that will
never complete them": neither the stage nor the statement. Now every stage that holds them is named with the
run statements they wait in (`engine.forever`), on both tiers: the fast tier writes the jobs back as the
general engine keeps them (a delay or ps stage's too, with the span of its run statement).
"""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import both, same_error, same_json


def forever(r) -> list[str]:
    notes = r.result.notes if hasattr(r, "result") else r["notes"]
    return [n for n in notes if "wait for ever" in n]


def where(src: str, text: str) -> str:
    """``<source>:LINE:COL`` of the one line of ``src`` holding ``text``, found in the text (not the engine)."""
    [(line, col)] = [(i, t.index(text) + 1) for i, t in enumerate(src.split("\n"), 1) if text in t]
    return f"<source>:{line}:{col}"


HEAD = "warning: {n} sessions wait for ever at the end of the run (no event is left that could wake them): "

FIFO = """stage s : fifo(1);
workload { arrive batch(2); }
session { run s (inf); }
run { horizon inf; }
"""


def test_a_fifo_stage_with_a_run_of_infinite_work_is_named_with_its_statement(monkeypatch):
    # the brief's program: session 0 takes the one server for ever, session 1 queues behind it
    r = both(FIFO, monkeypatch)
    assert forever(r) == [HEAD.format(n=2) + "2 at stage s, which will never complete them (sessions 0, 1, in the "
                          "run at <source>:3:11)"]
    assert where(FIFO, "run s (inf)") == "<source>:3:11"


def test_a_finite_horizon_names_them_too(monkeypatch):
    src = FIFO.replace("horizon inf", "horizon 10")
    r = both(src, monkeypatch)
    assert r.result.end == 10
    assert forever(r) == [HEAD.format(n=2) + "2 at stage s, which will never complete them (sessions 0, 1, in the "
                          f"run at {where(src, 'run s (inf)')})"]


# members of stage families, each session at the member its serial picks: serials 0 and 1 run inf on s[0] and
# s[1]; 2 and 3 queue behind them (fifo(1)); 4 and 5 run inf on the delay d, 6 on q[0] (ps) from another line
MEMBERS = """stage s[2] : fifo(1);
stage d : delay;
stage q[2] : ps(1);
workload { arrive batch(7); }
session {
  branch (serial < 4) {
    run s[serial % 2] (serial < 2 ? inf : 1);
  } else {
    branch (serial < 6) { run d (inf); } else { run q[0] (inf); }
  }
}
run { horizon inf; }
"""


def test_members_and_kinds_each_by_name(monkeypatch):
    r = both(MEMBERS, monkeypatch)
    run_s = where(MEMBERS, "run s[serial")
    run_d = where(MEMBERS, "run d (inf)")
    run_q = where(MEMBERS, "run q[0]")
    assert forever(r) == [HEAD.format(n=7) + "; ".join([
        f"2 at stage s[0], which will never complete them (sessions 0, 2, in the run at {run_s})",
        f"2 at stage s[1], which will never complete them (sessions 1, 3, in the run at {run_s})",
        f"2 at stage d, which will never complete them (sessions 4, 5, in the run at {run_d})",
        f"1 at stage q[0], which will never complete them (session 6, in the run at {run_q})"])]


def test_a_ps_stage_whose_capacity_falls_to_0(monkeypatch):
    # ps(present > 1 ? 0 : 1): the batch of 3 arrives at once, the capacity is 0, none is ever served (finite work)
    src = """stage p : ps(present > 1 ? 0 : 1);
workload { arrive batch(3); }
session { run p (1); }
run { horizon inf; }
"""
    r = both(src, monkeypatch)
    assert r.result.ended == 0
    assert forever(r) == [HEAD.format(n=3) + "3 at stage p, which will never complete them (sessions 0, 1, 2, in the "
                          "run at <source>:3:11)"]


def test_a_run_over_two_stages(monkeypatch):
    src = """stage a : ps(1);
stage b : ps(1);
share maxmin;
workload { arrive batch(2); }
session {
  run a, b (inf);
}
run { horizon inf; }
"""
    r = same_json(serq_frontend.compile(source=src, sets={}, defs={}), monkeypatch)
    assert forever(r) == [HEAD.format(n=2) + "2 at stages a, b, which will never complete them (sessions 0, 1, in "
                          "the run at <source>:6:3)"]


def test_beside_sessions_queued_at_a_pool(monkeypatch):
    # session 0 holds m and runs inf on f; 1 queues at m behind it; 2 runs d (inf) in the same line's other branch
    src = """pool m { cap 1; }
stage f : fifo;
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) { hold m (1) { run f (inf); } } else { run d (inf); }
}
run { horizon inf; }
"""
    r = both(src, monkeypatch)
    assert forever(r) == [HEAD.format(n=3) + "; ".join([
        f"1 at stage f, which will never complete them (session 0, in the run at {where(src, 'run f')})",
        "1 queued at m (session 1)",
        f"1 at stage d, which will never complete them (session 2, in the run at {where(src, 'run d')})"])]


@pytest.mark.parametrize("horizon, when", [("50", "at the horizon"), ("inf", "when no event is left")])
def test_a_run_that_does_not_drain_says_where_in_its_error(horizon, when, monkeypatch):
    src = f"""stage d : delay;
workload {{ arrive renewal(1); }}
session {{ run d (serial == 1 ? inf : 1); }}
run {{ horizon {horizon}; arrivals 3; }}
"""
    msg = same_error(serq_frontend.compile(source=src, sets={}, defs={}), monkeypatch)
    first, quoted, caret = msg.split("\n")  # the run block's line, the caret under its `arrivals`
    assert first.endswith(f"1 session still live {when} (not drained): it waits for ever (no event is left that "
                          "could wake them): 1 at stage d, which will never complete them (session 1, in the run at "
                          "<source>:3:11)")
    col = {"50": 19, "inf": 20}[horizon]
    assert first.startswith(f"<source>:4:{col}: error: ") and quoted == f"  run {{ horizon {horizon}; arrivals 3; }}"
    assert caret == "  " + " " * (col - 1) + "^" and quoted[2 + col - 1:].startswith("arrivals"), msg


# --- serq run --records fsyncs each table's file, and the folder once ------------------------------------


def test_records_fsync_each_file_once_and_the_folder_once(tmp_path, monkeypatch):
    import os
    import stat

    from serq.cli import main

    tables = 40
    body = "\n".join(f"  record t{i} {{ x = serial; }}" for i in range(tables))
    (tmp_path / "p.sq").write_text(f"""stage d : delay;
workload {{ arrive batch(2); }}
session {{
  run d (1);
{body}
}}
run {{ horizon inf; }}
""")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SERQ_CACHE_DIR", "")  # (no compile cache written beside them)
    calls = []
    real = os.fsync

    def fsync(fd):
        calls.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(SystemExit) as e:
        main(["run", "p.sq", "--records", "r.csv", "-o", "out.txt", "--no-progress"])
    assert e.value.code in (0, None)
    assert sorted(p.name for p in tmp_path.glob("r.*.csv")) == sorted(f"r.t{i}.csv" for i in range(tables))
    assert (tmp_path / "r.t7.csv").read_text().splitlines()[0] == "session,turn,time,x"
    # the report and the 40 tables, each fsynced once; their folder once (it was 41 times)
    assert calls == ["file"] * (tables + 1) + ["dir"]
