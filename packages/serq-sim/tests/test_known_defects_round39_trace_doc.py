"""docs/language.md's trace file note names every separator and quoting the error names
(serq_sim.trace._separator_note, _row_note): a header whose columns are separated by spaces, a header quoted
whole and a row quoted whole, beside `;`, tabs and `|`. It named only the last three. Each case is checked
against the error itself, and the doc against the cases."""

from __future__ import annotations

from pathlib import Path

import pytest
from serq_sim.errors import SimError
from serq_sim.trace import load_trace

DOC = Path(__file__).resolve().parents[3] / "docs" / "language.md"


def _error(tmp_path, text: str) -> str:
    f = tmp_path / "t.csv"
    f.write_text(text)
    with pytest.raises(SimError) as e:
        load_trace(str(f))
    assert str(e.value).startswith(f"{f}:")
    return str(e.value)


@pytest.mark.parametrize(("sep", "shown"), [(";", "`;`"), ("\t", "tabs"), ("|", "`|`"), (" ", "spaces")])
def test_a_header_of_one_field_says_its_separator(tmp_path, sep, shown):
    header = sep.join("session,turn,new,out,think,forced".split(","))
    msg = _error(tmp_path, f"{header}\n0{sep}1{sep}20{sep}4{sep}1{sep}0\n")
    assert f"the header is one field: a trace's fields are separated by commas, and this file's by {shown}" in msg


def test_a_header_and_a_row_quoted_whole_are_said_so(tmp_path):
    msg = _error(tmp_path, '"session,turn,new,out,think,forced"\n0,1,20,4,1,0\n')
    assert "the header is one quoted field" in msg
    msg = _error(tmp_path, 'session,turn,new,out,think,forced\n"0,1,20,4,1,0"\n')
    assert "the row is one quoted field" in msg


def test_the_doc_names_them_all():
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    note = text[text.index("**A trace file**"):][:1500]
    for what in ("`;`", "tabs", "`|`", "spaces", "a header quoted whole", "a row so quoted"):
        assert what in note, what
