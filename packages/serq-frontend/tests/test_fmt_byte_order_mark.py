"""serq fmt and a UTF-8 byte-order mark an editor wrote first (the compiler skips it): the mark stays
first and takes no part in the layout. It was laid out as a token of code, so the first line came out
as the mark, a space and the code, and the next line was indented as the continuation of a statement
(the mark ends with no `;`)."""

from __future__ import annotations

from serq_frontend.fmt import format_source
from sqhelpers import compile_src, ir_bytes

BOM = "\ufeff"


def test_the_mark_stays_first_and_the_layout_is_the_one_without_it():
    assert format_source(BOM + "stage s : fifo;\n") == BOM + "stage s : fifo;\n"
    assert format_source(BOM + "// head\nstage s : fifo;\n") == BOM + "// head\nstage s : fifo;\n"
    assert format_source(BOM + "  session {\n}\n") == BOM + "session {\n}\n"
    assert format_source(BOM + "\r\n// x\r\nstage s : fifo;\r\n") == BOM + "// x\r\nstage s : fifo;\r\n"


def test_a_program_with_the_mark_formats_to_the_same_program():
    src = BOM + "stage s:fifo;\nworkload{arrive batch(1);}\nsession{run s(1);}\n"
    once = format_source(src)
    assert once == BOM + "stage s : fifo;\nworkload { arrive batch(1); }\nsession { run s(1); }\n"
    assert format_source(once) == once
    assert ir_bytes(compile_src(once)) == ir_bytes(compile_src(src))
