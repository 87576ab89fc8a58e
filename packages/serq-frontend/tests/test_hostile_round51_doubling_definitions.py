"""A definition whose body uses another on what a use of that one gives (``def d1(x) = d0(d0(x));`` …) doubles
the depth of what it writes out at each step, while the nodes it writes out stay far below the bound on them
(consts.MAX_WRITTEN): ``d15`` is 2**15 deep in some 65 000 nodes. Sixteen such lines were a RecursionError of
the passes after the definitions layer, said as the unlocated ``p.sq: error: the program nests too deeply to
compile`` (no line, no caret). The use that would write out an expression deeper than a program's text may
nest (serq_frontend.MAX_NESTING) is refused at its place; below that, a body deeper than the linker's 64 is
refused by the linker where the program uses it, as before, and a definition no one uses is not. So it was
of statement definitions, each using the one before inside 900 branches (the sixth nested 4 500 deep), and of
a queue's entries, each calling the next queue's inside 900 branches: a call that would write out statements
nested past the bound is refused at the call."""

from __future__ import annotations

import subprocess

import pytest
from serq_frontend import MAX_NESTING, CompileError
from sqhelpers import SERQ, compile_src

TAIL = "stage svc : fifo;\nworkload { arrive poisson(1); }\nsession {\n  run svc ({use});\n  end;\n}\nrun { horizon 10; }\n"


def doubling(n: int, use: str = "1") -> str:
    """``d0(x) = x + now`` and ``d{k}(x) = d{k-1}(d{k-1}(x))`` up to ``d{n-1}``: ``d{k}`` is ``x`` with ``+ now``
    written out 2**k times around it, 2**k + 1 deep."""
    lines = ["def d0(x) = x + now;"] + [f"def d{k}(x) = d{k - 1}(d{k - 1}(x));" for k in range(1, n)]
    return "\n".join(lines) + "\n" + TAIL.replace("{use}", use)


# d9 is 2**9 + 1 = 513 deep with x at its deepest level; d10's outer use of d9 puts d9(x) (513 deep) there:
# 512 + 513 = 1025 deep, the first use past 1000. It is on line 11 (d10's), at the outer `d9`, column 14.
FIRST = ("<source>:11:14: error: this use of `d9` writes out an expression that nests 1025 deep, more than "
         f"{MAX_NESTING} (operators, calls and conditionals inside one another)")


@pytest.mark.parametrize("n", [11, 16, 40])
def test_a_use_that_would_nest_past_the_bound_is_refused_at_its_place(n):
    with pytest.raises(CompileError) as e:
        compile_src(doubling(n, f"d{n - 1}(1)"))
    first = str(e.value).splitlines()[0]
    assert first.startswith(FIRST), first
    assert (e.value.line, e.value.col) == (11, 14)


def test_the_definitions_alone_are_refused_the_same():
    with pytest.raises(CompileError) as e:
        compile_src(doubling(16))  # (none of them used)
    assert str(e.value).splitlines()[0].startswith(FIRST)


def test_below_the_bound_unused_definitions_compile_and_a_use_is_the_linkers_refusal():
    # d9 is 513 deep: written out without refusal, as before; a program that uses it is the linker's refusal
    # of an expression more than 64 deep, with the expansions it came through
    program = compile_src(doubling(10))
    assert [s.name for s in program.stages] == ["svc"]
    with pytest.raises(CompileError) as e:
        compile_src(doubling(10, "d9(1)"))
    assert "error: this expression nests more than 64 deep" in str(e.value).splitlines()[0]
    assert "note: in the expansion of `d9`, used here" in str(e.value)


def branches(n: int) -> str:
    """``s0() { set y = 1; }`` and ``s{k}()``, which uses ``s{k-1}`` inside 900 branches, up to ``s{n-1}``."""
    lines = ["def s0() { set y = 1; }"]
    for k in range(1, n):
        lines.append(f"def s{k}() {{ " + "branch (y > 0) { " * 900 + f"s{k - 1}(); " + "} " * 900 + "}")
    return "\n".join(lines) + "\n" + TAIL.replace("{use}", "1").replace("session {", "session {\n  set y = 0;")


