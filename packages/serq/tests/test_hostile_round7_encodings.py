"""A text input saved as UTF-16 or UTF-32 (Windows' "Unicode") is named so, in every command that reads one.

Each reader said the file was not UTF-8 at byte 0xFF, or, for an IR file, "JSON is malformed: invalid
character (at offset 0)", and a sweep resuming from a table or records file gave Python's words ("'utf-8'
codec can't decode byte 0xff in position 0: invalid start byte"). The error now says the file begins with a
UTF-16 (or UTF-32) byte-order mark and how to convert it (serq.files.byte_order_note), where it says the
file is not UTF-8.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.files import byte_order_note

SERQ = str(Path(sys.executable).parent / "serq")
REPO = Path(__file__).resolve().parents[3]
PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); record r { y = now; } }
run { horizon 5; seed 1; }
"""
NOTE = "; it begins with a UTF-16 byte-order mark (FF FE): serQ reads UTF-8 text (iconv -f UTF-16 -t UTF-8 converts it)"


def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("head", "said"), [
    (b"\xff\xfe{", "UTF-16 byte-order mark (FF FE)"), (b"\xfe\xff\x00{", "UTF-16 byte-order mark (FE FF)"),
    (b"\xff\xfe\x00\x00{", "UTF-32 byte-order mark (FF FE 00 00)"),
    (b"\x00\x00\xfe\xff", "UTF-32 byte-order mark (00 00 FE FF)"),
])
def test_the_note_names_the_mark(head, said):
    assert said in byte_order_note(head)


@pytest.mark.parametrize("head", [b"", b"\xef\xbb\xbfx", b"{", b"\xe9", b"\xff"])
def test_no_note_without_a_mark(head):
    assert byte_order_note(head) == ""


def test_every_reader_of_text_names_utf16(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    ir = _serq(tmp_path, "ir", "p.sq").stdout
    scenario = (REPO / "packages/serq-vllm/src/serq_vllm/oracle/generated/chunk_many.json").read_text()
    trace = "session,turn,new,out,think,forced\n0,1,20,4,1,0\n0,2,30,4,1,0\n"
    steps = "".join(f'{{"decoders": {d}, "kv_decode": {d * 7 % 5}, "prefilled": {d * 3 % 11}, "attention": {d % 4},'
                    f' "time": {0.01 + d * 1e-4}}}\n' for d in range(1, 30))
    files = {"u.sq": PROGRAM, "u.ir.json": ir, "s.json": scenario, "t.csv": trace, "steps.jsonl": steps}
    for name, text in files.items():
        (tmp_path / name).write_bytes(text.encode("utf-16"))  # (with its byte-order mark, FF FE here)
    (tmp_path / "replay.sq").write_text((REPO / "examples/replay/vllm_replay.sq").read_text())
    for args, name in ((["check", "u.sq"], "u.sq"), (["check", "u.ir.json"], "u.ir.json"),
                       (["vllm", "scenario", "s.json"], "s.json"), (["fit", "steps.jsonl"], "steps.jsonl"),
                       (["run", "replay.sq", "--no-progress", "--arrivals", "2", "--trace", "t.csv"], "t.csv")):
        r = _serq(tmp_path, *args)
        assert r.returncode == 1 and "Traceback" not in r.stderr, (args, r.stderr)
        first = r.stderr.splitlines()[0]
        assert first.startswith(f"{name}:1:1: error: the ") and "is not UTF-8 text (byte 0xFF" in first, first
        assert first.endswith(NOTE), first


def test_a_sweep_resuming_from_utf16_tables_names_it(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    args = ("sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", "-o", "t.csv", "--records", "r.csv")
    assert _serq(tmp_path, *args).returncode == 0
    table, records = (tmp_path / "t.csv").read_text(), (tmp_path / "r.csv").read_text()
    (tmp_path / "t.csv").write_bytes(table.encode("utf-16"))
    r = _serq(tmp_path, *args)
    assert r.returncode == 1
    # at the first byte (line 1, column 1), the line quoted: the mark's two bytes and each ASCII letter's NUL as \xNN
    head, quote, caret = r.stderr.splitlines()
    assert head == f"t.csv:1:1: error: cannot read the table to resume from (not UTF-8 text (byte 0xFF){NOTE}); " \
                   "remove it or give --fresh"
    assert quote.startswith("  \\xff\\xfep\\x00o\\x00i\\x00n\\x00t\\x00,\\x00") and caret == "  ^"
    (tmp_path / "t.csv").write_text(table)
    (tmp_path / "r.csv").write_bytes(records.encode("utf-16"))
    r = _serq(tmp_path, *args)
    assert r.returncode == 1
    head, quote, caret = r.stderr.splitlines()
    assert head == f"r.csv:1:1: error: cannot read the records to resume from (not UTF-8 text (byte 0xFF){NOTE}); " \
                   "remove it or give --fresh"
    assert quote.startswith("  \\xff\\xfep\\x00o\\x00i\\x00n\\x00t\\x00,\\x00") and caret == "  ^"
    (tmp_path / "r.csv").write_bytes(records.replace("point", "po\xe9nt", 1).encode("latin-1"))
    r = _serq(tmp_path, *args)
    # the byte 0xE9 is the third character of line 1
    assert r.stderr == ("r.csv:1:3: error: cannot read the records to resume from (not UTF-8 text (byte 0xE9)); remove "
                        "it or give --fresh\n  po\\xe9nt,a,seed,key,session,turn,time,y\n    ^\n")
