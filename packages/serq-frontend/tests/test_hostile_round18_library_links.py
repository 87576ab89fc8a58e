"""``use "x.sq"`` where the folder holds ``x.sq`` as a symbolic link that leads to no file (a loop of links,
or a link to a file since removed) is told so at the use; it was "no such library", and the closest-name
hint offered another name of the loop (``use "l1.sq"`` beside ``l1.sq -> l2.sq -> l1.sq``: "did you mean
`l2.sq`?"), a name the same error follows. The hint offers only names of files; a library further along
the path is still found past such a link."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend.diagnostics import CompileError

pytestmark = pytest.mark.timeout(60)

BODY = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (f()); end; }\nrun { horizon 5; seed 1; }\n"
SAID = ("which is a symbolic link that leads to no file (a loop of links, or a link to a missing file) (a library "
        "is a `.sq` file of `def`s and `use`s)")


def first_line(prog):
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(str(prog), pm=None)
    return str(e.value).splitlines()[0]


def test_a_loop_of_links_is_told_at_the_use(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_COMPILE_CACHE", "0")
    (tmp_path / "l1.sq").symlink_to("l2.sq")
    (tmp_path / "l2.sq").symlink_to("l1.sq")
    prog = tmp_path / "p.sq"
    prog.write_text('use "l1.sq";\n' + BODY)
    assert first_line(prog) == f'{prog}:1:1: error: `use "l1.sq"` finds {tmp_path / "l1.sq"}, {SAID}'


def test_a_link_to_a_missing_file_is_told_at_the_use(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_COMPILE_CACHE", "0")
    (tmp_path / "lib.sq").symlink_to("gone.sq")
    prog = tmp_path / "p.sq"
    prog.write_text('use "lib.sq";\n' + BODY)
    assert first_line(prog) == f'{prog}:1:1: error: `use "lib.sq"` finds {tmp_path / "lib.sq"}, {SAID}'


def test_the_hint_offers_no_link_that_leads_nowhere(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_COMPILE_CACHE", "0")
    (tmp_path / "l1.sq").symlink_to("l2.sq")
    (tmp_path / "l2.sq").symlink_to("l1.sq")
    (tmp_path / "l4.sq").write_text("def f() = 1;\n")
    prog = tmp_path / "p.sq"
    prog.write_text('use "l3.sq";\n' + BODY)
    first = first_line(prog)
    assert first.startswith(f'{prog}:1:1: error: `use "l3.sq"`: no such library (looked in {tmp_path}')
    assert first.endswith("(did you mean `l4.sq`?)"), first  # (l1.sq and l2.sq are as close, and no files)


def test_a_library_past_a_broken_link_is_found(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_COMPILE_CACHE", "0")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "x.sq").write_text("def f() = 0.5;\n")
    (tmp_path / "x.sq").symlink_to("gone.sq")
    monkeypatch.setenv("SERQ_PATH", str(lib))
    prog = tmp_path / "p.sq"
    prog.write_text('use "x.sq";\n' + BODY)
    program = serq_frontend.compile(str(prog))
    assert len(program.stages) == 1
