"""A program saved as UTF-16BE without a byte-order mark is told how to convert it in its own byte order: its
first byte is a NUL, and the message said `iconv -f UTF-16LE -t UTF-8`, which turns such a file into other
characters, where serq.files.utf16_note, the other readers' words, names BE. The parser reads the order as
utf16_note does: a NUL before the first ASCII character is BE, after it LE."""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\n"


@pytest.mark.parametrize("order, col", [("BE", 1), ("LE", 2)])
def test_a_utf16_program_is_told_its_byte_order(order, col):
    text = PROGRAM.encode(f"utf-16-{order.lower()}").decode("utf-8")
    with pytest.raises(serq_frontend.CompileError) as e:
        compile_src(text)
    assert (e.value.line, e.value.col) == (1, col)
    assert str(e.value).splitlines()[0].endswith(
        "error: unexpected character `\\x00` (a NUL byte): a program is text, and a file saved as UTF-16 has a NUL "
        f"byte beside each ASCII character (iconv -f UTF-16{order} -t UTF-8 converts one)")
