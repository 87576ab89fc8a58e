"""A hold's numeric clauses and what a negative value of each is (language.txt §3's wording of each).

``reuse (ρ)``: "the session consumes at most ρ units of its own cached prefix", and ``cache (ℓ)``: "min(ℓ,
computed) units stay cached": both bounds, so a negative one is none, as 0 is (a reuse bound such as
``floor((prompt - 1) / bs) * bs`` is -16 for an empty prompt and means "nothing"). They were taken as 0 without
a word; a constant one is now a link warning at it (once), a computed one the report's warning
``negative-bound`` (once a clause: its first value, time and session, and how often). ``lease P (t)``: the
allocation is kept "t seconds" past the scope's end, a duration as a run's work is, so a negative one is
refused as a negative work is: a constant one does not link (file:line:col, caret), a computed one is the
run-time error at the clause naming the time and the session (it was taken as 0). Every other numeric clause
of a statement (units, reserve, grow, load, a run's work, a spill's work, a choose's count) was refused
already: the last test checks each once more, so that the class stays one.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from conform import pool, run, run_error

# one session at 0 on a fifo stage: hold kv 4 units for 1 s, then look at what it cached
HEAD = """stage svc : fifo;
pool kv { cap 10; }
workload { arrive batch(1); }
"""


def _prog(stmt: str) -> str:
    return HEAD + "session {\n  set y = 3;\n  STMT\n  observe c = cachedin(kv);\n  end;\n}\nrun { horizon 20; }\n".replace(
        "STMT", stmt)


def _warned(report, code: str) -> list[str]:
    return [n for n in report.notes if getattr(n, "code", None) == code]


def test_a_computed_negative_cache_length_caches_nothing_and_is_warned_once(monkeypatch):
    # two holds in a loop of two, each caching 1 - y = -2: nothing cached (as cache (0)), said once for the clause
    stmt = "set n = 0;\n  loop {\n    hold kv (4) { run svc (1); } cache (1 - y);\n    set n = n + 1;\n    branch (n == 2) { end; }\n  }"
    src = HEAD + "session {\n  set y = 3;\n  " + stmt + "\n}\nrun { horizon 20; }\n"
    report, _ = run(src, monkeypatch)
    zero, _ = run(src.replace("cache (1 - y)", "cache (0)"), monkeypatch)
    assert pool(report, "kv").cached == pool(zero, "kv").cached == 0
    w = _warned(report, "negative-bound")
    assert w == ["warning: the cache length at <source>:8:41 came out negative, -2 (first at t=1, session 0) "
                 "(2 times in the run), and was taken as 0: the hold cached nothing, as with `cache (0)`"]
    assert not _warned(zero, "negative-bound")


def test_a_computed_negative_reuse_bound_consumes_nothing_and_is_warned(monkeypatch):
    # the first hold caches 4; the second, reuse (1 - y) = -2, consumes none of it (cached 0) as reuse (0) does
    stmt = ("hold kv (4) { run svc (1); } cache (4);\n  hold kv (4) reuse (1 - y) { observe got = cached; run svc (1); }"
            " cache (4);")
    report, obs = run(_prog(stmt), monkeypatch)
    zero, zobs = run(_prog(stmt.replace("reuse (1 - y)", "reuse (0)")), monkeypatch)
    full, fobs = run(_prog(stmt.replace("reuse (1 - y)", "reuse (4)")), monkeypatch)
    assert [v for *_, v in obs["got"]] == [v for *_, v in zobs["got"]] == [0.0]
    assert [v for *_, v in fobs["got"]] == [4.0]  # (the prefix is there to be consumed)
    # the prepared admission (pools.prepared) and the general one clamp and warn alike
    from serq_sim.pools import prepared

    monkeypatch.setattr(prepared, "ENABLED", False)
    general, gobs = run(_prog(stmt), monkeypatch)
    assert gobs == obs and general.notes == report.notes
    w = _warned(report, "negative-bound")
    assert w == ["warning: the reuse bound at <source>:7:22 came out negative, -2 (first at t=1, session 0), and was "
                 "taken as 0: the hold consumed none of its prefix, as with `reuse (0)`"]


@pytest.mark.parametrize("clause, col, words", [
    ("cache (-2)", 39, "the cache length is negative (-2), taken as 0: the hold caches nothing, as `cache (0)` does"),
    ("reuse (-2) { run svc (1); } cache (1)", 22,
     "the reuse bound is negative (-2), taken as 0: the hold consumes none of its prefix, as `reuse (0)` does"),
])
def test_a_constant_negative_bound_is_a_link_warning_at_it(capsys, clause, col, words):
    body = "hold kv (4) { run svc (1); } " + clause if clause.startswith("cache") else "hold kv (4) " + clause
    src = _prog(body + ";")
    serq_frontend.compile(source=src, sets={}, defs={})
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"<source>:6:{col}: warning: {words}"
    assert err[1] == "  " + src.splitlines()[5]
    assert err[2] == " " * (col + 1) + "^"
    assert sum("warning:" in e for e in err) == 1


def test_a_constant_negative_lease_time_does_not_link():
    src = _prog("hold kv (4) { run svc (1); } cache (4) lease kv (-1);")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=src, sets={}, defs={})
    first, line, caret = str(e.value).splitlines()[:3]
    assert first == ("<source>:6:52: error: lease kv: the lease time is negative (-1); a lease's time is not "
                     "negative")
    assert line == "  " + src.splitlines()[5] and caret == " " * 53 + "^"


def test_an_ir_file_with_a_negative_lease_time_is_refused():
    import serq_ir

    src = _prog("hold kv (4) { run svc (1); } cache (4) lease kv (1);")
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    data = serq_ir.encode(prog).replace(b'"time":{"kind":"Num","value":1.0', b'"time":{"kind":"Num","value":-1.0')
    assert data != serq_ir.encode(prog)
    with pytest.raises(Exception) as e:
        serq_ir.decode(data)
    assert "the lease time is negative (-1); a lease's time is not negative" in str(e.value)


def test_a_computed_negative_lease_time_is_a_run_time_error(monkeypatch):
    # it was taken as 0 (the lease ended at the scope's instant)
    msg = run_error(_prog("hold kv (4) { run svc (1); } cache (4) lease kv (1 - y);"), monkeypatch)
    assert msg == "<source>:6:52: error: at t=1, session 0: the lease time is negative (-2)"


def test_a_zero_lease_time_is_still_a_lease_ending_at_the_scope():
    # (docs/language.md: it ends at the scope's instant after the events due then, so the observe right after
    # the scope still finds the units held, none cached yet)
    report = serq_sim.run(serq_frontend.compile(source=_prog(
        "hold kv (4) { run svc (1); } cache (4) lease kv (0);"), sets={}, defs={}))
    assert not _warned(report, "negative-bound")
    assert [float(v) for v in report.observe("c").values] == [0.0]
    assert pool(report, "kv").cached > 0  # and then it cached its 4 units


@pytest.mark.parametrize("stmt, message", [
    ("hold kv (1 - y) { run svc (1); }", "the units of kv are negative (-2)"),
    ("hold kv (1) reserve (1 - y) { run svc (1); }", "the reserve of kv is negative (-2)"),
    ("hold kv (3) { grow kv (1 - y); }", "grow kv: the amount is negative (-2)"),
    ("hold kv (3) { load kv (1 - y); }", "load kv: the amount is negative (-2)"),
    ("run svc (1 - y);", "the run's work is negative (-2)"),
    ("tool (1 - y);", "the run's work is negative (-2)"),
])
def test_every_other_amount_of_a_statement_is_refused_alike(monkeypatch, stmt, message):
    # the rest of the class: the run-time error naming the statement's place, the time and the session
    head = HEAD.replace("stage svc : fifo;", "stage svc : fifo;\nstage tool : delay;")
    src = head + "session {\n  set y = 3;\n  " + stmt + "\n  end;\n}\nrun { horizon 20; }\n"
    msg = run_error(src, monkeypatch)
    assert msg.startswith("<source>:7:") and ": error: at t=0, session 0: " in msg and msg.endswith(message), msg
