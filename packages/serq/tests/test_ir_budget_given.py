"""``Step.budget_given`` is optional data of IR version 2 (docs/architecture.md): an IR file written before
the field, which never has it, reads as it did. A step stage that gives no ``budget`` is noted by
``serq check`` from such a file through its spans (a budget ``inf`` without a span in a stage with one), and
the file runs with the budget ``inf``, as the same IR with the field does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

# one session: a hold of 10 and one decode token at a step cost of 0.01, so it ends at 0.01
PROGRAM = """pool kv { cap 100; admit via E; }
stage E : step {
  cost 0.01;
  memory kv;
}
workload { arrive batch(1); }
session { hold kv (10) { run E decode (1); } end; }
run { horizon 5; }
"""

NOTE = ("note: stage `E` gives no `budget`: its budget is infinite, every token its residents want in one "
        "iteration (docs/language.md, Stages)\n")


def _serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=100,
                          stdin=subprocess.DEVNULL)


def _old_ir(tmp_path: Path, *flags: str) -> dict:
    """The program's IR as a serQ before ``budget_given`` wrote it: the field taken out."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _serq(tmp_path, "ir", *flags, "p.sq")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    kind = doc["stages"][0]["kind"]
    assert kind["budget_given"] is False and kind["budget"]["value"] == "inf"
    del kind["budget_given"]
    return doc


def test_an_ir_with_spans_written_before_the_field_is_still_noted(tmp_path):
    (tmp_path / "old.ir.json").write_text(json.dumps(_old_ir(tmp_path)))
    r = _serq(tmp_path, "check", "old.ir.json")
    assert (r.returncode, r.stderr) == (0, "p.sq:2:1: " + NOTE)


def test_an_ir_written_before_the_field_runs_as_the_source_does(tmp_path):
    (tmp_path / "old.ir.json").write_text(json.dumps(_old_ir(tmp_path, "--no-spans")))
    r = _serq(tmp_path, "check", "old.ir.json")
    assert (r.returncode, r.stderr) == (0, "")  # (without spans nor the field, nothing tells the budget apart)
    old = _serq(tmp_path, "run", "old.ir.json", "--json", "--no-progress")
    new = _serq(tmp_path, "run", "p.sq", "--json", "--no-progress")
    assert old.returncode == 0 and new.returncode == 0, old.stderr + new.stderr
    report, source = json.loads(old.stdout), json.loads(new.stdout)
    del report["program"], source["program"]  # (the file read and its hashes)
    assert report == source
    assert report["ended"] == 1
    assert (report["stages"][0]["iterations"], report["stages"][0]["service"]) == (1, 0.01)
