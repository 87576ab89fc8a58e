"""A string of an IR file whose last escape is the first half of a UTF-16 surrogate pair (``"\\ud800"``) with no
second half after it is told so, at the escape: msgspec says "Input data was truncated" when the escape is
among the text's last bytes (the six bytes where the second half's escape would be run past the end), and the
message was `p.ir.json:19:2: error: JSON is malformed: the text ends before the value does (a bracket, a brace
or a quote is missing)` at the closing brace of a file that ends as it should. A text cut short after such an
escape, an escaped backslash before ``u``, and a whole pair keep what they were."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_ir

pytestmark = pytest.mark.timeout(60)

SOURCE = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"
LONE = ("JSON is malformed: a string's escape \\uD800-\\uDBFF is the first half of a UTF-16 surrogate pair, and no "
        "second half (\\uDC00-\\uDFFF) follows it")
CUT = "JSON is malformed: the text ends before the value does (a bracket, a brace or a quote is missing)"


def _ir() -> str:
    """The program's IR, its last field the program's source file's name (``"source": "p.sq"``)."""
    text = serq_ir.encode_pretty(serq_frontend.compile(source=SOURCE))
    assert text.endswith("\n}") and '"source"' not in text
    return text[:-2] + ',\n  "source": "p.sq"\n}\n'



def _load(text: str, tmp_path, monkeypatch) -> list[str]:
    (tmp_path / "p.ir.json").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.load("p.ir.json")
    return str(info.value).splitlines()


def _place(text: str, at: int) -> str:
    return f"p.ir.json:{text.count(chr(10), 0, at) + 1}:{at - text.rfind(chr(10), 0, at)}"


@pytest.mark.parametrize("escape", ["\\ud800", "\\uDBFF", "\\ud83d"])
def test_a_lone_first_half_at_the_end_is_told_at_its_escape(escape, tmp_path, monkeypatch):
    text = _ir()
    assert text.rstrip().endswith('"source": "p.sq"\n}')
    text = text.replace('"source": "p.sq"', f'"source": "{escape}"')
    lines = _load(text, tmp_path, monkeypatch)
    at = text.index(escape)
    assert lines[0] == f"{_place(text, at)}: error: {LONE}", lines
    assert lines[2].strip() == "^" and lines[2].index("^") == lines[1].index("\\"), lines
    assert len(lines) == 3


def test_the_smallest_file_of_one(tmp_path, monkeypatch):
    lines = _load('{"version": 2, "x": "\\ud800"}', tmp_path, monkeypatch)
    assert lines[0] == f"p.ir.json:1:22: error: {LONE}", lines


def test_a_text_cut_short_after_the_escape_is_cut_short(tmp_path, monkeypatch):
    """Nothing after the escape: the string, the object are not closed; that is what the message says."""
    text = '{"version": 2, "source": "\\ud800'
    lines = _load(text, tmp_path, monkeypatch)
    assert lines[0] == f"p.ir.json:1:{len(text) + 1}: error: {CUT}", lines


def test_an_escaped_backslash_before_u_is_no_escape(tmp_path, monkeypatch):
    """``"\\\\ud800"`` is a backslash and the letters ud800: a string of six characters, no surrogate. The text is
    whole, so the file's other fault is told (here a field the IR does not have)."""
    lines = _load('{"version": 2, "x": "\\\\ud800"}', tmp_path, monkeypatch)
    assert lines[0] == "p.ir.json:1:16: error: Object contains unknown field 'x' - at '$.x'", lines


def test_a_whole_pair_at_the_end_loads(tmp_path, monkeypatch):
    text = _ir().replace('"source": "p.sq"', '"source": "\\ud83d\\ude00.sq"')
    (tmp_path / "p.ir.json").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert serq_ir.load("p.ir.json").source == "\U0001f600.sq"
