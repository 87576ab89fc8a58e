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


def test_a_file_another_fmt_formats_meanwhile_is_no_error(tmp_path, monkeypatch, capsys):
    # two serq fmt of one file at once: the second finds the layout it would write already there
    from serq_frontend import fmt

    a = tmp_path / "a.sq"
    a.write_text(OLD)
    real = fmt.format_source

    def format_as_another_does(text):
        out = real(text)
        a.write_text(out)
        return out

    monkeypatch.setattr(fmt, "format_source", format_as_another_does)
    code, out, err = _fmt(capsys, str(a))
    assert code == 0 and err == "" and out == f"reformatted {a}\n", err
    assert a.read_text() == real(OLD)


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


# ---------------------------------------------------------------------------------------------------
# Line ends, a byte-order mark, blanks after a comment
# ---------------------------------------------------------------------------------------------------
# A CRLF file came out with LF line ends except after its comments, whose \r the comment token kept: a mix
# of two line ends. The blanks after a comment were kept ("no trailing blanks" said otherwise), and a
# byte-order mark was dropped whenever the file changed (and kept when it did not).


def _ir(path: Path) -> bytes:
    import serq_frontend
    from serq_ir.codec import encode
    from sqhelpers import _pm

    return encode(serq_frontend.compile(path, pm=_pm()), spans=False)


def test_a_crlf_file_keeps_crlf_throughout_and_its_program(tmp_path):
    from serq_frontend.fmt import format_source

    src = ("// head   \r\nstage s:fifo;   // a stage  \r\nworkload{arrive batch(1);}\r\n\r\n\r\n"
           "session{run s(1);// run\r\n}\r\n")
    f = tmp_path / "p.sq"
    f.write_bytes(src.encode())
    before = _ir(f)
    r = subprocess.run([SERQ, "fmt", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout == "reformatted p.sq\n", r.stderr
    data = f.read_bytes()
    assert data == (b"// head\r\nstage s : fifo;  // a stage\r\nworkload { arrive batch(1); }\r\n\r\n"
                    b"session { run s(1);  // run\r\n}\r\n")
    assert data.count(b"\n") == data.count(b"\r\n")
    assert _ir(f) == before
    assert format_source(data.decode()) == data.decode()  # a fixed point
    r = subprocess.run([SERQ, "fmt", "--check", "p.sq"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout == ""


def test_an_lf_file_gets_lf_and_blanks_after_a_comment_go(tmp_path):
    from serq_frontend.fmt import format_source

    assert format_source("let a = 1; // x \t\nlet b = 2;\r\n// y  \n") == "let a = 1;  // x\nlet b = 2;\n// y\n"
    assert format_source("let a = 1;") == "let a = 1;\n"
    assert format_source("\r\nlet a = 1;\n") == "let a = 1;\r\n"  # the first line ends in CRLF


def test_a_byte_order_mark_is_kept(tmp_path):
    f = tmp_path / "p.sq"
    f.write_bytes(b"\xef\xbb\xbfstage s:fifo;\nworkload{arrive batch(1);}\nsession{run s(1);}\n")
    r = subprocess.run([SERQ, "fmt", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout == "reformatted p.sq\n", r.stderr
    assert f.read_bytes() == b"\xef\xbb\xbfstage s : fifo;\nworkload { arrive batch(1); }\nsession { run s(1); }\n"
    r = subprocess.run([SERQ, "fmt", "--check", "p.sq"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout == ""
