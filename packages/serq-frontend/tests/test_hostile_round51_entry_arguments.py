"""A call of a queue's entry puts each argument in at every read of its parameter in the entry's body, shared
rather than copied, and that was not counted against the bound on what a program writes out
(consts.MAX_WRITTEN, 200 000 nodes): an argument of 5 000 terms to an entry that reads its parameter 5 000 times
made 25 000 000 nodes (2.6 GB in a minute, no end); forty queues whose entries each call the next on
`max(prompt, prompt)` passed the last an argument of 2**40 nodes in a few objects, which the checks of an
argument walked as a tree, without end. A call is now counted with its arguments before anything walks them."""

from __future__ import annotations

import subprocess

import pytest
from serq_frontend import CompileError
from serq_frontend.consts import MAX_WRITTEN
from sqhelpers import SERQ, compile_src

HEAD = "queue Q{k} : prefill {{ pool kv {{ cap 100; }} serve fifo; prefill (prompt) {{ {body} }} }}"
TAIL = "workload { arrive poisson(0.5); }\nsession {\n  set a = 1;\n  {call}\n  end;\n}\nrun { horizon 10; }\n"


def wide(terms: int) -> str:
    """Q0's prefill runs `max(prompt, …)` of ``terms`` reads; the session calls it on `max(a, …)` of ``terms``."""
    body = "run (max(" + ", ".join(["prompt"] * terms) + "));"
    call = "Q0.prefill (max(" + ", ".join(["a"] * terms) + "));"
    return HEAD.format(k=0, body=body) + "\n" + TAIL.replace("{call}", call)


def doubling(n: int) -> str:
    """Q0 runs its prompt; Q{k} calls Q{k-1} on `max(prompt, prompt)`; the session calls Q{n-1} on `a`."""
    lines = [HEAD.format(k=0, body="run (prompt);")]
    lines += [HEAD.format(k=k, body=f"Q{k - 1}.prefill (max(prompt, prompt));") for k in range(1, n)]
    return "\n".join(lines) + "\n" + TAIL.replace("{call}", f"Q{n - 1}.prefill (a);")


def test_a_wide_argument_read_many_times_is_refused_at_the_call():
    # the argument is 5 001 nodes (max and 5 000 names), put in for each of 5 000 one-node reads
    with pytest.raises(CompileError) as e:
        compile_src(wide(5000))
    assert str(e.value).splitlines()[0] == (
        "<source>:5:3: error: this call of `Q0.prefill`, its arguments put in where the entry reads them, writes out "
        "25000000 nodes, and the program's definitions, aggregates, queue calls and requests of its server written "
        f"out make more than {MAX_WRITTEN} nodes (expressions and statements) in all; compute a part once with `set`")


def test_arguments_that_double_at_each_call_are_refused_where_they_pass_the_bound():
    # Q{39-m} is called on an argument of 2**(m+1) - 1 nodes (a, then max of two of the one before) and reads it
    # twice: 2 x (2**(m+1) - 2) nodes put in, some 131 000 through m = 14 with the bodies; m = 15, the call of
    # Q24 in Q25's entry (line 26, Q0's is 1), puts in 2 x (2**16 - 2) = 131 068 more and passes 200 000
    with pytest.raises(CompileError) as e:
        compile_src(doubling(40))
    lines = str(e.value).splitlines()
    assert lines[0].startswith("<source>:26:75: error: this call of `Q24.prefill`, its arguments put in where the entry "
                               "reads them, writes out 131068 nodes"), lines[0]
    assert "<source>:27:75: note: in the expansion of `Q25.prefill`, used here" in lines


def test_arguments_within_the_bound_compile_as_before():
    assert compile_src(wide(50)).pools[0].name == "Q0.kv"
    assert len(compile_src(doubling(8)).stages) == 8


def test_the_command_says_it_in_one_message(tmp_path):
    (tmp_path / "p.sq").write_text(doubling(40))
    r = subprocess.run([SERQ, "check", "p.sq"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stderr.startswith("p.sq:26:75: error: this call of `Q24.prefill`, its arguments put in where the entry "
                               "reads them, writes out 131068 nodes"), r.stderr[:300]
    assert "Traceback" not in r.stderr and r.stdout == ""
