"""A sweep's journal (``OUT.journal``) is read as UTF-8, strictly: a sweep writes its entries in ASCII, so a
byte that is not UTF-8 was put there by something else, and is one error at its line and column, the line
quoted with a caret (it was read as U+FFFD: a message changed, or an entry dropped, without a word). A
byte-order mark an editor saved at its start is skipped (the first entry was taken for a line cut short
and its run ran again)."""

from __future__ import annotations

import csv
import json

import pytest
from serq.errors import UserError
from serq_sweep import sweep

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); }
run { horizon 3; seed 1; }
"""


def _first_key(tmp_path) -> str:
    prog, out = tmp_path / "p.sq", tmp_path / "o.csv"
    prog.write_text(PROGRAM)
    sweep(str(prog), seeds=[1], out=str(out), workers=0, progress=False)
    with open(out, newline="") as f:
        key = next(csv.DictReader(f))["key"]
    for made in (out, tmp_path / "o.points.csv"):
        made.unlink()
    return key


@pytest.mark.timeout(60)
def test_a_journal_byte_that_is_not_utf8_is_one_located_error(tmp_path):
    key = _first_key(tmp_path)
    line = b'{"key": "' + key.encode() + b'", "status": "ok", "message": "caf\xe9", "figures": {}}'
    (tmp_path / "o.csv.journal").write_bytes(line + b"\n")
    with pytest.raises(UserError) as e:
        sweep(str(tmp_path / "p.sq"), seeds=[1], out=str(tmp_path / "o.csv"), workers=0, progress=False)
    col = line.index(b"\xe9") + 1
    assert str(e.value) == (f"{tmp_path / 'o.csv.journal'}:1:{col}: error: the journal is not UTF-8 text (byte "
                            f"0xE9); remove the file or give fresh=True\n  {line.decode('latin-1')[:col - 1]}\\xe9"
                            f'", "figures": {{}}}}\n  {" " * (col - 1)}^')


@pytest.mark.timeout(60)
def test_a_journal_with_a_byte_order_mark_keeps_its_first_entry(tmp_path):
    key = _first_key(tmp_path)
    entry = {"key": key, "status": "ok", "message": "", "warnings": "", "figures": {"events": 12345.0}}
    (tmp_path / "o.csv.journal").write_bytes(b"\xef\xbb\xbf" + json.dumps(entry).encode() + b"\n")
    frame = sweep(str(tmp_path / "p.sq"), seeds=[1], out=str(tmp_path / "o.csv"), workers=0, progress=False)
    assert list(frame["events"]) == [12345.0]  # the journal's, not the run's again
