"""A sweep resumes from its table and its journal (``serq sweep -o OUT``): what it finds there, whatever
state a crash or an edit left it in, is either taken as the runs it records or refused in one message
naming the line; never a traceback, and never a finished run run again.

* A run's ``key`` (24 hexadecimal digits of a SHA-256) that reads as a number, digits only or digits and
  one ``e`` (``2129097858e9761303274868``, some 4 keys in 100 000), was read back from the CSV table as an
  int or a float, so that run was never found finished: every rerun of the sweep ran it again. The
  table's text columns (``status``, ``message``, ``key``) are read as text.
* A journal entry of a run of this sweep whose ``figures`` is not an object (``null``, a list) ended in
  ``AttributeError: 'NoneType' object has no attribute 'items'``; one whose ``status`` is a number, or a
  figure a list, was taken into the table. Each is the journal's one message naming its line.
* A journal whose last line a kill cut short: the next sweep appended its first finished run to that
  torn line, and that run, skipped with the torn line, was run again by the sweep after.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sweepstop import needs_proc, stopped_after

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); observe x = now; }
run { horizon 5; seed 1; }
"""


def _sweep(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """The sweep of p.sq in ``tmp_path``, as a child process; given ``here`` (serq_in_process), on serq.cli.main
    in the test's process, in that folder (a test of what is said, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here("sweep", "p.sq", "--workers", "0", "--no-progress", *args)
    return subprocess.run([SERQ, "sweep", "p.sq", "--workers", "0", "--no-progress", *args], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


def _numeric_key_seed(tmp_path: Path) -> int:
    """A seed whose run's key reads as a number (float() takes it), found by trying seeds in order."""
    from serq_sweep.core import plan

    p = plan([str(tmp_path / "p.sq")], seeds=[1])
    point = p.points[0]
    for seed in range(1, 2_000_000):
        key = p.key(point, seed)
        try:
            float(key)
        except ValueError:
            continue
        return seed
    raise AssertionError("no key of a number in 2 000 000 seeds")  # pragma: no cover - some 1 in 25 000


def test_a_run_whose_key_reads_as_a_number_is_resumed(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    seed = _numeric_key_seed(tmp_path)
    first = _sweep(tmp_path, "--seeds", f"1,{seed}", "-o", "o.csv")
    assert first.returncode == 0, first.stderr
    assert "(2 run now, 0 resumed)" in first.stderr
    table = (tmp_path / "o.csv").read_text()
    again = _sweep(tmp_path, "--seeds", f"1,{seed}", "-o", "o.csv")
    assert again.returncode == 0, again.stderr
    assert "(0 run now, 2 resumed)" in again.stderr, again.stderr
    assert (tmp_path / "o.csv").read_text() == table


def test_the_tables_text_columns_read_back_as_text(tmp_path):
    from serq_sweep.core import read_table

    (tmp_path / "t.csv").write_text("point,seed,status,message,key,events\n"
                                    "0,1,ok,1e5,496702020860087344070732,7\n0,2,error,,2129097858e9761303274868,\n")
    rows = read_table(str(tmp_path / "t.csv"))
    assert [r["key"] for r in rows] == ["496702020860087344070732", "2129097858e9761303274868"]
    assert rows[0]["message"] == "1e5" and rows[1]["message"] == ""
    assert rows[0]["events"] == 7 and rows[0]["seed"] == 1


@needs_proc
@pytest.mark.parametrize("field, value", [("figures", None), ("figures", []), ("status", 5),
                                          ("message", None), ("figures", {"events": [1, 2]}), ("key", 7)])
def test_a_journal_entry_of_the_wrong_shape_is_one_message(tmp_path, monkeypatch, serq_in_process, field, value):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    journal = tmp_path / "o.csv.journal"
    proc = stopped_after(1, ["sweep", "p.sq", "--workers", "0", "--no-progress", "--seeds", "1..2", "-o", "o.csv"],
                         journal)
    proc.kill()
    proc.communicate()
    entry = json.loads(journal.read_text().splitlines()[0])
    assert {"key", "status", "message", "figures"} <= set(entry)
    entry[field] = value
    line = json.dumps(entry)
    journal.write_text(line + "\n")
    # (the first entry's refusal as a child process, the others in this process)
    r = _sweep(tmp_path, "--seeds", "1..2", "-o", "o.csv",
               here=None if (field, value) == ("figures", None) else serq_in_process)
    assert r.returncode == 1, r.stderr
    # at the field's value (json.dumps writes '"field": value'), the line quoted with a caret under it
    # (a line of more than 200 characters is quoted around the column)
    col = line.index(f'"{field}": ') + len(f'"{field}": ') + 1
    head, quote, caret = r.stderr.splitlines()
    assert head == (f"o.csv.journal:1:{col}: error: not an entry of a sweep's journal; remove the file or give "
                    "--fresh"), r.stderr
    at = len(caret) - 1
    part = quote[2:].removeprefix("...").removesuffix("...")
    assert caret.strip() == "^" and part in line and quote[at:].startswith(json.dumps(value)), r.stderr
    assert not (tmp_path / "o.csv").exists()


@needs_proc
def test_a_run_appended_after_a_torn_line_is_kept(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    journal = tmp_path / "o.csv.journal"
    args = ["sweep", "p.sq", "--workers", "0", "--no-progress", "--seeds", "1..4", "-o", "o.csv"]
    proc = stopped_after(2, args, journal)
    proc.kill()
    proc.communicate()
    lines = journal.read_text().splitlines()
    journal.write_text(lines[0] + "\n" + lines[1][:60])  # the second entry torn by a kill mid-write
    proc = stopped_after(1, args, journal)  # runs seed 2 again, journals it, stops
    proc.kill()
    proc.communicate()
    assert [json.loads(line)["key"] for line in journal.read_text().splitlines()[::2]] == [
        json.loads(lines[0])["key"], json.loads(lines[1])["key"]]
    r = _sweep(tmp_path, "--seeds", "1..4", "-o", "o.csv")
    assert r.returncode == 0, r.stderr
    assert "(2 run now, 2 resumed)" in r.stderr, r.stderr


def test_open_own_append_starts_a_line(tmp_path):
    from serq.files import open_own_append

    for before, after in [("", "x\n"), ("a\n", "a\nx\n"), ('{"torn', '{"torn\nx\n')]:
        f = tmp_path / "j"
        f.write_text(before)
        with open_own_append(f) as out:
            out.write("x\n")
        assert f.read_text() == after
    f.unlink()
    with open_own_append(f) as out:
        out.write("x\n")
    assert f.read_text() == "x\n"
