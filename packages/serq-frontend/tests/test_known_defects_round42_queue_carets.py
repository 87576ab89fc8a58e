"""Two refusals of queues put their caret where the mistake is written (language.txt §2, Queues):

* ``latency x`` on the serve of a link that has an entry (or of a queue that is no link) is refused at the
  clause, its word ``latency``: the caret was under the value ``1``, which is not what the rule is about;
* an entry of ``D`` that reads (a ``transfer`` without ``on``) called ``from Q`` where ``D pull P`` is
  refused at the call's ``from``, as the caller wrote it (``from Q``, not the pool it gets, ``Q.kv``), with
  a note at the read: it was at the read inside the entry, the call a note under it."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend.diagnostics import CompileError

LINK = """queue L : ROLE { serve ps(10) latency 1; ENTRY }
pool P { cap 100; }
pool Q { cap 100; }
workload { arrive batch(1); }
session {
  hold P (10) { observe a = now; } lease P (inf);
  hold Q (10) { L.CALL (8) from P to Q (6); } cache (10);
}
run { horizon 20; }
"""


def _refused(src: str) -> str:
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=src, sets={}, defs={})
    return str(e.value)


def test_latency_on_a_link_with_an_entry_is_refused_at_the_clause():
    src = LINK.replace("ROLE", "link").replace("ENTRY", "transfer (n) { run (n / 2); }").replace("CALL", "transfer")
    line = src.splitlines()[0]
    col = line.index("latency") + 1
    assert _refused(src) == (f"<source>:1:{col}: error: `latency` on link `L`: only a link without an entry takes "
                             f"one (an entry's body is the read)\n  {line}\n  {' ' * (col - 1)}^")


def test_latency_written_over_lines_is_refused_at_its_word():
    src = LINK.replace("ROLE", "link").replace("ENTRY", "transfer (n) { run (n / 2); }").replace("CALL", "transfer")
    src = src.replace(" latency 1;", "\n    latency\n      1;")
    assert _refused(src).split("\n")[:3] == ["<source>:2:5: error: `latency` on link `L`: only a link without an "
                                             "entry takes one (an entry's body is the read)", "      latency",
                                             "      ^"]


def test_latency_on_a_queue_that_is_no_link_is_refused_at_the_clause():
    src = ("queue L : prefill { serve ps(10) latency 1; prefill (n) { run (n / 2); } }\n"
           "workload { arrive batch(1); }\nsession { L.prefill (3); }\nrun { horizon 20; }\n")
    line = src.splitlines()[0]
    col = line.index("latency") + 1
    assert _refused(src) == (f"<source>:1:{col}: error: `latency` on the serve of `L`: only a link's serve takes "
                             f"one\n  {line}\n  {' ' * (col - 1)}^")


def test_a_link_without_an_entry_still_takes_its_latency():
    src = LINK.replace("ROLE", "link").replace(" ENTRY", "").replace("L.CALL (8) from P to Q (6);",
                                                                     "transfer on L (8) from P to Q (6);")
    assert serq_frontend.compile(source=src, sets={}, defs={}) is not None


PULL = """queue P[2] : prefill { pool kv { cap 100; } serve delay; nic ps(10); prefill (prompt) { hold kv (prompt) { prefill (1); } cache (prompt) lease kv (inf); } }
queue D : decode { pool kv { cap 100; } serve fifo; nic ps(10); decode (prompt) from src { hold kv (prompt) { transfer (prompt) from src to kv (prompt); decode (1); } } }
queue Q[2] : prefill { pool kv { cap 10; } serve delay; nic ps(1); prefill (p) { hold kv (p) { prefill (1); } lease kv (inf); } }
D pull P latency 1 share maxmin;
workload { arrive batch(1); }
session { set prompt = 5; Q[0].prefill (prompt); D.decode (prompt) from Q[0]; }
run { horizon 20; }
"""


def test_a_reader_called_from_another_queue_is_refused_at_the_call():
    lines = PULL.splitlines()
    call, read = lines[5], lines[1]
    at = call.index("Q[0];") + 1
    by = read.index("transfer (prompt)") + 1
    assert _refused(PULL) == (
        f"<source>:6:{at}: error: `D.decode` is called `from Q[…]`, and `D` pulls from `P` (`D pull P`): an entry "
        f"of `D` that reads is called `from P[…]`\n  {call}\n  {' ' * (at - 1)}^\n"
        f"<source>:2:{by}: note: the read of `D.decode`, a `transfer` without `on`, takes from the call's `from`\n"
        f"  {read}\n  {' ' * (by - 1)}^")


def test_a_reader_called_from_its_source_compiles():
    src = PULL.replace("D.decode (prompt) from Q[0];", "D.decode (prompt) from P[1];")
    assert serq_frontend.compile(source=src, sets={}, defs={}) is not None
