"""A statement the session never reaches is told (language.txt §2: `end ;` ends the session, `loop block`
repeats its block and only an `end;` leaves it). Written after an `end;`, after a `loop`, after a branch
whose every way ends the session or after a hold whose block does, in the same block, it compiled without
a word, and its observe never took a sample (test_conformance_audit's `observe never = 1;` after `end;`
is one on purpose). The spec is silent; the linker warns at the first such statement of each block and
the program runs as written (docs/language.md, "A statement after `end;`"). No .sq file of the repository
has one.
"""

from __future__ import annotations

import pytest
from sqhelpers import SERQ, compile_src, located

HEAD = "pool p { cap 4; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
RUN = "run { horizon 5; }\n"


def warnings(src: str, capsys) -> list[str]:
    capsys.readouterr()
    compile_src(src)
    return [line for line in capsys.readouterr().err.splitlines() if ": warning: " in line]


@pytest.mark.parametrize("body, why", [
    ("run d (1); end; ⟨observe x = 1;", "the `end;` at 4:22 before it ends the session"),
    ("branch (now > 1) { end; ⟨observe x = 1; }", "the `end;` at 4:30 before it ends the session"),
    ("loop { run d (1); branch (now > 3) { end; } } ⟨observe x = 1;",
     "the `loop` at 4:11 before it repeats until an `end;` ends the session"),
    ("branch (now > 1) { end; } else { run d (1); end; } ⟨observe x = 1;",
     "every way through the `branch` at 4:11 before it ends the session"),
    ("branch with (0.5) { end; } else { loop { run d (1); } } ⟨observe x = 1;",
     "every way through the `branch` at 4:11 before it ends the session"),
    ("hold p (1) { run d (1); end; } ⟨observe x = 1;",
     "the block of the hold at 4:11 before it ends the session"),
])
def test_the_first_statement_never_reached_is_told_once(body, why, capsys):
    src, line, col = located(HEAD + "session { " + body + " }\n" + RUN)
    assert warnings(src, capsys) == [f"<source>:{line}:{col}: warning: this statement never runs: {why}"]


@pytest.mark.parametrize("body", [
    "run d (1); end;",
    "branch (now > 1) { end; } observe x = 1;",  # one way goes on
    "branch (now > 1) { end; } else { run d (1); } observe x = 1;",
    "loop { run d (1); branch (now > 3) { end; } observe x = 1; }",  # inside the loop, after a branch that may go on
    "hold p (1) { run d (1); } end;",
    "loop { run d (1); end; }",
])
def test_statements_some_way_reaches_are_not_told(body, capsys):
    assert warnings(HEAD + "session { " + body + " }\n" + RUN, capsys) == []


def test_a_definitions_body_is_told_once_at_its_place_with_the_use(capsys):
    """A statement definition written out twice: one warning, in the body, with a note at a use."""
    src = ("stage d : delay;\ndef fin() { end; drop p; }\npool p { cap 1; }\nworkload { arrive batch(1); }\n"
           "session { branch (serial == 0) { fin(); } else { hold p (1) { fin(); } } }\n" + RUN)
    capsys.readouterr()
    compile_src(src)
    err = capsys.readouterr().err
    assert err.count(": warning: ") == 1
    assert "<source>:2:18: warning: this statement never runs: the `end;` at 2:13 before it ends the session" in err
    assert "note: in the expansion of `fin`, used here" in err


def test_the_two_sides_are_told_in_the_workloads_session(capsys):
    """A workload's session with the server spliced in at `request;`: the statement after the branch."""
    src = ("stage d : delay;\nworkload { arrive batch(1); session { turn; loop { request; branch (more) { end; } "
           "else { end; } turn; } } init { set more = 0; } }\nserver { run d (1); }\n" + RUN)
    (w,) = warnings(src, capsys)
    assert w.startswith("<source>:2:98: warning: this statement never runs: every way through the `branch` at 2:61")


def test_the_program_is_kept_as_written():
    """A warning, not a refusal: the IR keeps the statement after the `end;` (an observe that never samples)."""
    prog = compile_src(HEAD + "session { run d (1); end; observe x = 1; }\n" + RUN)
    assert [type(s).__name__ for s in prog.session] == ["Run", "End", "Observe"]
    assert [o.name for o in prog.observes] == ["x"]


def test_serq_check_warns_and_succeeds(tmp_path):
    import subprocess

    (tmp_path / "p.sq").write_text(HEAD + "session { end;\n  run d (1); }\n" + RUN)
    r = subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0
    assert r.stderr.splitlines()[:3] == ["p.sq:5:3: warning: this statement never runs: the `end;` at 4:11 before it "
                                         "ends the session", "    run d (1); }", "    ^"]
