"""A file whose name is UTF-8 (`prö.sq`, its content ASCII) under `LC_ALL=C PYTHONUTF8=0`: Python decodes a
name as ASCII there, so the name's bytes came in as lone surrogates, and every command that compiles
refused the file as "not UTF-8 text", blaming the file where the name's decoding was at fault; a program's
`trace "tö.csv"` was a UnicodeEncodeError traceback. The `serq` command now starts itself again in Python's
UTF-8 mode in that locale and opens such a file by its bytes' name, as in a UTF-8 locale: every command
that takes a path gives what it gives there (docs/architecture.md). A program calling the API in such a
process is told the cause (serq.files.name_not_text)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from serq.files import name_not_text

ROOT = Path(__file__).resolve().parents[3]
REPLAY = ROOT / "examples" / "replay" / "vllm_replay.sq"
SCENARIO = ROOT / "packages" / "serq-vllm" / "src" / "serq_vllm" / "oracle" / "generated" / "chunk_many.json"
C = {"LC_ALL": "C", "PYTHONUTF8": "0"}
UTF8 = {"LC_ALL": "C.UTF-8", "PYTHONUTF8": "1"}


def _serq(cwd, env, *args):
    full = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_CTYPE", "LANGUAGE")} | env
    return subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True, cwd=cwd, env=full,
                          timeout=300)


@pytest.fixture
def folder(tmp_path):
    text = REPLAY.read_text().replace('trace "short_base.csv"', 'trace "tö.csv"')
    text = text.replace("arrivals 333;", "arrivals 20;")  # (a short run)
    assert 'trace "tö.csv"' in text and "arrivals 20;" in text
    (tmp_path / "prö.sq").write_text(text)
    (tmp_path / "bö.sq").write_text(text)
    shutil.copy(REPLAY.parent / "short_base.csv", tmp_path / "tö.csv")
    shutil.copy(REPLAY.parent / "a100_step_fit.json", tmp_path / "a100_step_fit.json")
    shutil.copy(SCENARIO, tmp_path / "scö.json")
    return tmp_path


def test_the_interpreter_decodes_names_as_ascii_under_this_locale():
    # (the premise: without it the other cases test nothing)
    r = subprocess.run([sys.executable, "-c", "import sys; print(sys.getfilesystemencoding())"],
                       capture_output=True, text=True, env=os.environ | C, timeout=60)
    assert r.stdout.strip() == "ascii"


@pytest.mark.parametrize("args", [
    ["run", "prö.sq"],
    ["check", "prö.sq"],
    ["fmt", "--check", "prö.sq"],
    ["ir", "prö.sq"],
    ["ast", "prö.sq"],
    ["vllm", "scenario", "scö.json"],
], ids=["run", "check", "fmt", "ir", "ast", "vllm-scenario"])
def test_a_command_reads_a_utf8_name_as_in_a_utf8_locale(folder, args):
    want = _serq(folder, UTF8, *args)
    assert want.returncode == 0, want.stderr
    got = _serq(folder, C, *args)
    assert (got.returncode, got.stdout, got.stderr) == (0, want.stdout, want.stderr)


def test_sweep_compare_metrics_and_plot_of_utf8_names(folder):
    sweep = ["sweep", "prö.sq", "--no-progress", "--workers", "2", "--seeds", "1..2"]
    got = _serq(folder, C, *sweep, "-o", "rö.csv", "--records", "recö.csv")
    assert got.returncode == 0 and b"Traceback" not in got.stderr, got.stderr
    want = _serq(folder, UTF8, *sweep, "-o", "want.csv", "--records", "want_rec.csv")
    assert want.returncode == 0, want.stderr
    assert (folder / "rö.csv").read_bytes() == (folder / "want.csv").read_bytes()
    assert (folder / "recö.csv").read_bytes() == (folder / "want_rec.csv").read_bytes()
    compare = ["compare", "prö.sq", "bö.sq", "--no-progress", "--workers", "0", "--seeds", "1..2"]
    got, want = _serq(folder, C, *compare, "-o", "cö.csv"), _serq(folder, UTF8, *compare, "-o", "c.csv")
    assert got.returncode == want.returncode == 0, got.stderr
    assert (folder / "cö.csv").read_bytes() == (folder / "c.csv").read_bytes()
    got, want = _serq(folder, C, "metrics", "recö.csv"), _serq(folder, UTF8, "metrics", "recö.csv")
    assert (got.returncode, got.stdout) == (0, want.stdout), got.stderr
    got = _serq(folder, C, "plot", "rö.csv", "--x", "seed", "--y", "end", "-o", "plö.png")
    assert got.returncode == 0, got.stderr
    assert (folder / "plö.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_api_names_the_decoding_as_the_cause():
    # the name's bytes as a process decoding names as ASCII gives them: UTF-8 bytes as lone surrogates
    assert name_not_text(os.fsdecode(b"pr\xc3\xb6.sq").encode("utf-8").decode("ascii", "surrogateescape")) == (
        "the file's name is UTF-8, which this process reads as ASCII (the C or POSIX locale with Python's "
        "UTF-8 mode off, PYTHONUTF8=0; PYTHONUTF8=1 reads it)")
    assert name_not_text("caf\udce9.sq") == "the file's name is not UTF-8 text (byte 0xE9)"
    assert name_not_text("prö.sq") is None
