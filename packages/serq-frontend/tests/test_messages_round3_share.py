"""`share` given twice names every place that gives it (language.txt §2: "A program with a relation does not
also write share on its own"; a program divides its stages one way).

With several pull relations and a `share` of the program's own, the error named the first relation alone,
"the pull relation `D pull P` names the program's share", wherever the `share` stood and however many
relations named it; two `share` items were "`share` is given twice" at the second, with no word of the first.
Now every relation is named, each with a note where it stands, and the second `share` notes the first.
"""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src, located

PAIRS = """queue P[1] : prefill { pool kv { cap 100; } serve fifo; nic ps(4); prefill (prompt) { hold kv (prompt) { run (prompt); } cache (prompt) lease kv (inf); } }
queue D[1] : decode { pool kv { cap 100; } serve fifo; nic ps(2); decode (prompt) from src { hold kv (prompt) { transfer (prompt) from src to kv (prompt - 1); run (1); } } }
queue P2 : prefill { pool kv { cap 100; } serve fifo; nic ps(4); prefill (prompt) { hold kv (prompt) { run (prompt); } cache (prompt) lease kv (inf); } }
queue D2 : decode { pool kv { cap 100; } serve fifo; nic ps(2); decode (prompt) from src { hold kv (prompt) { transfer (prompt) from src to kv (prompt - 1); run (1); } } }
D pull P latency 0.5 share maxmin;
D2 pull P2 latency 0.25 share maxmin;
queue gw : gateway { route { P[0].prefill (prompt); D[0].decode (prompt) from P[0]; P2.prefill (prompt); D2.decode (prompt) from P2; } }
workload { arrive batch(1); turn { set prompt = 4; } session { turn; request gw; end; } }
run { horizon 20; }
"""
TWO = ("`share` is given twice: the pull relations `D pull P` and `D2 pull P2` name the program's share; a program "
       "with a pull relation writes no `share` of its own")


def _lines(src: str) -> list[str]:
    text, line, col = located(src)
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(text)
    lines = str(info.value).splitlines()
    assert lines[0].startswith(f"<source>:{line}:{col}: error: "), lines[0]
    return lines


def _notes(lines: list[str]) -> list[str]:
    return [x.split(": note: ", 1)[1] for x in lines if ": note: " in x]


def _note_places(lines: list[str]) -> list[str]:
    return [x.split(": note: ", 1)[0] for x in lines if ": note: " in x]


@pytest.mark.parametrize("src", [
    PAIRS + "⟨share maxmin;\n",  # after both relations
    PAIRS.replace("D2 pull", "⟨share maxmin;\nD2 pull"),  # between them: it named the one above alone
    PAIRS.replace("D pull", "⟨share maxmin;\nD pull"),  # before both
])
def test_every_relation_is_named_and_noted(src):
    lines = _lines(src)
    assert lines[0].endswith(TWO), lines[0]
    assert _notes(lines) == ["`D pull P` names `share maxmin` here", "`D2 pull P2` names `share maxmin` here"]
    text = located(src)[0].splitlines()
    for place, name in zip(_note_places(lines), ("D pull P", "D2 pull P2")):
        line = int(place.split(":")[1])
        assert text[line - 1].startswith(name)


def test_one_relation_is_named_alone():
    one = PAIRS.replace("D2 pull P2 latency 0.25 share maxmin;\n", "").replace(" D2.decode (prompt) from P2;", "")
    lines = _lines(one.replace("D pull", "⟨share maxmin;\nD pull"))
    assert lines[0].endswith("`share` is given twice: the pull relation `D pull P` names the program's share; a "
                             "program with a pull relation writes no `share` of its own")
    assert _notes(lines) == ["`D pull P` names `share maxmin` here"]


def test_a_second_share_notes_the_first():
    src = ("stage a : ps(1);\nstage b : ps(1);\nshare maxmin;\nworkload { arrive batch(1); }\n"
           "session { run a, b (1); }\n⟨share bottleneck;\nrun { horizon 5; }\n")
    lines = _lines(src)
    assert lines[0].endswith("`share` is given twice: a program divides its stages one way and says it once; the "
                             "first is `share maxmin`")
    assert lines[3:] == ["<source>:3:1: note: the first `share maxmin` is here", "  share maxmin;", "  ^"]


def test_the_relations_alone_compile():
    compile_src(PAIRS)
