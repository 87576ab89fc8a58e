"""serq plot --cdf of a records file in CSV reads the table a column at a time, and only the columns the plot
reads (serq_sweep.core.read_csv_columns): a file of a million records was read as a dict per row, 1.2 GB for
`--cdf ttft` (two of its twelve columns). A cell that is no number is still said at its line and column."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from serq.errors import UserError
from serq_sweep import core, plots
from serq_sweep.rows import selected

SERQ = str(Path(sys.executable).parent / "serq")
HEADER = "session,turn,time,sent,admitted,first_token,last_token,prompt,output,cached,preemptions,engine"


def _records(path: Path, rows: int, bad: dict[int, tuple[int, str]] | None = None) -> None:
    """``rows`` requests, request i sent at i/4 and its first token 0.25 * (i % 5 + 1) later (a ttft of 0.25,
    0.5, 0.75, 1.0 or 1.25); ``bad``: row -> (field, text) put in its place."""
    with open(path, "w") as f:
        f.write(HEADER + "\n")
        for i in range(rows):
            sent = i / 4
            first = sent + 0.25 * (i % 5 + 1)
            cells = [str(i), "0", repr(first + 2.0), repr(sent), repr(sent), repr(first), repr(first + 2.0),
                     "1024", "128", "0", "0", "0"]
            if bad and i in bad:
                field, text = bad[i]
                cells[field] = text
            f.write(",".join(cells) + "\n")


def test_a_million_records_cdf_is_drawn_in_little_memory(tmp_path, peak_memory):
    _records(tmp_path / "r.csv", 10**6)
    with open(tmp_path / "err", "w") as err:
        code, peak = peak_memory([SERQ, "plot", "r.csv", "--cdf", "ttft", "-o", "c.svg"], timeout=240, cwd=tmp_path,
                                 stdin=subprocess.DEVNULL, stderr=err)
    assert code == 0, (tmp_path / "err").read_text()
    # (matplotlib may warn that placing the legend is slow among a million points: a warning of its timing)
    assert "error" not in (tmp_path / "err").read_text()
    assert "ttft (1000000 requests)" in (tmp_path / "c.svg").read_text()
    # a dict per row: 1.17 GB; a column at a time: about 350 MB, most of it matplotlib's of the million steps
    assert peak < 600 * 2**20, peak


def test_the_cdf_is_of_the_columns_read(tmp_path):
    _records(tmp_path / "r.csv", 10_000)
    ((key, values),) = plots.records_cdf_data(str(tmp_path / "r.csv"), ["ttft"]).items()
    assert key == ("ttft", None)
    # each fifth request has each ttft: 2000 of 0.25, 0.5, 0.75, 1.0 and 1.25 (sums of quarters: exact)
    assert values == sorted([0.25 * (i % 5 + 1) for i in range(10_000)])
    frame = plots._read_records(str(tmp_path / "r.csv"), plots.cdf_columns(["ttft"]))
    assert list(frame.columns) == ["sent", "first_token"]
    assert frame["sent"].dtype == float and len(frame) == 10_000


def test_a_message_lists_every_column_of_the_file(tmp_path):
    _records(tmp_path / "r.csv", 3)
    with pytest.raises(UserError) as e:
        plots.records_cdf(str(tmp_path / "r.csv"), ["nope"])
    assert f"columns: {HEADER.replace(',', ', ')})" in str(e.value)
    with pytest.raises(UserError) as e:
        plots.plot(str(tmp_path / "r.csv"), cdf_of=["ttft"], where={"engin": 0})
    assert str(e.value) == (f"error: --where engin=0: the records has no column engin (its columns: "
                             f"{HEADER.replace(',', ', ')}) (did you mean `engine`?)")
    # the rows of a --where name not drawn are kept by it: requests 0 and 2 of engine 0, not 1 of engine 7
    _records(tmp_path / "e.csv", 3, bad={1: (11, "7")})
    kept = selected(plots._read_records(str(tmp_path / "e.csv"), plots.cdf_columns(["ttft"], None, ["engine"])),
                    {"engine": "0"}, "the records")
    assert plots.records_cdf_data(kept, ["ttft"]) == {("ttft", None): [0.25, 0.75]}


@pytest.mark.parametrize("row, field, text, line, why", [
    # a word under sent, past the first chunk of rows read: its line and column, the line quoted
    (9000, 3, "soon", 9002, "--cdf ttft: column sent does not hold numbers"),
    # an integer beyond a number's range under first_token
    (5, 5, "9" * 400, 7, "cannot read the records (column first_token: the integer 999999999999...999999 "
                               "(400 digits) is beyond the range of a number (at most 308 digits))"),
])
def test_a_bad_cell_of_a_column_read_is_said_at_its_line(tmp_path, row, field, text, line, why):
    _records(tmp_path / "r.csv", 10_000, bad={row: (field, text)})
    r = subprocess.run([SERQ, "plot", "r.csv", "--cdf", "ttft", "-o", "c.svg"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    source = (tmp_path / "r.csv").read_text().splitlines()[line - 1]
    col = sum(len(c) + 1 for c in source.split(",")[:field]) + 1
    assert r.returncode == 1 and r.stdout == ""
    said = r.stderr.splitlines()
    assert len(said) == 3 and said[0] == f"r.csv:{line}:{col}: error: {why}", r.stderr
    assert said[1].startswith(f"  {source[:col + 20]}") and said[2] == f"  {' ' * (col - 1)}^", r.stderr
    assert not (tmp_path / "c.svg").exists()


def test_a_row_of_too_few_fields_is_said_at_its_line(tmp_path):
    _records(tmp_path / "r.csv", 5000)
    text = (tmp_path / "r.csv").read_text().splitlines()
    text[4500] = "1,2,3"
    (tmp_path / "r.csv").write_text("\n".join(text) + "\n")
    r = subprocess.run([SERQ, "plot", "r.csv", "--cdf", "ttft", "-o", "c.svg"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stderr == "r.csv:4501:1: error: cannot read the records (line 4501 has 3 fields, the header 12)\n" \
                       "  1,2,3\n  ^\n", r.stderr


@pytest.mark.parametrize("text", [
    "a,b\n",  # no row
    "a,b\n1,2\n3,\n",  # an integer column with a hole: floats
    "a,b\nTrue,x\n,1\n",  # flags with a hole, and a word among numbers: objects
    "a,b\n99999999999999999999,1\n1,2.5\n",  # an integer beyond int64; an integer and a float
    'a,b\n"1\n2",3\n4,5\n',  # a quoted cell over two lines
    # columns whose kind changes past the first chunk of rows (4096): integers then floats, then a hole or a word
    "a,b,c\n" + "".join(f"{i},{i if i < 5000 else i / 7!r},{'' if i == 6000 else i}\n" for i in range(9000)),
    "a,b\n" + "".join(f"{i},{'x' if i == 8000 else i}\n" for i in range(9000)),
    "a,b\n" + "".join(f"{i},{i / 3!r}\n" for i in range(8192)),  # two whole chunks
    # a run's status, message, warnings and key (text whatever they hold), over two chunks
    "point,seed,status,message,warnings,key,x\n" + "".join(
        f"{i},1,{'ok' if i % 3 else 'error'},{'boom' if i % 3 == 0 else ''},,{i:024d},{i / 7!r}\n" for i in range(5000)),
])
def test_a_frame_read_a_column_at_a_time_is_the_rows_frame(tmp_path, text):
    (tmp_path / "t.csv").write_text(text)
    lines: list[tuple[int, int]] = []
    header, rows = core.read_csv_table(str(tmp_path / "t.csv"), lines)
    rowwise = pd.DataFrame(rows, columns=header)
    frame = plots._csv_frame(str(tmp_path / "t.csv"))
    assert list(frame.columns) == header and frame.dtypes.to_dict() == rowwise.dtypes.to_dict()
    assert frame.equals(rowwise)
    for c in header:
        assert list(map(repr, frame[c].tolist())) == list(map(repr, rowwise[c].tolist()))
    assert [tuple(map(int, span)) for span in frame.attrs["serq_lines"].lines] == lines
