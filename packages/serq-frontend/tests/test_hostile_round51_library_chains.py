"""Libraries that use one another in a long chain (l0.sq uses l1.sq, which uses l2.sq, …). A chain of 9 000 was
a RecursionError of the definitions layer, said as the unlocated ``main.sq: error: the program nests too
deeply to compile``; a chain of 1 000 with an error at its end noted every library of it, 3 000 lines. Now a
`use` more than 1 000 libraries deep is refused at it, and the notes of the uses an error is reached through
are at most serq.errors.MAX_NOTES, the innermost and the outermost, as the expansions of definitions are."""

from __future__ import annotations

import subprocess

import pytest
import serq_frontend
from serq.errors import MAX_NOTES
from serq_frontend import CompileError
from serq_frontend.sugar.defs import MAX_USE_DEPTH
from sqhelpers import SERQ, make_pm

MAIN = ('use "l0.sq";\nstage svc : fifo;\nworkload { arrive poisson(0.5); }\nsession { run svc (1); end; }\n'
        "run { horizon 10; }\n")


def chain(folder, n: int, last: str = "def f() = 1;\n") -> None:
    """``l0.sq`` … ``l{n-1}.sq``, each using the next; the last holds ``last``; ``main.sq`` uses ``l0.sq``."""
    for i in range(n - 1):
        (folder / f"l{i}.sq").write_text(f'use "l{i + 1}.sq";\ndef f{i}() = {i};\n')
    (folder / f"l{n - 1}.sq").write_text(last)
    (folder / "main.sq").write_text(MAIN)


def compiled(folder):
    return serq_frontend.compile(folder / "main.sq", pm=make_pm())


def test_a_chain_as_deep_as_the_bound_compiles(tmp_path):
    chain(tmp_path, MAX_USE_DEPTH)
    assert [s.name for s in compiled(tmp_path).stages] == ["svc"]


@pytest.mark.parametrize("n", [MAX_USE_DEPTH + 1, 9000])
def test_a_use_past_the_bound_is_refused_at_it_with_the_outermost_and_innermost_uses(tmp_path, n):
    chain(tmp_path, n)
    with pytest.raises(CompileError) as e:
        compiled(tmp_path)
    lines = str(e.value).splitlines()
    # main.sq reads l0 … l999, 1 000 deep; l999's use of l1000 would be the 1 001st
    assert lines[:3] == [f'{tmp_path}/l999.sq:1:1: error: `use "l1000.sq"`: libraries use one another more than '
                         "1000 deep here (each `use` in a library read by a `use`); use the libraries the program "
                         "needs from the program itself", '  use "l1000.sq";', "  ^"], lines[:3]
    notes = [x for x in lines if ": note: in the library " in x]
    assert len(notes) == MAX_NOTES
    assert notes[0] == f"{tmp_path}/l998.sq:1:1: note: in the library `l999.sq`, used here"
    assert notes[-1] == f"{tmp_path}/main.sq:1:1: note: in the library `l0.sq`, used here"
    assert f"note: … {1000 - MAX_NOTES} libraries more, each used by the next, left out …" in lines
    assert len(lines) == 3 + 3 * MAX_NOTES + 1


def test_an_error_at_the_end_of_a_chain_is_noted_with_its_ends(tmp_path):
    chain(tmp_path, 600, "def f() = ;\n")
    with pytest.raises(CompileError) as e:
        compiled(tmp_path)
    lines = str(e.value).splitlines()
    assert lines[0].startswith(f"{tmp_path}/l599.sq:1:11: error: unexpected `;`"), lines[0]
    notes = [x for x in lines if ": note: in the library " in x]
    assert notes[:2] == [f"{tmp_path}/l598.sq:1:1: note: in the library `l599.sq`, used here",
                         f"{tmp_path}/l597.sq:1:1: note: in the library `l598.sq`, used here"]
    assert notes[-1] == f"{tmp_path}/main.sq:1:1: note: in the library `l0.sq`, used here"
    assert len(notes) == MAX_NOTES
    assert f"note: … {600 - MAX_NOTES} libraries more, each used by the next, left out …" in lines


def test_a_short_chain_notes_every_use_as_before(tmp_path):
    chain(tmp_path, 3, "def f() = ;\n")
    with pytest.raises(CompileError) as e:
        compiled(tmp_path)
    lines = str(e.value).splitlines()
    assert [x for x in lines if ": note: " in x] == [
        f"{tmp_path}/l1.sq:1:1: note: in the library `l2.sq`, used here",
        f"{tmp_path}/l0.sq:1:1: note: in the library `l1.sq`, used here",
        f"{tmp_path}/main.sq:1:1: note: in the library `l0.sq`, used here"]
    assert not any("left out" in x for x in lines)


def test_the_command_says_it_in_one_message(tmp_path):
    chain(tmp_path, 9000)
    r = subprocess.run([SERQ, "check", "main.sq"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == ('l999.sq:1:1: error: `use "l1000.sq"`: libraries use one another more '
                                        "than 1000 deep here (each `use` in a library read by a `use`); use the "
                                        "libraries the program needs from the program itself"), r.stderr[:300]
    assert "Traceback" not in r.stderr and "too deeply to compile" not in r.stderr
    assert len(r.stderr.splitlines()) == 3 + 3 * MAX_NOTES + 1
    assert r.stdout == ""
