"""Libraries that use one another in a cycle are refused at the `use` that closes it. Each library is read
once, its uses before its definitions, so the library the cycle came back to had its definitions read
before the other's they used: a program that used `a.sq` first compiled, the same program using `b.sq`
first was `unknown function` at a call of a function `b.sq` defines (which `a.sq` says it uses)."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq_frontend import CompileError

PROGRAM = ("use \"{lib}\";\nstage svc : fifo;\nworkload {{ arrive poisson(1); }}\n"
           "session {{ run svc (fa()); observe r = fb(); end; }}\nrun {{ horizon 10; }}\n")
RULE = ("libraries use one another one way only (each is read once, its uses first: in a cycle, one library's "
        "definitions are read before the other's they use)")


def _error(path: Path) -> list[str]:
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(path)
    return str(e.value).splitlines()


def _libraries(tmp_path: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)


@pytest.mark.parametrize("first, inner, back", [("a.sq", "b.sq", "a.sq"), ("b.sq", "a.sq", "b.sq")])
def test_a_cycle_of_two_is_refused_whichever_the_program_uses(tmp_path, monkeypatch, first, inner, back):
    monkeypatch.setenv("SERQ_CACHE_DIR", "")
    _libraries(tmp_path, {"a.sq": 'use "b.sq";\ndef fa() = fb() + 1;\n', "b.sq": 'use "a.sq";\ndef fb() = 2;\n'})
    (tmp_path / "p.sq").write_text(PROGRAM.format(lib=first))
    lines = _error(tmp_path / "p.sq")
    assert lines[0] == (f"{tmp_path / inner}:1:1: error: `use \"{back}\"` closes a cycle of uses (`{back}`, which "
                        f"uses `{inner}`, which uses `{back}`): {RULE}"), lines
    assert lines[1:3] == [f'  use "{back}";', "  ^"]
    # then the uses that led there, the program's last
    assert lines[3] == f"{tmp_path / first}:1:1: note: in the library `{inner}`, used here", lines
    assert lines[6] == f"{tmp_path / 'p.sq'}:1:1: note: in the library `{first}`, used here", lines


def test_a_longer_cycle_names_every_library_of_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_CACHE_DIR", "")
    _libraries(tmp_path, {"a.sq": 'use "b.sq";\ndef fa() = 1;\n', "b.sq": 'use "c.sq";\ndef fb() = 2;\n',
                          "c.sq": 'def fc() = 3;\nuse "a.sq";\n'})
    (tmp_path / "p.sq").write_text(PROGRAM.format(lib="a.sq"))
    lines = _error(tmp_path / "p.sq")
    assert lines[0] == (f"{tmp_path / 'c.sq'}:2:1: error: `use \"a.sq\"` closes a cycle of uses (`a.sq`, which uses "
                        f"`b.sq`, which uses `c.sq`, which uses `a.sq`): {RULE}"), lines


def test_a_library_two_others_use_is_no_cycle(tmp_path, monkeypatch):
    # a diamond (a and b both use c) and a library used twice are read once each, as before
    monkeypatch.setenv("SERQ_CACHE_DIR", "")
    _libraries(tmp_path, {"a.sq": 'use "c.sq";\ndef fa() = fc() + 1;\n', "b.sq": 'use "c.sq";\ndef fb() = fc() + 2;\n',
                          "c.sq": "def fc() = 3;\n"})
    (tmp_path / "p.sq").write_text('use "a.sq";\nuse "b.sq";\nuse "a.sq";\n'
                                   + PROGRAM.format(lib="c.sq").replace('use "c.sq";\n', ""))
    program = serq_frontend.compile(tmp_path / "p.sq")
    assert [s.name for s in program.stages] == ["svc"]
