"""A compressed file (gzip, bzip2, xz, Zstandard, zip) or a Parquet table given where text is read, under a
text name (`--trace t.csv` that is `t.csv.gz` renamed, a program or IR file gzipped, a sweep's table) says
what it is. The error named a byte of the compressed data (`the trace is not UTF-8 text (byte 0x8B)`) and
quoted a line of binary, which tells the user nothing of the cause; it now adds `; it begins as a gzip file
does (1F 8B): serQ reads it as text, uncompressed (decompress it first)` (serq.files.packed_note), in every
reader that says "not UTF-8" (serq.files.not_utf8), and in an IR file's error of malformed JSON at its first
byte (a gzip file's 0x1F is no JSON before its 0x8B is no UTF-8)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from serq.files import byte_order_note, not_utf8, packed_note

SERQ = str(Path(sys.executable).parent / "serq")
REPO = Path(__file__).resolve().parents[3]
PROGRAM = """let a = 1;
stage s : delay;
workload { arrive batch(2); trace "t.csv"; }
session { turn; run s (a * new); record r { y = now; } }
run { horizon 50; seed 1; }
"""
TRACE = b"session,turn,new,out,think,forced\n0,1,20,4,1,0\n0,2,30,4,1,0\n1,1,5,4,1,0\n"
GZIP = "; it begins as a gzip file does (1F 8B): serQ reads it as text, uncompressed (decompress it first)"


def _zipped(data: bytes) -> bytes:
    # the member's time fixed: a zip header holds its date and time, and one written at the clock's time put a
    # byte 0x0A (a line end) before the first byte that is not UTF-8 at some minutes (the error then at line 2)
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("t.csv", date_time=(2020, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return b.getvalue()


def _serq(cwd: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``cwd``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("pack", "said"), [
    (gzip.compress, "a gzip file does (1F 8B)"), (bz2.compress, "a bzip2 file does (42 5A 68)"),
    (lzma.compress, "an xz file does (FD 37 7A 58)"), (_zipped, "a zip archive does (50 4B 03 04)"),
])
def test_a_compressed_trace_says_what_it_is(tmp_path, serq_in_process, pack, said):
    here = None if pack is gzip.compress else serq_in_process  # (gzip's commands as child processes)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_bytes(TRACE)
    plain = _serq(tmp_path, "run", "p.sq", "--no-progress", here=here)
    assert plain.returncode == 0, plain.stderr  # the trace, uncompressed, is one the program replays
    (tmp_path / "t.csv").write_bytes(pack(TRACE))
    r = _serq(tmp_path, "run", "p.sq", "--no-progress", here=here)
    assert (r.returncode, r.stdout) == (1, "") and "Traceback" not in r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith("t.csv:1:") and ": error: the trace is not UTF-8 text (byte 0x" in first, first
    assert first.endswith(f"; it begins as {said}: serQ reads it as text, uncompressed (decompress it first)"), first
    r = _serq(tmp_path, "run", "p.sq", "--no-progress", "--trace", "t.csv", here=here)
    assert r.returncode == 1 and r.stderr.splitlines()[0] == first


def test_every_reader_of_text_names_a_gzip_file(tmp_path, serq_in_process):
    # (the first reader's command as a child process, the others in this process)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_bytes(TRACE)
    ir = _serq(tmp_path, "ir", "p.sq", here=serq_in_process).stdout
    args = ("sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", "-o", "s.csv")
    assert _serq(tmp_path, *args, here=serq_in_process).returncode == 0
    (tmp_path / "s.csv").write_bytes(gzip.compress((tmp_path / "s.csv").read_bytes()))
    (tmp_path / "g.sq").write_bytes(gzip.compress(PROGRAM.encode()))
    (tmp_path / "g.ir.json").write_bytes(gzip.compress(ir.encode()))
    scenario = (REPO / "packages/serq-vllm/src/serq_vllm/oracle/generated/chunk_many.json").read_bytes()
    (tmp_path / "s.json").write_bytes(gzip.compress(scenario))
    steps = "".join(f'{{"decoders": {d}, "kv_decode": {d * 7 % 5}, "prefilled": {d * 3 % 11}, "attention": {d % 4},'
                    f' "time": {0.01 + d * 1e-4}}}\n' for d in range(1, 30))
    (tmp_path / "steps.jsonl").write_bytes(gzip.compress(steps.encode()))
    for cmd, name, what in ((["check", "g.sq"], "g.sq", "the file is "),
                            (["vllm", "scenario", "s.json"], "s.json", "the file is "),
                            (["fit", "steps.jsonl"], "steps.jsonl", "the file is "),
                            (list(args), "s.csv", "cannot read the table to resume from (")):
        r = _serq(tmp_path, *cmd, here=None if name == "g.sq" else serq_in_process)
        assert r.returncode == 1 and "Traceback" not in r.stderr, (cmd, r.stderr)
        first = r.stderr.splitlines()[0]
        # a gzip file's second byte, 0x8B, is the first that is not UTF-8: line 1, column 2
        assert first.startswith(f"{name}:1:2: error: {what}"), first
        assert f"not UTF-8 text (byte 0x8B){GZIP}" in first, first
    # an IR file's first byte, 0x1F, is no JSON before 0x8B is no UTF-8: that fault, at 1:1, says it too
    for cmd in (["check", "g.ir.json"], ["run", "g.ir.json", "--no-progress"]):
        r = _serq(tmp_path, *cmd, here=serq_in_process)
        assert (r.returncode, r.stderr.splitlines()[0]) == (
            1, f"g.ir.json:1:1: error: JSON is malformed: invalid character (at offset 0){GZIP}"), r.stderr


def test_the_notes():
    assert packed_note(b"PAR1\x15\x04") == ("; it begins as a Parquet file does (50 41 52 31): serQ reads it as "
                                            "text: a Parquet table is read only as a sweep's table or records, by "
                                            "a name ending in .parquet")
    assert packed_note(b"\x28\xb5\x2f\xfd").startswith("; it begins as a Zstandard file does (28 B5 2F FD)")
    for head in (b"", b"session,", b"\xff\xfe", b"\x1f", b"\xef\xbb\xbfsession"):
        assert packed_note(head) == ""
    # a byte-order mark's note is the one said; what is neither says only the byte
    mark = byte_order_note(b"\xff\xfe")
    assert mark and not_utf8(0xFF, b"\xff\xfe\x1f\x8b", None) == f"not UTF-8 text (byte 0xFF){mark}"
    assert not_utf8(0xE9, b"caf\xe9", "the trace") == "the trace is not UTF-8 text (byte 0xE9)"
