"""A sweep's journal entry whose figure was edited by hand into a text (``"mean": "12.5"``, ``"abc"``) or a flag
is no result a sweep journals: every figure of a run is a number (NaN or null: none), but those its report
holds as text (``partial``'s reason, ``requests.table``) or as a flag (``interrupted``). It is refused as the
journal's other damaged entries are (docs/sweep.md): one error at its line, the caret at the value, naming the
figure, and nothing is written. It was taken as the run's result: the table written back held the text under
the figure and the points table had no mean of it. A table to resume from with such a cell is refused the
same way, at its cell."""

from __future__ import annotations

import csv
import json
import math

import pytest
from serq.errors import UserError
from serq_sweep import sweep

# one delay of 1 s a session: every response is 1 s, whatever the seed
PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { set t0 = now; run s (1); observe response = now - t0; }
run { horizon 3; seed 1; }
"""


def _run(tmp_path, **kw):
    return sweep(str(tmp_path / "p.sq"), seeds=[1], out=str(tmp_path / "o.csv"), workers=0, progress=False, **kw)


def _entry(tmp_path) -> dict:
    """The journal entry of the sweep's one run, as a sweep writes it (from its table's row)."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    _run(tmp_path)
    with open(tmp_path / "o.csv", newline="") as f:
        row = next(csv.DictReader(f))
    for made in ("o.csv", "o.points.csv"):
        (tmp_path / made).unlink()
    fixed = ("point", "seed", "status", "message", "warnings", "key")
    figures = {k: (math.nan if v == "" else v == "True" if v in ("True", "False") else float(v))
               for k, v in row.items() if k not in fixed}
    figures["partial"] = None
    assert figures["observes.response.mean"] == 1.0 and figures["interrupted"] is False
    return {"key": row["key"], "status": "ok", "message": "", "warnings": row["warnings"], "figures": figures}


def _journal(tmp_path, entry: dict) -> str:
    line = json.dumps(entry)
    (tmp_path / "o.csv.journal").write_text(line + "\n")
    return line


@pytest.mark.timeout(60)
@pytest.mark.parametrize("value, shown", [("12.5", 'the text "12.5"'), ("abc", 'the text "abc"'), (True, "true")])
def test_a_figure_that_is_no_number_is_a_damaged_entry(tmp_path, value, shown):
    entry = _entry(tmp_path)
    entry["figures"]["observes.response.mean"] = value
    line = _journal(tmp_path, entry)
    with pytest.raises(UserError) as e:
        _run(tmp_path)
    col = line.index('"observes.response.mean": ') + len('"observes.response.mean": ') + 1
    head = (f"{tmp_path / 'o.csv.journal'}:1:{col}: error: not an entry of a sweep's journal (the figure "
            f"observes.response.mean is {shown}, not a number); remove the file or give fresh=True")
    said = str(e.value).split("\n")
    assert said[0] == head
    # the line quoted, the caret under the value
    assert said[2].index("^") - said[1].index(json.dumps(value) + ", ") == 0
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "o.points.csv").exists()
    assert (tmp_path / "o.csv.journal").read_text() == line + "\n"  # (left as it was)


@pytest.mark.timeout(60)
def test_text_and_flags_where_the_report_has_them_resume(tmp_path):
    entry = _entry(tmp_path)
    # as a bounded run journals them; the mean a figure the run did not give (12.5, so it is the journal's)
    entry["figures"].update({"partial": "max-events", "interrupted": True, "observes.response.mean": 12.5})
    entry["status"] = "partial"
    _journal(tmp_path, entry)
    frame = _run(tmp_path)
    assert list(frame["status"]) == ["partial"]
    assert list(frame["partial"]) == ["max-events"] and list(frame["interrupted"]) == [True]
    assert list(frame["observes.response.mean"]) == [12.5]


@pytest.mark.timeout(60)
def test_a_flag_made_a_text_is_damaged_too(tmp_path):
    entry = _entry(tmp_path)
    entry["figures"]["interrupted"] = "no"
    _journal(tmp_path, entry)
    with pytest.raises(UserError, match=r"the figure interrupted is the text \"no\", not true or false\); "):
        _run(tmp_path)


@pytest.mark.timeout(60)
def test_the_cli_says_it_with_status_1_and_no_traceback(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    entry = _entry(tmp_path)
    entry["figures"]["observes.response.mean"] = "abc"
    _journal(tmp_path, entry)
    serq = str(Path(sys.executable).parent / "serq")
    p = subprocess.run([serq, "sweep", "p.sq", "--seeds", "1", "-o", "o.csv", "--workers", "0", "--no-progress"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1
    assert p.stderr.startswith("o.csv.journal:1:")
    assert ("error: not an entry of a sweep's journal (the figure observes.response.mean is the text \"abc\", not a "
            "number); remove the file or give --fresh") in p.stderr.splitlines()[0]
    assert "Traceback" not in p.stderr and p.stdout == ""


@pytest.mark.timeout(60)
def test_a_table_cell_that_is_no_number_is_refused_at_its_cell(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    _run(tmp_path)
    out = tmp_path / "o.csv"
    lines = out.read_text().splitlines()
    head, row = lines[0].split(","), lines[1].split(",")
    at = head.index("observes.response.mean")
    assert row[at] == "1.0"
    row[at] = "abc"
    out.write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n")
    with pytest.raises(UserError) as e:
        _run(tmp_path)
    col = len(",".join(row[:at])) + 2
    assert str(e.value).split("\n")[0] == (
        f"{out}:2:{col}: error: the run {row[head.index('key')]} (row 1): the figure observes.response.mean is the "
        "text \"abc\", not a number; remove it or give fresh=True")
    assert out.read_text().splitlines()[1] == ",".join(row)  # (left as it was)
