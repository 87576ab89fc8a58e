"""Entry calls and statement clauses written wrong, told in the program's words at the place (language.txt §2:
`QUEUE [ '[' expr ']' ] . VERB ( expr, … ) [ from QUEUE [ '[' expr ']' ] ]`, `prefill … expr [ growing POOL ]`,
`release POOL ;`, `drop POOL ;`).

A call of a member a family does not have (`D[5].decode`, `from P[1]` of a family of one) was told by the kernel's
name of a pool or stage the entry's body uses (`` `D.kv[5]`: `D.kv` has members 0 … 1 ``, `P.nic[1]`); an entry
misspelt (`D[j].decod`) or a queue (`d[j].decode`) was offered nothing; `growing` misspelt after the work was "missing
`;`", `growing POOL` before the work "two names side by side"; an amount given to `release` or `drop` "unexpected
`(` (expected `;`)".
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told

QUEUES = """queue P[1] : prefill {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
queue D[2] : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  decode (prompt) from s { hold kv (prompt) { transfer (1) from s to kv (1); run (1); } cache (prompt); }
}
D pull P share maxmin;
workload { arrive batch(1); }
session { set prompt = 2; P[0].prefill (prompt); CALL }
run { horizon 50; }
"""
CALL = "D[1].decode (prompt) from P[0];"


def _told(text_marked: str) -> str:
    return told(text_marked)


@pytest.mark.parametrize("call, said", [
    ("D[⟨5].decode (prompt) from P[0];", "`D[5].decode`: queue `D` has members 0 … 1"),
    ("D[⟨-1].decode (prompt) from P[0];", "`D[-1].decode`: queue `D` has members 0 … 1"),
    ("D[⟨1 + 0.5].decode (prompt) from P[0];", "`D[1.5].decode`: queue `D` has members 0 … 1"),
    ("D[1].decode (prompt) from P[⟨1];", "`from P[1]`: queue `P` has members 0 … 0"),
    ("⟨D[1].decod (prompt) from P[0];", "`D.decod`: queue `D` has no such entry (did you mean `decode`?); its "
     "entries: `decode`"),
    ("⟨d[1].decode (prompt) from P[0];", "`d.decode`: no queue `d` is declared (did you mean `D`?)"),
])
def test_a_call_names_what_it_wrote(call, said):
    assert _told(QUEUES.replace("CALL", call)) == said


def test_members_in_range_and_computed_compile():
    compile_src(QUEUES.replace("CALL", CALL))
    compile_src(QUEUES.replace("CALL", "set j = serial % 2; D[j].decode (prompt) from P[0];"))


BASE = """pool kv { cap 100; }
stage e : step { budget 10; cost 1; memory kv; }
workload { arrive batch(1); }
session { hold kv (1) { BODY } }
run { horizon 50; }
"""


@pytest.mark.parametrize("body, said", [
    ("prefill (2) ⟨grwoing kv;", "unexpected `grwoing` (did you mean `growing`?)"),
    ("prefill ⟨growing kv (2);", "unexpected `growing`: `growing POOL` follows the work, `prefill … (work) growing "
     "POOL;`"),
    ("decode ⟨growing kv (2);", "unexpected `growing`: `growing POOL` follows the work, `decode … (work) growing "
     "POOL;`"),
    ("release kv ⟨(1);", "unexpected `(`: `release` takes no amount: it gives back the whole allocation of the hold "
     "around it on the pool (or ends a lease of it), `release kv;`"),
    ("drop kv ⟨(1);", "unexpected `(`: `drop` takes no amount: it discards the session's whole cached prefix on "
     "the pool, `drop kv;`"),
])
def test_a_clause_written_wrong_is_named(body, said):
    assert _told(BASE.replace("BODY", body)) == said


def test_the_clauses_as_the_spec_writes_them_compile():
    compile_src(BASE.replace("BODY", "prefill (2) growing kv; decode (1) growing kv; release kv;"))
