"""serq fmt: one canonical layout, a fixed point, comments kept, the program unchanged."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend.fmt import format_source
from sqhelpers import EXAMPLES, LIB, _pm, ir_bytes

FILES = sorted(EXAMPLES.rglob("*.sq")) + sorted(LIB.glob("*.sq"))


def test_canonical_layout():
    src = """// head
let  a=1;let b = 2 ;    // two
stage s:fifo;


session{
set x=a+-b*(2 - 1);
    hold kv (1)   reserve(2) {
   run s ( x ) ;
        }
  observe y = min( x,2 ) ;// y
}
"""
    assert format_source(src) == """// head
let a = 1; let b = 2;  // two
stage s : fifo;

session {
  set x = a + -b * (2 - 1);
  hold kv (1) reserve(2) {
    run s (x);
  }
  observe y = min(x, 2);  // y
}
"""


def test_continued_lines_and_aligned_comments():
    src = "session {\n  hold kv (1)\n  at admission (h = 1) {\n  }\n}\nlet a = 1; // x\nlet bb = 22; // y\n"
    assert format_source(src) == ("session {\n  hold kv (1)\n      at admission (h = 1) {\n  }\n}\n"
                                  "let a = 1;    // x\nlet bb = 22;  // y\n")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_examples_format_to_a_fixed_point_with_the_same_program(path, tmp_path):
    text = path.read_text()
    once = format_source(text)
    assert format_source(once) == once
    assert [c for c in text.split() if c.startswith("//")] == [c for c in once.split() if c.startswith("//")]
    before = serq_frontend.compile(path, pm=_pm())
    f = path.with_name(f".fmt-{path.name}")  # beside the original, so relative paths resolve alike
    f.write_text(once)
    try:
        after = serq_frontend.compile(f, pm=_pm())
    finally:
        f.unlink()
    assert ir_bytes(after) == ir_bytes(before)
