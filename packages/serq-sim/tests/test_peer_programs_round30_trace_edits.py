"""A trace CSV as a user edits it: the edits docs/language.md ("A trace file") allows are read as the file they
came from (columns reordered, extra columns, CRLF or CR line ends, a byte-order mark, spaces around the header's
names), and a header written with another separator than the comma (a spreadsheet's `;`, a tab, `|`) is refused
saying so (serq_sim.trace._separator_note): it said only that every column was missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sim.errors import SimError
from serq_sim.trace import load_trace

SERQ = str(Path(sys.executable).parent / "serq")
HEADER = ["session", "turn", "new", "out", "think", "forced"]
ROWS = [["0", "1", "2004", "4", "17.86", "0"], ["0", "2", "2074", "4", "1.185", "0"],
        ["1", "1", "2004", "1", "7.177", "1"], ["2", "1", "30", "2", "0", "0"]]
# each session's turns as (new, out, think, forced), in the order the sessions first appear
TRUTH = [[(2004, 4, 17.86, 0), (2074, 4, 1.185, 0)], [(2004, 1, 7.177, 1)], [(30, 2, 0, 0)]]


def sessions(path: Path) -> list[list[tuple[float, ...]]]:
    return [[tuple(turn) for turn in s] for s in load_trace(str(path)).sessions]


def write(path: Path, lines: list[list[str]], sep: str = ",", end: str = "\n", bom: str = "") -> Path:
    path.write_bytes((bom + end.join(sep.join(r) for r in lines) + end).encode())
    return path


@pytest.mark.parametrize("edit", ["plain", "reordered", "extra", "crlf", "cr", "bom", "spaced"])
def test_the_edits_the_docs_allow_read_the_same_trace(tmp_path, edit):
    lines = [HEADER] + ROWS
    end, bom = "\n", ""
    if edit == "reordered":
        order = [3, 0, 5, 1, 4, 2]
        lines = [[r[i] for i in order] for r in lines]
    elif edit == "extra":
        lines = [["id"] + lines[0] + ["note"]] + [[str(k)] + r + ["x y"] for k, r in enumerate(lines[1:])]
    elif edit == "crlf":
        end = "\r\n"
    elif edit == "cr":
        end = "\r"
    elif edit == "bom":
        bom, end = "\ufeff", "\r\n"
    elif edit == "spaced":
        lines = [[f" {c} " for c in HEADER]] + ROWS
    assert sessions(write(tmp_path / "t.csv", lines, end=end, bom=bom)) == TRUTH


@pytest.mark.parametrize(("sep", "shown"), [(";", "`;`"), ("\t", "tabs"), ("|", "`|`")])
def test_another_separator_is_told(tmp_path, sep, shown):
    path = write(tmp_path / "t.csv", [HEADER] + ROWS, sep=sep)
    with pytest.raises(SimError) as e:
        load_trace(str(path))
    first = str(e.value).splitlines()[0]
    assert first == (f"{path}:1:1: error: the header lacks the column(s) session, turn, new, out, think, forced "
                     "(expected session,turn,new,out,think,forced); the header is one field: a trace's fields are "
                     f"separated by commas, and this file's by {shown}"), first


def test_another_separator_in_upper_case_is_told_as_the_separator(tmp_path):
    path = write(tmp_path / "t.csv", [[c.upper() for c in HEADER]] + ROWS, sep=";")
    with pytest.raises(SimError) as e:
        load_trace(str(path))
    assert str(e.value).splitlines()[0].endswith("and this file's by `;`")


def test_one_field_without_the_columns_says_nothing_of_separators(tmp_path):
    path = write(tmp_path / "t.csv", [["id;name"], ["1;a"]])
    with pytest.raises(SimError) as e:
        load_trace(str(path))
    first = str(e.value).splitlines()[0]
    assert first.endswith("(expected session,turn,new,out,think,forced)"), first


def test_the_command_line_says_it_once_with_status_1(tmp_path):
    write(tmp_path / "t.csv", [HEADER] + ROWS, sep=";")
    prog = tmp_path / "p.sq"
    prog.write_text('stage s : delay;\nworkload {\n  arrive batch(1);\n  trace "t.csv" ordered;\n}\n'
                    'session {\n  turn;\n  run s (think);\n}\nrun { horizon inf; }\n')
    out = subprocess.run([SERQ, "run", str(prog), "--no-progress"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 1, out
    assert "Traceback" not in out.stderr
    assert out.stderr.count("error:") == 1, out.stderr
    assert "this file's by `;`" in out.stderr
    assert "session;turn;new;out;think;forced" in out.stderr  # the line quoted
