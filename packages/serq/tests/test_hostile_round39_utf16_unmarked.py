"""A text input saved as UTF-16 without a byte-order mark (UTF-16LE or UTF-16BE, as some tools write it) says
so. Its bytes are UTF-8 as far as they go (a NUL byte beside each ASCII character is a character), so no
reader said "not UTF-8": a trace's header lacked every column, a step trace's first line was "not a JSON
object: Expecting property name", an IR file's key was no string, a program's second character was
"unexpected character `\\x00`". Each now adds what the file is and how to convert it
(serq.files.utf16_note; for a program, the NUL's message)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.files import utf16_note

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """stage s : delay;
workload { arrive batch(2); trace "t.csv"; }
session { turn; run s (new); }
run { horizon 50; seed 1; }
"""
TRACE = "session,turn,new,out,think,forced\n0,1,20,4,1,0\n1,1,5,4,1,0\n"
STEPS = "".join(f'{{"decoders": {d}, "kv_decode": {d * 7 % 5}, "prefilled": {d * 3 % 11}, "attention": {d % 4}, '
                f'"time": {0.01 + d * 1e-4}}}\n' for d in range(1, 30))


def note(order: str) -> str:
    return (f"; it begins as UTF-16{order} text without a byte-order mark does (a NUL byte beside each ASCII "
            f"character): serQ reads UTF-8 text (iconv -f UTF-16{order} -t UTF-8 converts it)")


def _serq(cwd: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``cwd``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("order", ["LE", "BE"])
def test_every_reader_says_what_the_file_is(tmp_path, serq_in_process, order):
    here = None if order == "LE" else serq_in_process  # (LE's commands as child processes, BE's in this process)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_text(TRACE)
    assert _serq(tmp_path, "run", "p.sq", "--no-progress", here=here).returncode == 0  # in UTF-8, a trace it replays
    ir = _serq(tmp_path, "ir", "p.sq", here=here).stdout
    codec = f"utf-16-{order.lower()}"
    (tmp_path / "t.csv").write_bytes(TRACE.encode(codec))
    (tmp_path / "steps.jsonl").write_bytes(STEPS.encode(codec))
    (tmp_path / "u.ir.json").write_bytes(ir.encode(codec))
    for args, name in ((["run", "p.sq", "--no-progress"], "t.csv"), (["fit", "steps.jsonl"], "steps.jsonl"),
                       (["check", "u.ir.json"], "u.ir.json")):
        r = _serq(tmp_path, *args, here=here)
        assert r.returncode == 1 and "Traceback" not in r.stderr, (args, r.stderr)
        first = r.stderr.splitlines()[0]
        assert first.startswith(f"{name}:1:") and first.endswith(note(order)), first


def test_a_program_saved_as_utf16_names_the_nul(tmp_path):
    (tmp_path / "u.sq").write_bytes(PROGRAM.encode("utf-16-le"))
    r = _serq(tmp_path, "check", "u.sq")
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == ("u.sq:1:2: error: unexpected character `\\x00` (a NUL byte): a program is "
                                        "text, and a file saved as UTF-16 has a NUL byte beside each ASCII "
                                        "character (iconv -f UTF-16LE -t UTF-8 converts one)")


def test_the_note():
    assert utf16_note(b"s\x00e\x00") == note("LE") and utf16_note(b"\x00s\x00e") == note("BE")
    for head in (b"", b"s\x00", b"sess", b"\x00\x00\x00\x00", b"\xe9\x00s\x00", b"s\x00\x00e", b"\x1f\x8b\x08\x00"):
        assert utf16_note(head) == ""


@pytest.mark.parametrize("order", ["LE", "BE"])
def test_a_sweep_table_and_records_saved_as_utf16_say_so(tmp_path, serq_in_process, order):
    here = None if order == "LE" else serq_in_process  # (LE's commands as child processes, BE's in this process)
    (tmp_path / "p.sq").write_text("let a = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\n"
                                   "session { run s (a); record r { y = now; } }\nrun { horizon 5; seed 1; }\n")
    args = ("sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", "-o", "t.csv", "--records", "r.csv")
    assert _serq(tmp_path, *args, here=here).returncode == 0
    table, records = (tmp_path / "t.csv").read_text(), (tmp_path / "r.csv").read_text()
    (tmp_path / "t.csv").write_bytes(table.encode(f"utf-16-{order.lower()}"))
    (tmp_path / "r.csv").write_bytes(records.encode(f"utf-16-{order.lower()}"))
    for cmd, lead in ((args, "cannot read the table to resume from ("),
                      (("plot", "t.csv", "--x", "a", "--y", "events", "-o", "t.svg"), "cannot read the table ("),
                      (("plot", "r.csv", "--cdf", "y", "-o", "r.svg"), "cannot read the records (")):
        r = _serq(tmp_path, *cmd, here=here)
        assert r.returncode == 1 and "Traceback" not in r.stderr, (cmd, r.stderr)
        first = r.stderr.splitlines()[0]
        # at its first byte: the header read as UTF-8 (a NUL beside each letter) is refused before its columns
        assert first.startswith(f"{cmd[1] if cmd[0] == 'plot' else 't.csv'}:1:1: error: {lead}it begins as UTF-16"
                                f"{order} "), first
        assert note(order).removeprefix("; ") in first, first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "r.csv", "t.csv", "t.points.csv"]
