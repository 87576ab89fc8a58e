"""``serq_frontend.compile(source=TEXT)`` holds the text to the size a program's file may have
(``serq.files.MAX_SOURCE``, 16 MiB in UTF-8), as ``compile(path)`` and every command hold the file.

A file beyond the limit is refused from its size (a program of 16 MiB takes under 1 GB to parse; one of
100 MB some 6 GB), but the same text handed over as ``source=`` was parsed whatever its size. It is one
:class:`serq_frontend.CompileError` at once, worded as the file's refusal (``serq.files.check_text``, beside
``read_input``).
"""

from __future__ import annotations

import os
import time

import pytest
import serq_frontend
from serq.files import MAX_SOURCE

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n"


@pytest.mark.parametrize("filler, size", [
    ("x", MAX_SOURCE + 1),                      # ASCII: a byte a character
    ("\u00e9", 2 * (MAX_SOURCE // 2 + 1)),      # fewer characters than the limit, more bytes
])
def test_a_source_text_beyond_the_limit_is_one_compile_error_at_once(filler, size):
    comment = "// " + filler * ((size - 4) // len(filler.encode())) + "\n"
    text = comment + PROGRAM
    n = len(text.encode())
    assert n > MAX_SOURCE and len(text) <= MAX_SOURCE + len(PROGRAM) + 4
    t = time.monotonic()
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=text)
    assert time.monotonic() - t < 10
    assert str(info.value) == (f"error: <source>: is {n} bytes ({n / 2**20:.3g} MiB), more than a serQ source "
                               "may have (16 MiB)")
    with pytest.raises(serq_frontend.CompileError):
        serq_frontend.parse(source=text)


def test_a_file_of_the_same_text_is_refused_in_the_same_words(tmp_path):
    p = tmp_path / "p.sq"
    with open(p, "wb") as f:
        f.truncate(MAX_SOURCE + 1)
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(p)
    assert str(info.value) == (f"error: {p}: cannot read: is {MAX_SOURCE + 1} bytes (16 MiB), more than a serQ "
                               "source may have (16 MiB)")


def test_a_source_text_within_the_limit_compiles():
    text = "// " + "x" * (MAX_SOURCE // 2) + "\n" + PROGRAM
    assert [s.name for s in serq_frontend.compile(source=text).stages] == ["s"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_path_that_is_a_fifo_is_one_compile_error(tmp_path):
    os.mkfifo(tmp_path / "p.sq")
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(tmp_path / "p.sq")
    assert str(info.value) == f"error: {tmp_path / 'p.sq'}: cannot read: is a FIFO (a named pipe), not a file"


def test_a_definitions_body_beyond_the_limit_is_one_compile_error_at_once():
    # defs={"NAME": "expr"} (and --def NAME=expr) hand a body over in memory: held to a source's size, as
    # the program's text is (a body of 18 MB was parsed whole)
    src = "def svc() = 1;\n" + PROGRAM.replace("run s (1)", "run s (svc())") + "run { horizon 5; }\n"
    body = "1+" * (MAX_SOURCE // 2 + 1) + "1"
    t = time.monotonic()
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=src, defs={"svc": body})
    assert str(info.value).startswith("error: defs['svc']: is ") and "more than a definition's body may have" in str(
        info.value)
    assert time.monotonic() - t < 10
    assert serq_frontend.compile(source=src, defs={"svc": "2"}) is not None
