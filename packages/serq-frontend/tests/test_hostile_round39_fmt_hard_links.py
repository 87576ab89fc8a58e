"""serq fmt of two hard links to one file, both named (`serq fmt a.sq b.sq` where b.sq is `ln a.sq b.sq`):
fmt took them for one file (one inode) and formatted the first name only; its write, a new file renamed
over it as every output is written, parted the two, so the second name was left in its old layout, not
listed, and the command said 0 (a `serq fmt --check b.sq` then failed). Each name is now its own entry in its
folder (symbolic links followed), formatted and written: one file named twice by its path, a symbolic link
or a linked folder is still formatted once."""

from __future__ import annotations

import os
import subprocess

import pytest
from serq_frontend.fmt import format_source
from sqhelpers import SERQ

pytestmark = pytest.mark.skipif(not hasattr(os, "link") or os.name != "posix", reason="POSIX hard links")

LOOSE = "stage   svc:fifo;\nworkload{arrive poisson(1);}\nsession{run svc(1);end;}\n"


def run(*args, cwd):
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_two_hard_links_named_are_both_formatted(tmp_path):
    (tmp_path / "a.sq").write_text(LOOSE)
    os.link(tmp_path / "a.sq", tmp_path / "b.sq")
    r = run("fmt", "--check", "a.sq", "b.sq", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (1, "would reformat a.sq\nwould reformat b.sq\n", "")
    r = run("fmt", "a.sq", "b.sq", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "reformatted a.sq\nreformatted b.sq\n", "")
    want = format_source(LOOSE)
    assert want != LOOSE
    assert (tmp_path / "a.sq").read_text() == want and (tmp_path / "b.sq").read_text() == want
    r = run("fmt", "--check", "a.sq", "b.sq", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_one_file_named_by_several_paths_is_formatted_once(tmp_path):
    (tmp_path / "a.sq").write_text(LOOSE)
    os.symlink("a.sq", tmp_path / "link.sq")
    os.symlink(".", tmp_path / "here")
    r = run("fmt", "a.sq", "./a.sq", "link.sq", "here/a.sq", "here/link.sq", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "reformatted a.sq\n", "")
    assert (tmp_path / "a.sq").read_text() == format_source(LOOSE)
    assert os.readlink(tmp_path / "link.sq") == "a.sq"  # the link stays a link
