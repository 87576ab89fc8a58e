"""An error deep in definitions used inside one another notes the innermost and the outermost uses, not
every one (serq.errors.noted, MAX_NOTES: the compile-time diagnostics' and the run-time errors' rule).

40 statement definitions each a `branch` around the next, used from the session, were refused at the 33rd
branch with 33 notes, 102 lines for one error; a run-time error in a definition 40 uses deep had 40 notes.
Now 4 innermost and 4 outermost, and one line saying how many are left out between them."""

from __future__ import annotations

import re

import pytest
import serq_frontend
import serq_sim
from serq.errors import place

pytestmark = pytest.mark.timeout(60)

TAIL = "stage s : delay;\npool kv[2] { cap 5; }\nworkload { arrive poisson(1); }\nsession { BODY }\nrun { horizon 5; }\n"


def _statement_chain(n: int) -> str:
    """``t0`` … ``t{n-1}``, each a branch around the one before, the last used by the session (at line n + 4)."""
    defs = "def t0(a) { branch (a > 0) { run s (a); } }\n"
    defs += "".join(f"def t{i}(a) {{ branch (a > 0) {{ t{i - 1}(a); }} }}\n" for i in range(1, n))
    return defs + TAIL.replace("BODY", f"t{n - 1}(1);")


def _notes(message: str) -> list[str]:
    return [line for line in message.splitlines() if ": note: " in line or line.startswith("note: ")]


def test_a_compile_error_forty_definitions_deep_notes_four_and_four():
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=_statement_chain(40))
    message = str(info.value)
    # the 33rd branch from the session's is t7's (t39 … t7); it is used in t8, …, t39, and t39 in the session:
    # 33 uses, of which 8 are noted
    assert message.splitlines()[0].startswith("<source>:8:13: error: loops, branches and holds nest more than 32")
    notes = _notes(message)
    # (t{i} is used in t{i + 1}'s line, i + 2, at column 30 or, from t10's line on, 31)
    uses = [f"<source>:{i + 2}:{30 if i < 9 else 31}: note: in the expansion of `t{i}`, used here"
            for i in (7, 8, 9, 10)] + \
        ["note: … 25 expansions more, each used inside the next, left out …"] + \
        [f"<source>:{i + 2}:31: note: in the expansion of `t{i}`, used here" for i in (36, 37, 38)] + \
        ["<source>:44:11: note: in the expansion of `t39`, used here"]
    assert notes == uses
    assert len(message.splitlines()) == 3 + 3 * 8 + 1  # each note with its line and caret


@pytest.mark.parametrize("n", [1, 8])
def test_up_to_eight_uses_are_all_noted(n):
    defs = "def f0(x) = y;\n" + "".join(f"def f{i}(x) = f{i - 1}(x);\n" for i in range(1, n))
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=defs + TAIL.replace("BODY", f"run s (f{n - 1}(1));"))
    notes = _notes(str(info.value))
    assert len(notes) == n and not any("left out" in note for note in notes)
    assert notes[-1] == f"<source>:{n + 4}:18: note: in the expansion of `f{n - 1}`, used here"


def _run_time_chain(n: int) -> str:
    defs = "def f0(x) = used(kv[x + 5]);\n" + "".join(f"def f{i}(x) = f{i - 1}(x);\n" for i in range(1, n))
    return defs + TAIL.replace("BODY", f"run s (1 + f{n - 1}(floor(now)));")


def test_a_run_time_error_forty_definitions_deep_notes_four_and_four():
    program = serq_frontend.compile(source=_run_time_chain(40))
    with pytest.raises(serq_sim.SimError) as info:
        serq_sim.run(program)
    message = str(info.value)
    assert message.splitlines()[0] == ("<source>:1:18: error: at t=0, session 0: pool kv: index 5 out of range (the "
                                       "family has 2)")
    notes = _notes(message)
    assert notes == [f"<source>:{i + 2}:13: note: in the expansion of `f{i}`, used here" for i in range(4)] + \
        ["note: … 32 expansions more, each used inside the next, left out …"] + \
        [f"<source>:{i + 2}:14: note: in the expansion of `f{i}`, used here" for i in (36, 37, 38)] + \
        ["<source>:44:22: note: in the expansion of `f39`, used here"]


def test_the_one_line_place_of_a_deep_span_says_the_same_uses():
    program = serq_frontend.compile(source=_run_time_chain(40))
    spans = [n.span for n in _nodes(program.session) if getattr(n, "span", None) is not None
             and len(getattr(n.span, "via", ())) == 40]
    assert spans
    shown = place(spans[0])
    assert re.findall(r"in `(f\d+)`", shown) == ["f0", "f1", "f2", "f3", "f36", "f37", "f38", "f39"]
    assert " … 32 uses more … " in shown  # (the IR keeps all 40 uses: only what a message shows is cut)


def _nodes(obj):
    """Every msgspec node under ``obj``."""
    import msgspec

    todo = [obj]
    while todo:
        x = todo.pop()
        if isinstance(x, list | tuple):
            todo.extend(x)
        elif isinstance(x, msgspec.Struct):
            yield x
            todo.extend(getattr(x, f) for f in x.__struct_fields__)
