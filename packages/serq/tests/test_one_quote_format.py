"""Every input's mistake quotes its line as a source's diagnostic does (serq.errors.quote_span): indented by two,
a character that does not print (a tab as a space) as an escape, a line of more than 200 characters cut around the
column with each cut marked ..., and the caret under the terminal's columns of the character (a wide character
takes two). A JSON file (an IR file, a scenario, a step trace) and a CSV file (a trace) were quoted indented by
four, cut without a mark, the caret counted in characters (under the wrong character after a wide one), and an
IR file kept a tab as a tab. Every expected string below is written out by hand."""

from __future__ import annotations

import pytest
import serq_ir
import serq_sim
from serq.jsonin import located
from serq_sim.trace import load_trace


def test_a_json_line_after_wide_characters_has_its_caret_under_the_value():
    # 会話 takes four columns: the value -1, character 18, is at the terminal's column 20
    text = '{"s": "会話", "p": -1}'
    assert located(text, "s.json", 1, 18, "p: must be positive") == (
        's.json:1:18: error: p: must be positive\n  {"s": "会話", "p": -1}\n' + " " * (2 + 19) + "^")


def test_a_trace_cell_after_a_wide_one_has_its_caret_under_it(tmp_path):
    # the cell x is character 11 of line 2 ("会話,0,0,10," before it: 10 characters, 12 columns)
    path = tmp_path / "t.csv"
    path.write_text("note,session,turn,new,out,think,forced\n会話,0,0,10,x,0,0\n")
    with pytest.raises(serq_sim.SimError) as e:
        load_trace(str(path))
    assert str(e.value) == f"{path}:2:11: error: column out: 'x' is not a number\n  会話,0,0,10,x,0,0\n" + " " * 14 + "^"


def test_an_ir_files_tab_is_quoted_as_a_space_indented_as_a_source(tmp_path):
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(b'{"version": 2,\tx}', name="bad.ir.json")
    assert str(e.value) == ("bad.ir.json:1:16: error: JSON is malformed: object keys must be strings (at offset 15)\n"
                            '  {"version": 2, x}\n' + " " * (2 + 15) + "^")


def test_a_long_json_line_is_cut_as_a_long_source_line_is():
    # the fault at character 301 of a line of 400: the 200 characters from 201 to 400 shown (the line's end),
    # ... before them; the caret under the fault's place among them (101st), after the mark
    from serq.errors import quote_line

    text = "x" * 300 + "y" + "z" * 99
    head, quote, caret = located(text, "s.json", 1, 301, "here").split("\n")
    assert quote == "  ..." + "x" * 100 + "y" + "z" * 99 and caret == " " * (2 + 3 + 100) + "^"
    assert quote_line(text, 301) == ("..." + "x" * 100 + "y" + "z" * 99, 104)  # a source's line, the same
