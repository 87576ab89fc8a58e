"""A library named by a hard link beside its own name is one library, as through a symbolic link.

``use "lib.sq"; use "same.sq";`` with same.sq a hard link to lib.sq (one file, two names) read the file twice,
and each of its definitions was `defined twice (first at lib.sq:1:1)`, where a symbolic link same.sq -> lib.sq
was read once: libraries were told apart by their resolved paths, which differ for hard links. A cycle
through a hard link (a.sq uses b.sq, which uses a hard link of a.sq) was not seen as one. Libraries are now
read once per file (device and inode), and the compile cache records that the two names are one file, so a
hard link later replaced by a copy is compiled again (the copy's definitions are defined twice)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_ir
from serq_frontend import CompileError

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
LIB = "def service() = 2;\n"
BODY = ("stage svc : fifo;\nworkload { arrive poisson(1); }\n"
        "session { run svc (service()); end; }\nrun { horizon 10; seed 1; }\n")


def _ir(path: Path) -> bytes:
    return serq_ir.encode(serq_ir.strip_spans(serq_frontend.compile(path)))


@pytest.mark.parametrize("link", [os.link, os.symlink])
def test_a_library_used_by_two_names_of_one_file_is_read_once(tmp_path, monkeypatch, link):
    monkeypatch.setenv("SERQ_CACHE_DIR", "")
    (tmp_path / "lib.sq").write_text(LIB)
    link(tmp_path / "lib.sq", tmp_path / "same.sq")
    (tmp_path / "p.sq").write_text('use "lib.sq";\n' + BODY)
    one = _ir(tmp_path / "p.sq")
    (tmp_path / "p.sq").write_text('use "lib.sq";\nuse "same.sq";\n' + BODY)
    assert _ir(tmp_path / "p.sq") == one


def test_a_copy_is_another_library_and_its_definitions_are_defined_twice(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lib.sq").write_text(LIB)
    (tmp_path / "same.sq").write_text(LIB)
    (tmp_path / "two.sq").write_text('use "lib.sq";\nuse "same.sq";\n' + BODY)
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(Path("two.sq"))
    assert str(e.value).splitlines()[0] == "same.sq:1:5: error: `service` is defined twice (first at lib.sq:1:1)"


def test_a_cycle_through_a_hard_link_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sq").write_text('use "b.sq";\ndef fa() = 1;\n')
    (tmp_path / "b.sq").write_text('use "a2.sq";\ndef fb() = 2;\n')
    os.link(tmp_path / "a.sq", tmp_path / "a2.sq")
    (tmp_path / "p.sq").write_text('use "a.sq";\n' + BODY.replace("service()", "fa()"))
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(Path("p.sq"))
    first = str(e.value).splitlines()[0]
    assert first.startswith("b.sq:1:1: error: `use \"a2.sq\"` closes a cycle of uses (`a.sq`, which uses `b.sq`, "
                            "which uses `a2.sq`)"), first


def test_the_compile_cache_sees_a_hard_link_replaced_by_a_copy(tmp_path):
    env = {**os.environ, "SERQ_CACHE_DIR": str(tmp_path / "cache")}
    work = tmp_path / "w"
    work.mkdir()
    (work / "lib.sq").write_text(LIB)
    os.link(work / "lib.sq", work / "same.sq")
    (work / "two.sq").write_text('use "lib.sq";\nuse "same.sq";\n' + BODY)

    def check() -> subprocess.CompletedProcess:
        return subprocess.run([SERQ, "check", "two.sq"], cwd=work, env=env, capture_output=True, text=True,
                              timeout=100)

    for _ in range(2):  # compiled, then read back from the cache
        p = check()
        assert p.returncode == 0 and p.stdout.startswith("OK:"), p.stderr
    assert any((tmp_path / "cache").iterdir())
    (work / "same.sq").unlink()
    (work / "same.sq").write_text(LIB)  # the same text, another file
    p = check()
    assert p.returncode == 1
    assert p.stderr.splitlines()[0] == "same.sq:1:5: error: `service` is defined twice (first at lib.sq:1:1)"