@pytest.mark.parametrize("n", [3, 6])
def test_statement_definitions_nested_past_the_bound_are_refused_at_the_use(n):
    # s1's body is 902 deep (900 branches, s0's `set` inside them, its value); s2 uses s1 inside 901 blocks
    # (its body's and its 900 branches'): 901 + 902 = 1803, at the use on s2's line (3), after `def s2() { `
    # (11 characters) and 900 `branch (y > 0) { ` (17 each): column 11 + 900 * 17 + 1
    with pytest.raises(CompileError) as e:
        compile_src(branches(n))
    first = str(e.value).splitlines()[0]
    assert first.startswith("<source>:3:15312: error: this use of `s1` writes out statements that nest 1803 deep, "
                            f"more than {MAX_NESTING} (blocks, statements and expressions inside one another)"), first


def queues(n: int) -> str:
    """``Q0``, whose prefill runs, and ``Q{k}``, whose prefill calls ``Q{k-1}``'s inside 900 branches."""
    lines = ["queue Q0 : prefill { pool kv { cap 100; } serve fifo; prefill (prompt) { run (prompt); } }"]
    for k in range(1, n):
        lines.append(f"queue Q{k} : prefill {{ pool kv {{ cap 100; }} serve fifo; prefill (prompt) {{ "
                     + "branch (prompt > 0) { " * 900 + f"Q{k - 1}.prefill (prompt); " + "} " * 900 + "} }")
    return ("\n".join(lines) + "\nworkload { arrive poisson(0.5); }\nsession {\n  set prompt = 1;\n"
            f"  Q{n - 1}.prefill (prompt);\n  end;\n}}\nrun {{ horizon 10; }}\n")


@pytest.mark.parametrize("n", [3, 8])
def test_entries_calling_entries_past_the_bound_are_refused_at_the_call(n):
    # the session's call of Q{n-1} writes out its body, 902 deep (900 branches, the call, its argument), in the
    # session's block: 903; inside it, the call of Q{n-2} stands 902 blocks deep (the session's, Q{n-1}'s
    # body's, 900 branches') and writes out a body 902 deep: 1804. On Q{n-1}'s line (n), after the entry's
    # header (`queue Q2 : prefill { pool kv { cap 100; } serve fifo; prefill (prompt) { `, 73 characters) and
    # 900 `branch (prompt > 0) { ` (22 each)
    with pytest.raises(CompileError) as e:
        compile_src(queues(n))
    lines = str(e.value).splitlines()
    assert lines[0].startswith(f"<source>:{n}:{73 + 900 * 22 + 1}: error: this call of `Q{n - 2}.prefill` writes out "
                               f"its entry's body 1804 deep, more than {MAX_NESTING}"), lines[0]
    assert f"<source>:{n + 4}:3: note: in the expansion of `Q{n - 1}.prefill`, used here" in lines


def test_a_chain_of_entries_each_calling_the_next_is_refused_where_it_passes_the_bound():
    # Q{k}'s prefill calls Q{k-1}'s, 3 000 queues, no branch: each call is written out inside the entry that
    # calls it, one level deeper. The session's call of Q2999 stands in its block (1) and writes out a body 2
    # deep (the call, its argument): 3; each call inside it one more, so Q{2999-m}'s call is 3 + m deep. That
    # of Q2001 (m = 998) is the first past 1 000, in Q2002's entry (line 2003), after its 76 characters of
    # header (`queue Q2002 : prefill { pool kv { cap 100; } serve fifo; prefill (prompt) { `). It was a
    # RecursionError, said as `p.sq: error: the program nests too deeply to compile`.
    lines = ["queue Q0 : prefill { pool kv { cap 100; } serve fifo; prefill (prompt) { run (prompt); } }"]
    lines += [f"queue Q{k} : prefill {{ pool kv {{ cap 100; }} serve fifo; prefill (prompt) {{ Q{k - 1}.prefill "
              "(prompt); } }" for k in range(1, 3000)]
    src = "\n".join(lines) + "\nworkload { arrive poisson(0.5); }\nsession {\n  set prompt = 1;\n  " \
        "Q2999.prefill (prompt);\n  end;\n}\nrun { horizon 10; }\n"
    with pytest.raises(CompileError) as e:
        compile_src(src)
    first = str(e.value).splitlines()[0]
    assert first.startswith("<source>:2003:77: error: this call of `Q2001.prefill` writes out its entry's body 1001 "
                            f"deep, more than {MAX_NESTING}"), first


def test_the_command_says_it_at_the_line_with_a_caret(tmp_path):
    (tmp_path / "p.sq").write_text(doubling(40, "d39(1)"))
    r = subprocess.run([SERQ, "check", "p.sq"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert lines[0].startswith(FIRST.replace("<source>", "p.sq")), lines
    assert lines[1:3] == ["  def d10(x) = d9(d9(x));", "               ^"], lines
    assert "Traceback" not in r.stderr
    assert r.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]
