"""A queue's items written wrong (language.txt §2: `queue NAME [ '[' expr ']' ] [ : ROLE [, ROLE]* ] { qitem* }`,
qitem `pool`, `serve`, `nic` or an entry `VERB [ ( NAME, … ) ] [ from NAME ] block`).

A role misspelt (`: decoder`) was named without the role meant; a word that begins no item (`nics ps(1);`, `serv
fifo;`), read as an entry's verb, was "unexpected `ps` (expected `(`, `{`, from)" at the word after it; an entry's
parameters without their parentheses (`decode prompt from s { … }`) "unexpected `prompt` (…) (did you mean
`from`?)". Each is now told at the word, in the queue's terms.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told

QUEUE = """queue D : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  decode (prompt) { hold kv (prompt) { run (1); } }
}
workload { arrive batch(1); }
session { set prompt = 2; D.decode (prompt); }
run { horizon 10; }
"""
ITEMS = "a queue holds `pool NAME { … }`, `serve KIND;`, `nic KIND;` and its roles' entries, `VERB (params) { … }`"


def _told(old: str, new: str) -> str:
    assert QUEUE.count(old) == 1
    return told(QUEUE.replace(old, new))


@pytest.mark.parametrize("old, new, said", [
    (": decode {", ": ⟨decoder {", "`decoder` is not a role (did you mean `decode`?): the roles are gateway, "
     "prefill, decode, link"),
    ("nic ps(1);", "⟨nics ps(1);", "`nics` begins no item of a queue (did you mean `nic`?): " + ITEMS),
    ("serve fifo;", "⟨serv fifo;", "`serve` begins no item of a queue".replace("serve", "serv", 1)
     + " (did you mean `serve`?): " + ITEMS),
    ("nic ps(1);", "nic ps(1);\n  ⟨bandwidth 3;", "`bandwidth` begins no item of a queue: " + ITEMS),
    ("decode (prompt) {", "decode ⟨prompt {", "unexpected `prompt`: an entry's parameters are in parentheses, "
     "`decode (prompt, …) { … }`"),
])
def test_a_queue_item_written_wrong(old, new, said):
    assert _told(old, new) == said


def test_a_statement_misspelt_in_an_entry_is_still_a_statement():
    assert _told("hold kv", "⟨hld kv").startswith("`hld` does not begin a statement (did you mean `hold`?)")


def test_the_queue_compiles():
    compile_src(QUEUE)
