"""Known defects, round 36, in serq-frontend.

5. The read-before-set analysis (serq_frontend.link.Unset) copied its whole state into the state the `turn`
   block is entered with at every `turn;` of its first walk, and added every name of the `turn` block again
   at every `turn;`: a time of the turns times the names. A `turn;` costs what it adds now (the names added
   since the last one, those of the block's the state lacks); ``Unset.copied`` counts them, and the count is
   checked here, not a time. The warnings are what they were; the IR of every tracked program is unchanged.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend import link

pytestmark = pytest.mark.timeout(120)


def _program(names: int, turns: int, tail: str = "") -> str:
    sets = "".join(f"  set a{i} = {i};\n" for i in range(names))
    body = "  turn;\n  run d (1);\n" * turns
    block = "".join(f"    set b{i} = a{i};\n" for i in range(names))
    return (f"stage d : delay;\nworkload {{\n  arrive batch(1);\n  turn {{\n{block}    set u = late;\n  }}\n}}\n"
            f"session {{\n{sets}{body}  set late = 1;\n  turn;\n{tail}  end;\n}}\nrun {{ horizon 10; }}\n")


@pytest.fixture
def work(monkeypatch):
    """The names every compile's analysis moved at its `turn;`s (Unset.copied)."""
    counts: list[int] = []
    real = link.Unset.run

    def run(self, init, session):
        out = real(self, init, session)
        counts.append(self.copied)
        return out

    monkeypatch.setattr(link.Unset, "run", run)
    return counts


def test_the_turns_cost_what_they_add(work, capsys):
    for turns in (10, 400):
        serq_frontend.compile(source=_program(200, turns))
    small, large = work
    # 200 names set before the first turn, 200 the turn block sets, `u` and `late`: each moved once whatever
    # the count of turns (a copy of the state at every turn moved 400 * 600 names)
    assert small == large <= 2 * (2 * 200 + 2), work


def test_the_warnings_are_the_same_with_many_turns(work, capsys):
    # `late` is set after the turns but one: the `turn` block's read of it reaches it from the last `turn;`,
    # no warning; `b0` is read before anything sets it on the session's path
    serq_frontend.compile(source=_program(3, 50, tail="  run d (zz + 1);\n  set zz = 1;\n"))
    err = capsys.readouterr().err
    assert err.count("warning:") == 1, err
    assert "`zz` is read here before any statement sets it" in err and "late" not in err, err


def test_a_turn_inside_a_branch_takes_back_what_it_added(capsys):
    # the turn block sets `b`; the session reads `b` after a branch whose one arm holds the only turn, and the
    # other ends: on the path that goes on, `b` was set (no warning). Then a path on which no turn ran: a
    # read of `c` that only the turn block sets, after a branch whose turn arm ends, is told.
    src = ("stage d : delay;\nworkload {\n  arrive batch(1);\n  turn {\n    set b = 1;\n    set c = 1;\n  }\n}\n"
           "session {\n  branch (serial == 0) {\n    turn;\n  } else {\n    end;\n  }\n  run d (b);\n"
           "  branch (serial == 1) {\n    turn;\n    end;\n  }\n  end;\n}\nrun { horizon 10; }\n")
    serq_frontend.compile(source=src)
    assert "warning" not in capsys.readouterr().err
    src2 = src.replace("  run d (b);\n", "").replace("  end;\n}\nrun", "  run d (c + 0);\n  end;\n}\nrun")
    src2 = src2.replace("  branch (serial == 0) {\n    turn;\n  } else {\n    end;\n  }\n", "")
    serq_frontend.compile(source=src2)
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and "`c` is read here before any statement sets it" in err, err


# ---------------------------------------------------------------- 8. an entry nobody calls is walked too
#
# The read-before-set warning was given in the session's path and in the entries it calls (where they are
# expanded); an entry nobody calls was never walked, so its read of a name it sets only later went unsaid.
# It is walked as its first call would be, from nothing set (serq_frontend.sugar.queues), with the same words
# (test_known_defects_round35's called entry), and no note of a use, since there is none.

QUEUE = """queue D[2] : decode {
  pool reqs { cap 4; admit via D; }
  pool kv { cap 64; admit via D; }
  serve step { budget 32; cost 0.01; memory kv; }
  decode (prompt) {
    run tool (t + prompt);
    set t = 3;
    hold kv (4) {
      decode (prompt) growing kv;
    }
  }
}

stage tool : delay;

workload { arrive batch(3); }

session {
SESSION}

run { horizon 10; }
"""

SAID = ["<source>:6:15: warning: `t` is read here before any statement sets it, so it reads 0 (an attribute is 0 "
        "until the session sets it; the first statement that sets it is at 7:5): set it before this read, or "
        "write 0",
        "      run tool (t + prompt);",
        "                ^"]


def test_an_entry_nobody_calls_is_warned_of_in_the_same_words(capsys):
    serq_frontend.compile(source=QUEUE.replace("SESSION", "  run tool (1);\n"))
    assert capsys.readouterr().err.splitlines() == SAID
    # called, the same words, with the note of its use
    serq_frontend.compile(source=QUEUE.replace("SESSION", "  D[serial % 2].decode (4);\n"))
    err = capsys.readouterr().err.splitlines()
    assert err[:3] == SAID and err[3] == "<source>:19:3: note: in the expansion of `D.decode`, used here", err


def test_an_entry_nobody_calls_that_sets_before_it_reads_says_nothing(capsys):
    program = QUEUE.replace("    run tool (t + prompt);\n    set t = 3;\n", "    set t = 3;\n    run tool (t + prompt);\n")
    serq_frontend.compile(source=program.replace("SESSION", "  run tool (1);\n"))
    assert capsys.readouterr().err == ""
