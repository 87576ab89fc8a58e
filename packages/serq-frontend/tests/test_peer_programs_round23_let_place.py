"""A capacity planner named the gateway's slots `let c = 64;` beside `use "vllm.sq";`, whose `vllm_request` sets an
attribute `c`. The compile refused it at the library's `set c = cached;`, with notes down to the program's call,
but nowhere named the program's own `let c`, the name to change. The refusal of a `set` (or any attribute
write) of a `let`'s name now ends with the place of the `let`: its line and column in the file of the refusal,
its file too when that is another (serq_frontend.link, ``assign``). The IR of a program that compiles is
unchanged: this is the words of an error."""

from __future__ import annotations

import pytest
import serq_frontend

pytestmark = pytest.mark.timeout(60)

LIBRARY = """def stamp(t) {
  set c = t;
  observe got = c;
}
"""

PROGRAM = """use "lib.sq";
let lam = 1;
let c = 64;
stage s : delay;
workload { arrive poisson(lam); }
session {
  run s (1);
  stamp(serial);
}
run { horizon 10; }
"""


def test_a_set_in_a_library_names_the_programs_let(tmp_path):
    (tmp_path / "lib.sq").write_text(LIBRARY)
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(path=str(tmp_path / "p.sq"))
    lines = str(e.value).splitlines()
    assert lines[0] == (f"{tmp_path / 'lib.sq'}:2:3: error: `c` is a `let` constant and an attribute this sets: "
                        "give them two names (the attribute would be read where the constant was meant; the `let` "
                        f"is at {tmp_path / 'p.sq'}:3:5)"), lines
    assert lines[1:3] == ["    set c = t;", "    ^"]
    assert lines[3] == f"{tmp_path / 'p.sq'}:8:3: note: in the expansion of `stamp`, used here", lines


def test_a_set_in_the_same_file_names_the_lets_line_and_column(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text("stage s : delay;\nlet x = 3;\nworkload { arrive poisson(1); }\nsession { set x = 2; run s (x); }\n")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(path=str(p))
    assert str(e.value).splitlines()[0] == (
        f"{p}:4:11: error: `x` is a `let` constant and an attribute this sets: give them two names (the attribute "
        "would be read where the constant was meant; the `let` is at 2:5)")


def test_renamed_the_program_compiles(tmp_path):
    (tmp_path / "lib.sq").write_text(LIBRARY)
    (tmp_path / "p.sq").write_text(PROGRAM.replace("let c = 64;", "let slots = 64;"))
    program = serq_frontend.compile(path=str(tmp_path / "p.sq"))
    assert [a.name for a in program.attributes if not a.builtin] == ["c"]
