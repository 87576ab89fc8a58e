"""Known defects, round 29 (serq-sweep): a file's name is printed by one rule everywhere
(serq.errors.shown_path): its line breaks and other unprintable characters escaped, and one longer than
PATH_WIDTH characters cut around `…`, by serq run and serq sweep alike."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from serq.errors import PATH_WIDTH, shown_path

ROOT = Path(__file__).resolve().parents[3]
REPLAY = ROOT / "examples" / "replay" / "vllm_replay.sq"


def _serq(cwd, *args):
    return subprocess.run([sys.executable, "-m", "serq", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def test_shown_path():
    assert shown_path("runs/t.csv") == "runs/t.csv"
    assert shown_path("a\nb.sq") == "a\\nb.sq"
    assert shown_path("x" * PATH_WIDTH) == "x" * PATH_WIDTH
    long = "d/" + "x" * 4990 + ".csv"
    assert shown_path(long) == long[:120] + "…" + long[-119:]


def test_a_program_named_with_a_line_break(tmp_path):
    (tmp_path / "a\nb.sq").write_text("let x = ;\n")
    r = _serq(tmp_path, "check", "a\nb.sq")
    assert r.returncode == 1
    assert r.stderr.splitlines() == ["a\\nb.sq:1:9: error: unexpected `;`: the value is missing after `=`",
                                     "  let x = ;", "          ^"]
    r = _serq(tmp_path, "run", "m\nissing.sq")
    assert r.stderr == "error: m\\nissing.sq: cannot read: No such file or directory\n"
    r = _serq(tmp_path, "check", "m\nissing.ir.json")
    assert r.stderr == "error: m\\nissing.ir.json: cannot read: No such file or directory\n"


def test_a_trace_named_with_a_line_break(tmp_path):
    (tmp_path / "b\nad.csv").write_text("session,turn,new,out,think,forced\n0,1,1x,1,0,0\n")
    r = _serq(tmp_path, "run", REPLAY, "--trace", "b\nad.csv", "--horizon", "1", "--warmup", "0")
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == "b\\nad.csv:2:5: error: column new: '1x' is not a number"


def test_a_long_trace_name_is_cut_alike_by_run_and_sweep(tmp_path):
    long = "d/" + "x" * 4990 + ".csv"
    shown = long[:120] + "…" + long[-119:]
    r = _serq(tmp_path, "run", REPLAY, "--trace", long, "--horizon", "1", "--warmup", "0")
    assert r.returncode == 1
    assert r.stderr.startswith(f"{shown}: error: cannot read the trace: ") and long not in r.stderr
    s = _serq(tmp_path, "sweep", REPLAY, "--trace", long, "--horizon", "1", "--warmup", "0", "--no-progress")
    assert s.returncode == 1  # a bad input file, as serq run says it (test_hostile_round56_trace_status)
    assert s.stderr == r.stderr and long not in s.stderr
    assert os.listdir(tmp_path) == []


def test_an_output_named_with_a_line_break(tmp_path):
    mg1 = ROOT / "examples" / "single-turn" / "mg1.sq"
    r = _serq(tmp_path, "run", mg1, "--arrivals", "10", "--warmup", "0", "-o", "x\ny/r.csv")
    assert r.returncode == 1
    assert r.stderr == "error: x\\ny/r.csv: no folder x\\ny to write it in\n"
    assert os.listdir(tmp_path) == []
