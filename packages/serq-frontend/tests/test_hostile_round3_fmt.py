"""serq fmt rewrites the files it is given, so what it writes must never cost the user text.

* A file that changed between fmt's read and its write (an editor saved it while fmt parsed a large
  file) was replaced by the layout of the old text: the edit was lost. Now nothing is written, one
  message, status 1.
* One file named twice (``a.sq ./a.sq``, or through a symbolic link) is formatted once, and the link stays
  a link.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")
OLD = "stage s:fifo;\nworkload{arrive batch(1);}\nsession{run s(1);}\n"


def _fmt(capsys, *args: str) -> tuple[int, str, str]:
    """``serq fmt ARGS`` in this process (so a test can step in while it works): status, stdout, stderr."""
    from serq.cli import _main

    code = _main(["fmt", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_file_that_changes_while_it_is_formatted_is_not_written_over(tmp_path, monkeypatch, capsys):
    from serq_frontend import fmt

    a, b = tmp_path / "a.sq", tmp_path / "b.sq"
    a.write_text(OLD)
    b.write_text(OLD)
    real = fmt.format_source
    edited = OLD + "// the user's edit, saved while fmt worked\n"

    calls = []

    def format_and_edit(text):
        calls.append(text)
        if len(calls) == 2:  # the editor saves b.sq while fmt formats the text it read of it
            b.write_text(edited)
        return real(text)

    monkeypatch.setattr(fmt, "format_source", format_and_edit)
    code, out, err = _fmt(capsys, str(a), str(b))
    assert code == 1 and out == "", err
    assert err == f"error: {b}: changed while serq fmt was formatting it; nothing was written (run serq fmt again)\n"
    assert b.read_text() == edited and a.read_text() == OLD  # the edit kept, and no file half of the batch
    monkeypatch.undo()
    code, out, err = _fmt(capsys, str(a), str(b))
    assert code == 0 and err == "", err
    assert a.read_text() == fmt.format_source(OLD) and b.read_text() == fmt.format_source(edited)


def test_a_file_that_is_removed_while_it_is_formatted_is_not_made_again(tmp_path, monkeypatch, capsys):
    from serq_frontend import fmt

    a = tmp_path / "a.sq"
    a.write_text(OLD)
    real = fmt.format_source

    def format_and_remove(text):
        a.unlink()
        return real(text)

    monkeypatch.setattr(fmt, "format_source", format_and_remove)
    code, out, err = _fmt(capsys, str(a))
    assert code == 1 and err == f"error: {a}: changed while serq fmt was formatting it; nothing was written (run " \
        "serq fmt again)\n", err
    assert not a.exists()


def test_one_file_named_twice_or_through_a_link_is_formatted_once(tmp_path):
    a = tmp_path / "a.sq"
    a.write_text(OLD)
    (tmp_path / "link.sq").symlink_to("a.sq")
    r = subprocess.run([SERQ, "fmt", "a.sq", "./a.sq", "link.sq"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout == "reformatted a.sq\n"
    assert os.path.islink(tmp_path / "link.sq") and sorted(p.name for p in tmp_path.iterdir()) == ["a.sq", "link.sq"]
    r = subprocess.run([SERQ, "fmt", "--check", "link.sq", "a.sq"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
