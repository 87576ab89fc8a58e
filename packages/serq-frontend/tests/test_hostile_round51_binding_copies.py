"""A hold's `at admission (…)` bindings are substituted where the header reads them and set at the body's top
where the body does, and what that wrote out was not counted against the bound on what a program writes out
(consts.MAX_WRITTEN, 200 000 nodes): a header reading a binding of 5 000 terms 5 000 times (a file of 85 kB)
made 50 000 000 nodes, and `serq check` ran past 380 s and 21 GB; bindings that each read the one before twice
(`h1 = max(h0, h0)`, … `h39`) share their values, but every pass after this one walks the header as a tree of
2**40 nodes, and never ended. The substitution is now counted before it is made, and refused at the
expression (or the binding the body reads) that passes the bound, or that would nest past 1 000 deep."""

from __future__ import annotations

import subprocess

import pytest
from serq_frontend import CompileError
from serq_frontend.consts import MAX_WRITTEN
from sqhelpers import SERQ, compile_src

TAIL = ("(expressions and statements) in all; compute a part once with `set`")


def program(units: str, bindings: str, body: str = "run svc (1);", before: str = "") -> str:
    return (f"pool kv {{ cap 100; }}\nstage svc : fifo;\nworkload {{ arrive poisson(0.5); }}\nsession {{\n{before}"
            f"  hold kv ({units}) at admission ({bindings}) {{\n    {body}\n  }}\n  end;\n}}\n"
            "run { horizon 10; }\n")


def doubling(n: int, first: str = "cachedin(kv)") -> str:
    return ", ".join([f"h0 = {first}"] + [f"h{i} = max(h{i - 1}, h{i - 1})" for i in range(1, n)])


def test_a_header_reading_a_large_binding_many_times_is_refused_at_it():
    # h is max(…) of 5 000 `cachedin(kv)` (2 nodes each: the call, kv's name), 10 001 nodes; the units read it
    # 5 000 times, each read's 1 node replaced: 5 000 x 10 000 nodes added
    big = "max(" + ", ".join(["cachedin(kv)"] * 5000) + ")"
    with pytest.raises(CompileError) as e:
        compile_src(program("max(" + ", ".join(["h"] * 5000) + ")", f"h = {big}"))
    assert str(e.value).splitlines()[0] == (
        "<source>:5:12: error: this expression, with the bindings it reads put in, writes out 50000000 nodes, and "
        "the program's definitions, aggregates, queue calls and requests of its server written out make more than "
        f"{MAX_WRITTEN} nodes {TAIL}")


def test_bindings_that_double_are_refused_where_the_header_reads_them():
    # h0 is 2 nodes (cachedin and kv's name), h{k} 1 + 2 x h{k-1}'s = 3 x 2**k - 1: h39 is 3 x 2**39 - 1, put in
    # for the one node that read it
    with pytest.raises(CompileError) as e:
        compile_src(program("h39", doubling(40)))
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"<source>:5:12: error: this expression, with the bindings it reads put in, writes out "
                            f"{3 * 2 ** 39 - 2} nodes"), first


def test_a_doubling_binding_the_body_reads_is_refused_at_the_binding():
    # h0 = a is 1 node, h{k} 2**(k+1) - 1: h39 is 2**40 - 1, set whole at the body's top
    bindings = doubling(40, "a")
    with pytest.raises(CompileError) as e:
        compile_src(program("1", bindings, "run svc (h39);", before="  set a = 1;\n"))
    first = str(e.value).splitlines()[0]
    col = len("  hold kv (1) at admission (") + bindings.index("h39 =") + 1
    assert first.startswith(f"<source>:6:{col}: error: the binding `h39`, set for the body to read, writes out "
                            f"{2 ** 40 - 1} nodes"), first


def test_a_chain_of_bindings_nested_past_the_bound_is_refused():
    # h{k} = h{k-1} + 1: h1199 is 1 201 deep (1 199 `+`, then cachedin and kv's name)
    bindings = ", ".join(["h0 = cachedin(kv)"] + [f"h{i} = h{i - 1} + 1" for i in range(1, 1200)])
    with pytest.raises(CompileError) as e:
        compile_src(program("h1199", bindings))
    assert str(e.value).splitlines()[0].startswith(
        "<source>:5:12: error: this expression, with the bindings it reads put in, nests 1201 deep, more than 1000")


def test_bindings_read_within_the_bound_compile_as_before():
    # the chain read at h50 (52 deep, 102 nodes) and a doubling read at h10 (3 x 2**10 - 1 nodes, 12 deep)
    bindings = ", ".join(["h0 = cachedin(kv)"] + [f"h{i} = h{i - 1} + 1" for i in range(1, 1200)])
    assert compile_src(program("h50", bindings)).pools[0].name == "kv"
    assert compile_src(program("h10", doubling(40))).pools[0].name == "kv"


def test_the_command_says_it_in_one_message(tmp_path):
    (tmp_path / "p.sq").write_text(program("h39", doubling(40)))
    r = subprocess.run([SERQ, "check", "p.sq"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert lines[0].startswith("p.sq:5:12: error: this expression, with the bindings it reads put in, writes out"), lines
    assert lines[1].startswith("    hold kv (h39) at admission (h0 = cachedin(kv), h1 = max(h0, h0)"), lines
    assert lines[2:] == ["  " + " " * 11 + "^"], lines
    assert r.stdout == ""
