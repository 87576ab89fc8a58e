"""A file serq replaces (``serq fmt``'s source, ``-o``'s report) keeps its owner and group, and one the
user may not write is refused, as a shell's ``>`` refuses it.

The atomic write renames a new file over the old one, which needs only the folder to be writable: a
``0444`` file was replaced all the same (keeping 0444), and the new file was the writer's: ``sudo serq fmt``
of a user's program left it root's, the user unable to save it again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
OLD = "stage s:fifo;\nworkload{arrive batch(1);}\nsession{run s(1);}\n"
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_replaced_file_keeps_its_owner_and_group(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text(OLD)
    os.chown(f, 65534, 65534)
    os.chmod(f, 0o640)
    r = subprocess.run([SERQ, "fmt", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout == "reformatted p.sq\n", r.stderr
    st = f.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (65534, 65534, 0o640)
    assert f.read_text() != OLD


def _as_unwritable(monkeypatch, names: set[str]) -> None:
    """os.access says the files called ``names`` may not be written (as it does for a 0444 file of
    someone not root; the tests run as root, whom os.access lets write anything)."""
    real = os.access

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and os.path.basename(os.fspath(path)) in names:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


def test_fmt_refuses_a_file_it_may_not_write(tmp_path, monkeypatch, capsys):
    from serq.cli import _main

    f = tmp_path / "p.sq"
    f.write_text(OLD)
    os.chmod(f, 0o444)
    _as_unwritable(monkeypatch, {"p.sq"})
    code = _main(["fmt", str(f)])
    out, err = capsys.readouterr()
    assert code == 1 and out == "", err
    assert err == (f"error: {f}: the file is not writable (permission denied); serq replaces a file only where it "
                   "could write it, as a shell's > does\n")
    assert f.read_text() == OLD and sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_run_refuses_a_report_it_may_not_write_before_it_simulates(tmp_path, monkeypatch, capsys):
    from serq.cli import _main

    (tmp_path / "p.sq").write_text(PROGRAM)
    report = tmp_path / "r.txt"
    report.write_text("keep me\n")
    os.chmod(report, 0o444)
    _as_unwritable(monkeypatch, {"r.txt"})
    code = _main(["run", str(tmp_path / "p.sq"), "-o", str(report)])
    out, err = capsys.readouterr()
    assert code == 1 and out == "", err
    assert err.startswith(f"error: {report}: the file is not writable (permission denied)"), err
    assert report.read_text() == "keep me\n"
