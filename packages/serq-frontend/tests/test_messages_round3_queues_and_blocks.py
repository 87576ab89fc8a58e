"""A queue's header, an entry and an entry call written wrong, and a block left open before `run { … }`, told
in their own terms.

`queue gw gateway { … }` was "(expected `:`, `[`, `{`)", `queue gw : gateway route { … }` "(expected `,`,
`{`)", `prefill (p) hold …` in a queue "(expected `{`, from)", `P.prefill (1) from;` "(expected a name)".
A queue or a workload whose `}` is missing before the run block, `run { … }` at the start of a line, was
"unexpected `run` (expected `}`, …)", at the `run`: the word `run` begins a statement too, so the missing `}`
was told only where `run {` was read as a statement; it is now told at the block's `{`, as before any other
item.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told

P = "queue P : prefill { pool kv { cap 9; } serve fifo; prefill (p) { hold kv (p) { run (p); } } }\n"
GW = "queue gw : gateway { route { P.prefill (1); } }\n"
W = "workload { arrive batch(1); session { request gw; end; } }\n"
R = "run { horizon 5; }\n"


@pytest.mark.parametrize("src, said", [
    ("queue gw ⟨gateway { route { } }\n" + R, "unexpected `gateway`: a queue's roles follow `:`, `queue gw : ROLE "
     "{ … }`"),
    ("queue gw : gateway ⟨route { }\n" + R, "unexpected `route`: a queue's items are in a block after its roles, "
     "`queue gw : gateway { pool …; serve …; VERB (…) { … } }`"),
    ("queue P : prefill { pool kv { cap 9; } serve fifo; prefill (p) ⟨hold kv (p) { run (p); } }\n" + R,
     "unexpected `hold`: an entry's body is a block, `prefill (…) { … }` (or `prefill (…) from Q { … }`)"),
    (P + "queue gw : gateway { route { P.prefill (1) from⟨; } }\n" + W + R,
     "unexpected `;`: `from` names the queue member whose lease the entry reads, `D.decode (…) from P[i];`"),
])
def test_a_queue_written_wrong_is_told_its_form(src, said):
    assert told(src) == said


def missing(line: int) -> str:
    return f"a `}}` is missing: this `{{` is not closed before `run` at {line}:1, which begins an item"


@pytest.mark.parametrize("src, line", [
    ("queue P : prefill ⟨{ pool kv { cap 9; } serve fifo; prefill (p) { hold kv (p) { run (p); } }\n" + R, 2),
    ("stage s : fifo;\nworkload ⟨{ arrive batch(1);\nsession { run s (1); }\n" + R, 4),
])
def test_a_block_left_open_before_the_run_block_is_told_at_its_brace(src, line):
    assert told(src) == missing(line)


def test_the_programs_written_right_compile():
    compile_src(P + GW + W + R)
    compile_src("stage s : fifo;\nworkload { arrive batch(1); }\nsession { run s (1); }\n" + R)
