"""A name given on the command line (or to the Python API) with a letter that only looks like an ASCII one is
told by that letter, not only offered the name it looks like.

A program is ASCII outside its strings and comments, and its reader names a pasted Cyrillic ``а`` by its code
point; a flag's name is compared with the program's names, and ``--set lаmbda=1`` (Cyrillic ``а``) said
``the program has no `let lаmbda` (did you mean `lambda`?)``: two names that print the same, and no word of
why they differ. Every did-you-mean (serq.errors.did_you_mean and knob_hint: --set, --def, --zip, --slo, the
API's sets= and defs=) now adds the first character of the name that is not ASCII, with its code point and
Unicode name, when the name it offers is ASCII."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq.errors import did_you_mean, knob_hint
from serq_frontend.diagnostics import CompileError

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """\
def service() = ~exp(1);
let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t = now; run s (service()); observe r = now - t; }
run { horizon 10; }
"""
CYRILLIC_A = "\u0430"  # looks like a
CYRILLIC_IE = "\u0435"  # looks like e
NOTE_A = "the name given is not ASCII: its `\u0430` is U+0430 CYRILLIC SMALL LETTER A"


def serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([SERQ, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_set_of_a_look_alike_name_names_the_letter(tmp_path):
    r = serq(tmp_path, "run", "p.sq", "--set", f"l{CYRILLIC_A}m=1")
    assert r.returncode == 1, r.stderr
    assert r.stderr == (f"p.sq: error: --set l{CYRILLIC_A}m: the program has no `let l{CYRILLIC_A}m` (did you mean "
                        f"`lam`? {NOTE_A})\n"), r.stderr


def test_def_of_a_look_alike_name_names_the_letter(tmp_path):
    r = serq(tmp_path, "check", "p.sq", "--def", f"s{CYRILLIC_IE}rvice=~exp(2)")
    assert r.returncode == 1, r.stderr
    assert r.stderr == (f"p.sq: error: --def s{CYRILLIC_IE}rvice: the program has no expression definition "
                        f"`s{CYRILLIC_IE}rvice` (did you mean `service`? the name given is not ASCII: its "
                        f"`{CYRILLIC_IE}` is U+0435 CYRILLIC SMALL LETTER IE)\n"), r.stderr


def test_an_invisible_character_is_named_by_its_escape(tmp_path):
    r = serq(tmp_path, "check", "p.sq", "--set", "lam\u200b=1")
    assert r.returncode == 1, r.stderr
    assert "(did you mean `lam`? the name given is not ASCII: its `\\u200b` is U+200B ZERO WIDTH SPACE)" in r.stderr, \
        r.stderr
    assert "Traceback" not in r.stderr


def test_an_slo_name_with_a_look_alike_letter(tmp_path):
    r = serq(tmp_path, "run", "p.sq", "--slo", "ttf\u0442=1")
    assert r.returncode == 2, r.stderr
    assert ("(did you mean `ttft`? the name given is not ASCII: its `\u0442` is U+0442 CYRILLIC SMALL LETTER TE)"
            in r.stderr), r.stderr


def test_the_python_api_says_the_same(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(tmp_path / "p.sq", sets={f"l{CYRILLIC_A}m": 1.0})
    assert str(e.value).splitlines()[0].endswith(f"(did you mean `lam`? {NOTE_A})"), str(e.value)


def test_the_note_is_only_for_a_name_that_is_not_ascii_offered_one_that_is():
    assert did_you_mean("lamm", ["lam"]) == " (did you mean `lam`?)"
    # a name not ASCII offered a name not ASCII (a column of a user's own table): no word of ASCII
    assert did_you_mean("lat\u00eancia", ["lat\u00eancias"]) == " (did you mean `lat\u00eancias`?)"
    assert did_you_mean("\u03bb", ["lam"]) == ""  # nothing offered, nothing added
    assert knob_hint(f"l{CYRILLIC_A}m", ["lam"], []) == f" (did you mean `lam`? {NOTE_A})"
    # a combining mark is shown by its escape, not drawn on the backquote
    assert did_you_mean("lam\u0301", ["lam"]) == (" (did you mean `lam`? the name given is not ASCII: its `\\u0301` "
                                                  "is U+0301 COMBINING ACUTE ACCENT)")
