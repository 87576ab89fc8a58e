"""A step stage whose budget or chunk is a constant 0 is linked (an amount of tokens, language.txt §3: "up to
chunk to a prefilling one") with a warning at the value: such a stage never serves what it names, and 0 means
"no cap" for vLLM's long_prefill_token_threshold, which a program ported from its settings may carry over
(a run of it went to its horizon with every request live and no word)."""

from __future__ import annotations

import pytest
import serq_frontend

PROGRAM = """pool kv { cap 1000; block 16; evict lru; }
stage e : step { budget BUDGET; cost 1; chunk CHUNK; memory kv; };
workload { arrive poisson(0.1); }
session { hold kv (16) { prefill on e (100) growing kv; decode on e (5) growing kv; } }
run { horizon 100; }
"""

CHUNK = ("warning: stage `e`: a chunk of 0 gives a prefill no token, so no prefill on it ever runs (no cap is "
         "`chunk inf`, or no chunk: vLLM's long_prefill_token_threshold of 0)")
BUDGET = "warning: stage `e`: a budget of 0 schedules no token, so no job on it ever runs"


def _warnings(capsys, budget: str, chunk: str) -> list[str]:
    serq_frontend.compile(source=PROGRAM.replace("BUDGET", budget).replace("CHUNK", chunk))
    return [line for line in capsys.readouterr().err.splitlines() if "warning:" in line]


@pytest.mark.parametrize(("budget", "chunk", "said"), [
    ("64", "0", [f"<source>:2:43: {CHUNK}"]),
    ("64", "0 * 5", [f"<source>:2:43: {CHUNK}"]),  # (folded: a constant)
    ("0", "8", [f"<source>:2:25: {BUDGET}"]),
    ("0", "0", [f"<source>:2:25: {BUDGET}", f"<source>:2:42: {CHUNK}"]),
])
def test_a_constant_zero_is_said_where_it_is(capsys, budget, chunk, said):
    assert _warnings(capsys, budget, chunk) == said


@pytest.mark.parametrize(("budget", "chunk"), [("64", "8"), ("64", "inf"), ("64", "residents > 1 ? 0 : 8"),
                                               ("residents > 1 ? 0 : 64", "8")])
def test_a_nonzero_or_computed_amount_is_not(capsys, budget, chunk):
    assert _warnings(capsys, budget, chunk) == []
