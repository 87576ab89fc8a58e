"""A file serq would replace on a file system mounted read-only is refused saying so: "the file is not writable
(it is on a read-only file system)". It said "(permission denied)", which no chmod mends (root, whom the
permission bits do not stop, was told the same). A file the permission bits forbid keeps its words
(test_hostile_round3_replaced_files). The mount is stood in for by os.statvfs's flag, which serq.files reads."""

from __future__ import annotations

import os
import types

import pytest
from serq.cli import _main

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(not hasattr(os, "statvfs") or not hasattr(os, "ST_RDONLY"), reason="POSIX")]

OLD = "let  a = 1;\nworkload { arrive poisson(a); }\nrun { horizon 5; }\n"


def _read_only(monkeypatch, folder, flag=None) -> None:
    """Files under ``folder`` are not writable, and their file system has ``flag`` (read-only by default)."""
    real_access, real_statvfs = os.access, os.statvfs
    folder = os.fspath(folder)

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and os.fspath(path).startswith(folder):
            return False
        return real_access(path, mode, *args, **kwargs)

    def statvfs(path):
        if os.fspath(path).startswith(folder):
            return types.SimpleNamespace(f_flag=os.ST_RDONLY if flag is None else flag)
        return real_statvfs(path)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(os, "statvfs", statvfs)


@pytest.mark.parametrize(("flag", "why"), [(None, "it is on a read-only file system"), (0, "permission denied")])
def test_fmt_says_why_it_cannot_replace_a_file(tmp_path, monkeypatch, capsys, flag, why):
    f = tmp_path / "p.sq"
    f.write_text(OLD)
    _read_only(monkeypatch, tmp_path, flag)
    code = _main(["fmt", str(f)])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err == (f"error: {f}: the file is not writable ({why}); serq replaces a file only where it could "
                   "write it, as a shell's > does\n")
    assert f.read_text() == OLD and sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_run_says_it_of_its_report_before_it_simulates(tmp_path, monkeypatch, capsys):
    (tmp_path / "p.sq").write_text(OLD)
    out_folder = tmp_path / "ro"
    out_folder.mkdir()
    report = out_folder / "r.txt"
    report.write_text("keep me\n")
    _read_only(monkeypatch, out_folder)
    code = _main(["run", str(tmp_path / "p.sq"), "-o", str(report)])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err.startswith(f"error: {report}: the file is not writable (it is on a read-only file system);"), err
    assert report.read_text() == "keep me\n"
