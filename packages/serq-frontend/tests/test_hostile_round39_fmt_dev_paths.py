"""serq fmt of a path under /dev that leads to a program's file (`serq fmt /dev/stdin < p.sq`, `serq fmt
/dev/fd/3 3< p.sq`): fmt read the file whole, and its write, through to a path under /dev as every output's
is (opened for appending, never replaced), added the new layout after the old text: p.sq held the program
twice, `reformatted /dev/stdin`, status 0. Such a path is now refused before anything is written (the other
files named too); --check reads it as before."""

from __future__ import annotations

import os
import subprocess

import pytest
from serq_frontend.fmt import format_source
from sqhelpers import SERQ

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/stdin"), reason="/dev/stdin and /dev/fd")

LOOSE = "stage   svc:fifo;\nworkload{arrive poisson(1);}\nsession{run svc(1);end;}\n"
REFUSED = ("error: {}: serq fmt replaces the file it formats, and a path under /dev is written through, never "
           "replaced (the new layout would follow the old text); give the file's own name (--check reads it "
           "there); nothing was written\n")


@pytest.mark.parametrize("name", ["/dev/stdin", "/dev/fd/0"])
def test_a_dev_path_to_a_program_is_refused_and_nothing_is_written(tmp_path, name):
    (tmp_path / "p.sq").write_text(LOOSE)
    (tmp_path / "q.sq").write_text(LOOSE)
    with open(tmp_path / "p.sq", "rb") as stdin:
        r = subprocess.run([SERQ, "fmt", "q.sq", name], stdin=stdin, capture_output=True, text=True,
                           cwd=tmp_path, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", REFUSED.format(name))
    assert (tmp_path / "p.sq").read_text() == LOOSE and (tmp_path / "q.sq").read_text() == LOOSE


def test_check_reads_it_and_the_file_s_own_name_is_formatted(tmp_path):
    (tmp_path / "p.sq").write_text(LOOSE)
    with open(tmp_path / "p.sq", "rb") as stdin:
        r = subprocess.run([SERQ, "fmt", "--check", "/dev/stdin"], stdin=stdin, capture_output=True, text=True,
                           cwd=tmp_path, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (1, "would reformat /dev/stdin\n", "")
    assert (tmp_path / "p.sq").read_text() == LOOSE
    r = subprocess.run([SERQ, "fmt", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert (r.returncode, r.stdout) == (0, "reformatted p.sq\n")
    assert (tmp_path / "p.sq").read_text() == format_source(LOOSE)
