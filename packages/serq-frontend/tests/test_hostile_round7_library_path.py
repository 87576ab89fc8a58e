"""A library folder that cannot be searched is passed over, as a missing one is.

One ``SERQ_PATH`` folder the system would not look in (a name longer than it takes, a folder this user may
not search) made every ``use`` fail with "cannot look for …", even of a library in a later folder, while a
folder that does not exist (or is a file) is skipped. Decided (docs/language.md, "use"): such a folder is
passed over as a missing one is, as a shell's PATH search passes over a folder it may not search; only
when no folder has the library does the error at the ``use`` say why the first such folder could not be
searched.
"""

from __future__ import annotations

import errno
import os
import pathlib
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq_frontend import CompileError

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ('use "mylib.sq";\nstage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (twice(1)); }\n'
           "run { horizon 5; }\n")
TOO_LONG = "/tmp/" + "a" * 300


def _lay(tmp_path: Path) -> Path:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "mylib.sq").write_text("def twice(x) = 2 * x;\n")
    (tmp_path / "prog").mkdir()
    (tmp_path / "prog" / "p.sq").write_text(PROGRAM)
    return tmp_path / "prog" / "p.sq"


@pytest.mark.parametrize("first", [TOO_LONG, "/no/such/folder", "FILE"])
def test_a_folder_that_cannot_be_searched_is_passed_over(tmp_path, monkeypatch, first):
    prog = _lay(tmp_path)
    if first == "FILE":
        first = str(prog)  # a file, not a folder
    monkeypatch.setenv("SERQ_PATH", os.pathsep.join([first, str(tmp_path / "lib")]))
    program = serq_frontend.compile(prog)
    assert program.stages[0].name == "s"


def test_the_command_finds_it_too_with_the_cache_on_and_off(tmp_path):
    prog = _lay(tmp_path)
    env = {**os.environ, "SERQ_PATH": os.pathsep.join([TOO_LONG, str(tmp_path / "lib")]),
           "SERQ_CACHE_DIR": str(tmp_path / "cache")}
    for cache in ("1", "1", "0"):  # a miss, then (the same compile) again, then without the cache
        r = subprocess.run([SERQ, "check", str(prog)], capture_output=True, text=True, timeout=60,
                           env={**env, "SERQ_COMPILE_CACHE": cache}, stdin=subprocess.DEVNULL)
        assert r.returncode == 0 and r.stdout.startswith("OK: "), r.stderr


def test_when_no_folder_has_it_the_error_says_why_one_could_not_be_searched(tmp_path, monkeypatch):
    prog = _lay(tmp_path)
    (tmp_path / "lib" / "mylib.sq").unlink()
    monkeypatch.setenv("SERQ_PATH", os.pathsep.join([TOO_LONG, str(tmp_path / "lib")]))
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(prog)
    first = str(info.value).splitlines()[0]
    assert first.startswith(f'{prog}:1:1: error: `use "mylib.sq"`: cannot look for /tmp/aaaa'), first
    assert first.endswith("/mylib.sq: File name too long"), first


def test_a_folder_this_user_may_not_search(tmp_path, monkeypatch):
    # (root searches every folder: the refusal is made here as the system makes it, EACCES of the lookup)
    prog = _lay(tmp_path)
    closed = tmp_path / "closed"
    closed.mkdir()
    monkeypatch.setenv("SERQ_PATH", os.pathsep.join([str(closed), str(tmp_path / "lib")]))
    real = pathlib.Path.is_file

    def is_file(self, *args, **kw):
        if str(self).startswith(str(closed)):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self, *args, **kw)

    monkeypatch.setattr(pathlib.Path, "is_file", is_file)
    assert serq_frontend.compile(prog).stages[0].name == "s"
    (tmp_path / "lib" / "mylib.sq").unlink()
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(prog)
    assert str(info.value).splitlines()[0] == (f'{prog}:1:1: error: `use "mylib.sq"`: cannot look for '
                                               f"{closed}/mylib.sq: Permission denied")


def test_a_library_found_first_still_comes_first(tmp_path, monkeypatch):
    # passing over a folder changes nothing where every folder can be searched: the first library wins
    prog = _lay(tmp_path)
    (tmp_path / "early").mkdir()
    (tmp_path / "early" / "mylib.sq").write_text("def twice(x) = 3 * x;\n")
    monkeypatch.setenv("SERQ_PATH", os.pathsep.join([TOO_LONG, str(tmp_path / "early"), str(tmp_path / "lib")]))
    assert serq_frontend.compile(prog).session[0].work.value == 3.0  # early's twice, not lib's
