"""Thousands of `set`s, and of branches that set names: the analysis that tells a read of an attribute no path has
set yet (serq_frontend.link, ``Unset``) made a new state at every `set` and every arm of a branch, a copy of every
name set before it, so a session of n of them took time in n² (16 000 `set`s: 3.5 s of the compile, 32 000: 25 s;
16 000 branches: 140 s; a 16 MiB program, hours). The walk now keeps one state and the log of the names added to it
(a branch takes back what one arm added before it walks the other), so every read is told against that one state
(counted below); what it tells is the same (the tree's programs and 800 random ones gave the same reads before and
after)."""

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


def test_sets_and_branches_are_told_against_one_state(monkeypatch, capsys):
    states = []  # (kept, so that no state's id is taken again by another)
    see = link.Unset.see

    def seen(self, exprs, *state, **kw):
        if self.telling:
            states.append(state[0] if state else self.state)
        return see(self, exprs, *state, **kw)

    monkeypatch.setattr(link.Unset, "see", seen)
    n = 1000
    sets = "\n".join(f"  set a{i} = {i};" for i in range(n))
    branches = "\n".join(f"  branch (a{i} > 0) {{ set b{i} = 1; }} else {{ set c{i} = 2; }}" for i in range(n))
    _compile(f"{sets}\n{branches}", capsys)
    assert len(states) == 4 * n  # (a branch's test, then each arm's set)
    # one state, the walk's; a new one at each `set` and each arm was 4 000 of them, each a copy of the names before
    assert len({id(s) for s in states}) == 1


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
