"""A byte that is not UTF-8 reads, in every message, as ``\\xNN`` (its value), as ``ls -b`` writes it.

Python gives a name's bytes that are not UTF-8 as lone surrogates (``surrogateescape``: U+DC80 to U+DCFF).
A quoted source line (serq.errors.shown_char) and a file's name in the compile error of a program so named
(serq.files.shown_name) wrote such a byte as ``\\xff``; the words of other messages (serq.errors.printable:
``cannot read: No such file or directory``) wrote the surrogate, ``\\udcff``, for the same byte of the
same name. One rule now: serq.errors._escaped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from serq.errors import named_char, printable, shown_char, shown_path

SERQ = str(Path(sys.executable).parent / "serq")
NAME = os.fsdecode(b"nope\xff.sq")  # the name as Python gives it: 'nope\udcff.sq'


def test_printable_writes_a_byte_as_its_value():
    assert printable(NAME) == "nope\\xff.sq"
    assert shown_path(NAME) == "nope\\xff.sq"
    # the other characters that do not print keep their escapes
    assert printable("a\nb\x1bc\u200bd\udc7fe") == "a\\nb\\x1bc\\u200bd\\udc7fe"
    # the same byte as a quoted line shows it
    assert shown_char("\udcff") == "\\xff" and shown_char("\udc80") == "\\x80"
    assert named_char("\udce9") == ("\\xe9", "the byte 0xE9, not UTF-8")  # (not U+DCE9, the surrogate)


def test_a_missing_file_so_named_is_told_by_its_bytes(tmp_path):
    r = subprocess.run([SERQ, "check", NAME], capture_output=True, text=True, errors="replace", cwd=tmp_path,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr == "error: nope\\xff.sq: cannot read: No such file or directory\n", r.stderr


def test_a_look_alike_that_is_a_byte_is_named_as_one(tmp_path):
    (tmp_path / "v.sq").write_text("let x = 1;\nstage s : delay;\nsession { run s (x); }\nrun { horizon 1; }\n")
    r = subprocess.run([SERQ, "run", "v.sq", "--no-progress", "--set", os.fsdecode(b"x\xff=2")], capture_output=True,
                       text=True, errors="replace", cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "its `\\xff` is the byte 0xFF, not UTF-8" in r.stderr, r.stderr
    assert "U+DC" not in r.stderr
