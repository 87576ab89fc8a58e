"""Files read a line at a time (a trace, a sweep's table and journal, records, a dump's CSV) hold one line
whole; a sparse file of 1 GiB of NUL bytes is one line of 1 GiB. Each reader takes lines of at most 16 MiB
(``serq.files.MAX_LINE``, ``open_input(max_line=)``), a sweep's own tables and journals, and the tables `serq
plot` reads, 256 MiB (``serq_sweep.core.TABLE_LINE``, since ec459b5c: a wide family's header), and a longer one
is one error at once.

Before: ``serq run --trace`` of such a file read the line (2 GB), then scanned the whole file a character
at a time to place the error (more than two minutes); ``serq plot`` of it took 7 GB. The trace's error
paths read it a line at a time too, and no further than where the reader stopped: a quote fault, a byte
that is not UTF-8 at the end of a trace of millions of rows was found by a Python loop over every character
of the file.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
GIB = 2**30
ROOT = Path(__file__).resolve().parents[3]
REPLAY = ROOT / "examples" / "replay"
PROGRAM = "let lambda = 1;\nstage s : fifo;\nworkload { arrive poisson(lambda); }\nsession { run s (1); end; }\n" \
          "run { horizon 10; }\n"


def _sparse(path: Path, size: int = GIB) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def _serq(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    """The command's result and the CPU seconds it took (its own, as the kernel counts a waited-for child's:
    a machine loaded by other work stretched the wall time of a run of 400 000 trace rows past 30 s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _replay(tmp_path: Path) -> None:
    for f in ("vllm_replay.sq", "short_base.csv", "a100_step_fit.json"):
        (tmp_path / f).write_bytes((REPLAY / f).read_bytes())


def test_a_trace_of_one_long_line_is_one_error_at_once(tmp_path):
    _replay(tmp_path)
    _sparse(tmp_path / "t.csv")
    r, seconds = _serq(tmp_path, "run", "vllm_replay.sq", "--trace", "t.csv")
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr == "t.csv:1:1: error: the trace is not CSV: line 1 is longer than 16 MiB (a trace's rows are short)\n"
    assert seconds < 30


@pytest.mark.parametrize("tail, message", [
    (b'1,1,1,1,"1"x,0\n', ":12: error: the trace is not CSV: a quoted field goes on after its closing quote"),
    (b"1,1,1,1,1\xff,0\n", ":10: error: the trace is not UTF-8 text (byte 0xFF)"),
    (b'1,1,1,1,"1,0\n2,2,2,2,2,0\n', ":9: error: the trace is not CSV: the file ends inside this quoted field"),
    # (at the field's start: it was the reader's own words at column 1)
    (b"1,1,1,1," + b"9" * 200_000 + b",0\n", ":9: error: the trace is not CSV: this field is longer than 131072 "
                                              "characters"),
])
def test_a_fault_at_the_end_of_a_long_trace_is_found_a_line_at_a_time(tmp_path, tail, message):
    _replay(tmp_path)
    rows = 400_000
    with open(tmp_path / "t.csv", "wb") as f:
        f.write(b"session,turn,new,out,think,forced\n")
        f.write(b"".join(b"%d,1,100,10,0.5,0\n" % i for i in range(rows)))
        f.write(tail)
    r, seconds = _serq(tmp_path, "run", "vllm_replay.sq", "--trace", "t.csv")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"t.csv:{rows + 2}{message}"), r.stderr
    assert seconds < 30


@pytest.mark.parametrize("make, args, message", [
    (lambda d: _sparse(d / "tab.csv"), ["plot", "tab.csv", "-o", "p.svg", "--x", "lambda", "--y", "response.p99"],
     "error: tab.csv: cannot read the table: line 1 is longer than 256 MiB\n"),
    (lambda d: _sparse(d / "rec.csv"), ["plot", "rec.csv", "-o", "p.svg", "--cdf", "ttft"],
     "error: rec.csv: cannot read the records: line 1 is longer than 256 MiB\n"),
    (lambda d: (d / "dump").mkdir() or _sparse(d / "dump" / "response.csv"),
     ["plot", "dump", "-o", "p.svg", "--cdf", "response"], "error: dump/response.csv: line 1 is longer than 16 MiB\n"),
    (lambda d: _sparse(d / "out.csv"), ["sweep", "p.sq", "-o", "out.csv", "--workers", "0", "--no-progress"],
     "error: out.csv: cannot read the table to resume from (line 1 is longer than 256 MiB); remove it or give "
     "--fresh\n"),
    (lambda d: _sparse(d / "out.csv.journal"), ["sweep", "p.sq", "-o", "out.csv", "--workers", "0", "--no-progress"],
     "error: out.csv.journal: line 1 is longer than 256 MiB, which no entry of a sweep's journal is; remove the file "
     "or give --fresh\n"),
])
def test_a_table_of_one_long_line_is_one_error_at_once(tmp_path, make, args, message):
    (tmp_path / "p.sq").write_text(PROGRAM)
    make(tmp_path)
    before = sorted(os.listdir(tmp_path))
    r, seconds = _serq(tmp_path, *args)
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr == message
    assert seconds < 30
    assert sorted(os.listdir(tmp_path)) == before  # no picture, no table


def test_lines_within_the_limit_are_read_as_before(tmp_path):
    from serq.files import MAX_LINE, open_input

    data = b"a,b\n" + b"1,2\n" * 100_000 + b"x" * (MAX_LINE - 1) + b"\n" + b"3,4"
    (tmp_path / "f.csv").write_bytes(data)
    with open_input(tmp_path / "f.csv", max_line=MAX_LINE) as f:
        assert f.read() == data
