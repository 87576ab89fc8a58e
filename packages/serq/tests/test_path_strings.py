"""serq.files' paths as pathlib gives them (path_str, path_join, path_name, path_exists, path_is_file, path_resolved):
what the compile cache's hits and `serq vllm scenario` use instead of pathlib.Path, whose import is a good
part of a short command's start-up. Each must be exactly what pathlib says, on any spelling of a path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from serq.files import path_exists, path_is_file, path_join, path_name, path_resolved, path_str

#: spellings that pathlib normalizes, and some it keeps
SPELLINGS = ["", ".", "./", "/", "//", "///", "a", "a/", "a//b", "a/./b", "./a", "a/.", "/a", "//a", "///a",
             "/a/", "a/..", "../a", "a/../b", "...", ".a", "a.", " ", "a b/c", "/.", "/./a", "é/ü", "a/b/"]

parts = st.sampled_from(["", ".", "..", "a", "b.sq", "é", " ", "..."])
spellings = st.lists(parts, max_size=5).map("/".join) | st.lists(parts, max_size=5).map(lambda p: "/" + "/".join(p))


@pytest.mark.parametrize("p", SPELLINGS)
def test_spellings_as_pathlib_spells_them(p):
    assert path_str(p) == str(Path(p))
    assert path_str(Path(p)) == str(Path(p))
    assert path_name(p) == Path(p).name


@settings(max_examples=400, deadline=None, derandomize=True)
@given(spellings, spellings)
def test_path_str_and_join_are_pathlibs(a, b):
    assert path_str(a) == str(Path(a))
    assert path_join(a, b) == str(Path(a) / b)
    assert path_name(a) == Path(a).name


def test_what_exists_is_a_file_and_resolves_as_pathlib_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.sq").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "d" / "f.sq")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    names = ["d", "d/", "d/f.sq", "./d//f.sq", "d/f.sq/", "d/f.sq/x", "link", "loop", "dangling", "nowhere",
             "", ".", "d/../d/f.sq", str(tmp_path / "d" / "f.sq"), "/"]
    for name in names:
        assert path_exists(name) == Path(name).exists(), name
        assert path_is_file(name) == Path(name).is_file(), name
        try:
            want: object = str(Path(name).resolve())
        except RuntimeError:  # a symlink loop (Python 3.11, 3.12): path_resolved's is an OSError (ELOOP)
            want = OSError
        try:
            got: object = path_resolved(name)
        except OSError as e:
            got = type(e)
        assert got == want, name


def test_a_name_with_a_nul_is_refused_as_pathlib_refuses_it():
    for f in (path_exists, path_is_file):
        assert f("a\0b") == getattr(Path("a\0b"), f.__name__.replace("path_", ""))()
    with pytest.raises(ValueError):
        path_resolved("a\0b")
    with pytest.raises(ValueError):
        Path("a\0b").resolve()


def test_a_permission_denied_is_pathlibs_to_answer(tmp_path, monkeypatch):
    # a folder that cannot be searched (EACCES from stat), made so by os.stat itself: a permission bit would
    # not stop root, who runs the suite in CI
    import errno

    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    real_stat = os.stat

    def stat(p, *args, **kw):
        if os.fspath(p).startswith(os.fspath(locked) + os.sep):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(p))
        return real_stat(p, *args, **kw)

    monkeypatch.setattr(os, "stat", stat)
    for f, name in ((path_exists, "exists"), (path_is_file, "is_file")):
        try:
            want: object = getattr(Path(locked / "f"), name)()
        except OSError as e:
            want = type(e)
        try:
            got: object = f(locked / "f")
        except OSError as e:
            got = type(e)
        assert got == want, name
    assert want is PermissionError or want is False  # pathlib was asked (3.11 raises; later versions say False)
