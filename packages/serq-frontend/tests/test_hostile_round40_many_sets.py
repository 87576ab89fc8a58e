"""Thousands of `set`s in a row: the analysis that tells a read of an attribute no path has set yet (serq_frontend.link,
``Unset``) made a new state at every `set`, a copy of every name set before it, so a session of n `set`s took time
in n² (16 000: 3.5 s of the compile, 32 000: 25 s; a 16 MiB program, hours). A block now adds the names it sets to
one set of its own, so a run of `set`s hands one state from statement to statement (counted below); what it
tells is the same (the tree's programs and 300 random ones gave the same reads before and after)."""

from __future__ import annotations

import serq_frontend
from serq_frontend import link

PROGRAM = """stage s : fifo;
workload {{ arrive poisson(1); }}
session {{
{body}
  end;
}}
run {{ horizon 10; seed 1; }}
"""


def _compile(body: str, capsys):
    serq_frontend.compile(source=PROGRAM.format(body=body), sets={}, defs={})
    return capsys.readouterr().err


def test_a_run_of_sets_hands_one_state_along(monkeypatch, capsys):
    states = []  # (kept, so that no state's id is taken again by another)
    see = link.Unset.see

    def seen(self, exprs, state, bound=None):
        if self.telling:
            states.append(state)
        return see(self, exprs, state, bound)

    monkeypatch.setattr(link.Unset, "see", seen)
    n = 1000
    _compile("\n".join(f"  set a{i} = {i};" for i in range(n)), capsys)
    assert len(states) == n
    # the state the block was given, then its own set; a new state at each `set` was 1 000 of them
    assert len({id(s) for s in states}) <= 2


def test_the_reads_told_are_the_same(capsys):
    sets = "\n".join(f"  set a{i} = now;" for i in range(500))
    # b is read before the one `set` of it, after 500 others: told, at the read
    err = _compile(f"{sets}\n  set c = b + a499;\n  set b = 1;\n  observe y = b + c;", capsys)
    assert "<source>:504:11: warning: `b` is read here before any statement sets it" in err
    assert err.count("warning:") == 1
    # a `set` in either arm of a branch reaches the read after it (some path sets it): not told
    err = _compile(f"{sets}\n  branch (a3 > 1) {{ set b = 1; }} else {{ set d = 2; }}\n  observe y = b + d;", capsys)
    assert "before any statement sets it" not in err
    # a `set` after the read in a loop's body reaches it on the next pass: not told
    err = _compile(f"{sets}\n  loop {{\n    observe y = b;\n    set b = 1;\n    branch (b > 0) {{ end; }}\n  }}", capsys)
    assert "before any statement sets it" not in err
    assert "`b` is read here" in _compile(f"{sets}\n  observe y = b;\n  set b = 1;", capsys)  # (no loop: told)
