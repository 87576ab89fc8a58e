"""serq fmt: one canonical layout, a fixed point, comments kept, the program unchanged."""

from __future__ import annotations

import re

import pytest
import serq_frontend
from serq_frontend.fmt import format_source
from sqhelpers import EXAMPLES, LIB, ROOT, _pm, ir_bytes

FILES = sorted(EXAMPLES.rglob("*.sq")) + sorted(LIB.glob("*.sq"))
#: every program of the repository: examples, the library, benchmarks, test programs
ALL_FILES = sorted(p for p in ROOT.rglob("*.sq")
                   if not any(part.startswith(".") for part in p.relative_to(ROOT).parts))


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
    # in a folder of its own, never beside the original (a file written into the source tree is seen by
    # the tests running beside this one: a library hint named it); its `use`s are library names, which
    # the library folders resolve alike from anywhere
    f = tmp_path / path.name
    f.write_text(once)
    after = serq_frontend.compile(f, pm=_pm())
    assert ir_bytes(after) == ir_bytes(before)


def test_the_semicolon_after_a_step_kind_is_left_out():
    src = ("stage e : step { budget 1; cost 1; };\n"
           "stage f : step {\n  budget 1;\n  cost 1;\n}\n;\n"
           "stage g : fifo;\n"
           "queue Q : prefill {\n  serve step { budget 1; cost 1; } ;\n  nic step { budget 1; cost 1; };\n"
           "  prefill (p) { run (p); }\n}\n")
    assert format_source(src) == ("stage e : step { budget 1; cost 1; }\n"
                                  "stage f : step {\n  budget 1;\n  cost 1;\n}\n"
                                  "stage g : fifo;\n"
                                  "queue Q : prefill {\n  serve step { budget 1; cost 1; }\n"
                                  "  nic step { budget 1; cost 1; }\n  prefill (p) { run (p); }\n}\n")


def test_continued_lines_keep_a_deeper_alignment_and_comments_their_column():
    src = ("session {\n  hold kv (1)\n       at admission (h = 1,\n                     k = 2) {\n  }\n"
           "   hold kv (1)\n at admission (h = 1) { }\n}\n"
           "let a = 1;        // x\nlet bb = 22;      // y\n\nlet c = 1;   // z\nlet d = 1; // w\n\n"
           "let e = 1;       // v\n")
    assert format_source(src) == ("session {\n  hold kv (1)\n       at admission (h = 1,\n"
                                  "                     k = 2) {\n  }\n"
                                  "  hold kv (1)\n      at admission (h = 1) { }\n}\n"
                                  "let a = 1;        // x\nlet bb = 22;      // y\n\n"
                                  "let c = 1;  // z\nlet d = 1;  // w\n\nlet e = 1;  // v\n")


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_program_of_the_repository_is_in_canonical_form(path):
    # README: `serq fmt --check examples/**/*.sq`
    text = path.read_text()
    assert format_source(text) == text, f"serq fmt would reformat {path.relative_to(ROOT)}"


#: a step stage kind (its fields hold no braces)
_STEP_KIND = re.compile(r"((?::|\bserve|\bnic)\s+step\s*\{[^{}]*\})")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_old_layout_formats_to_the_file_with_the_same_program(path, tmp_path):
    # the examples as they were written before the canonical form dropped the `;` after a step kind
    text = path.read_text()
    old = _STEP_KIND.sub(r"\1;", text)
    assert format_source(old) == text
    f = tmp_path / path.name  # a folder of its own, not the source tree (see the test above)
    f.write_text(old)
    before = serq_frontend.compile(f, pm=_pm())
    assert ir_bytes(serq_frontend.compile(path, pm=_pm())) == ir_bytes(before)


def test_fmt_rewrites_a_file_atomically(tmp_path, monkeypatch):
    # the new text goes to a temporary file renamed over the old one: a failed rename leaves the old file
    # whole (a write in place would have truncated it first), and no temporary file behind
    from click.testing import CliRunner
    from serq import files
    from serq_frontend.commands import fmt_command

    f = tmp_path / "p.sq"
    old = "stage s:fifo;\nworkload{arrive batch(1);}\nsession{run s(1);}\n"
    f.write_text(old)

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", fail)
    r = CliRunner().invoke(fmt_command, [str(f)], obj=_pm())
    assert r.exit_code != 0
    assert f.read_text() == old and sorted(x.name for x in tmp_path.iterdir()) == ["p.sq"]
    monkeypatch.undo()
    r = CliRunner().invoke(fmt_command, [str(f)], obj=_pm())
    assert r.exit_code == 0, r.output
    assert f.read_text() == format_source(old) != old


def test_fmt_writes_no_file_when_one_of_them_does_not_parse(tmp_path):
    # every file is formatted before any is written: a later file that does not parse leaves the earlier
    # ones as they were (they used to be rewritten already when the error came)
    import subprocess
    import sys

    a = tmp_path / "a.sq"
    b = tmp_path / "b.sq"
    old = "stage s:fifo;\nworkload{arrive batch(1);}\nsession{run s(1);}\n"
    a.write_text(old)
    b.write_text("stage s:fifo;\nsession{run s(1)\n")
    r = subprocess.run([sys.executable, "-m", "serq", "fmt", str(a), str(b)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1 and "b.sq:2:17: error: missing `;`" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert a.read_text() == old and r.stdout == ""
    b.write_text("stage s:fifo;\nworkload{arrive batch(1);}\nsession{run s(2);}\n")
    r = subprocess.run([sys.executable, "-m", "serq", "fmt", str(a), str(b)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert a.read_text() == format_source(old) != old
    assert r.stdout.splitlines() == [f"reformatted {a}", f"reformatted {b}"]
