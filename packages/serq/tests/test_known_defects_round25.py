"""Known defects of serq check, round 25: a step stage without `budget` was noted only through the IR's spans.

``serq check`` of a source, or of its IR with spans, notes a step stage that gives no `budget` (its budget is
infinite, round 23); the IR told it only by a budget ``inf`` without a span in a stage with one, so the IR
without spans (``serq ir --no-spans``) was taken as giving every budget, silently. The IR now says it
(``Step.budget_given``, written only when false: the IR of a stage with its budget is as before), and the note
names the stage by name at the file given when the IR has no spans. An IR whose ``budget_given`` is false and
whose budget is not ``inf`` contradicts itself and is refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """pool kv { cap 100; admit via E; }
stage E : step {
  BUDGET
  cost 0.01;
  memory kv;
}
workload { arrive poisson(1); }
session { hold kv (10) { run E decode (1); } end; }
"""

NOTE = ("note: stage `E` gives no `budget`: its budget is infinite, every token its residents want in one "
        "iteration (docs/language.md, Stages)\n")

def _at(text: str, path: tuple) -> str:
    """``LINE:COL`` of the value at ``path`` of the JSON ``text`` (serq.jsonin.value_at), where a node of an IR
    file without spans is placed (serq_ir.codec.placed)."""
    from serq.jsonin import value_at

    pos = value_at(text, path)
    return f"{text.count(chr(10), 0, pos) + 1}:{pos - text.rfind(chr(10), 0, pos)}"



def _serq(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``tmp_path``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of the IR written and the notes said, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=100,
                          stdin=subprocess.DEVNULL)


def _ir(tmp_path: Path, budget: str, *flags: str, here=None) -> dict:
    (tmp_path / "p.sq").write_text(PROGRAM.replace("  BUDGET\n", budget))
    r = _serq(tmp_path, "ir", *flags, "p.sq", here=here)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_spanless_ir_notes_the_stage_by_name(tmp_path):
    # (at the stage's own place in the file, the one a node of an IR file without spans is given)
    doc = _ir(tmp_path, "", "--no-spans")
    (tmp_path / "p.ir.json").write_text(json.dumps(doc))
    r = _serq(tmp_path, "check", "p.ir.json")
    assert r.returncode == 0
    assert r.stdout.startswith("OK: 1 pool(s), 1 stage(s)")
    assert r.stderr == f"p.ir.json:{_at(json.dumps(doc), ('stages', 0))}: " + NOTE


def test_an_ir_with_spans_notes_it_at_the_stage(tmp_path, serq_in_process):
    # (serq.cli.main in this process, as the module's commands but the first test's)
    doc = _ir(tmp_path, "", here=serq_in_process)
    (tmp_path / "p.ir.json").write_text(json.dumps(doc))
    r = _serq(tmp_path, "check", "p.ir.json", here=serq_in_process)
    assert (r.returncode, r.stderr) == (0, "p.sq:2:1: " + NOTE)


@pytest.mark.parametrize("budget", ["  budget 10;\n", "  budget inf;\n"])
def test_a_budget_written_is_not_noted_without_spans_either(tmp_path, serq_in_process, budget):
    doc = _ir(tmp_path, budget, "--no-spans", here=serq_in_process)
    assert "budget_given" not in doc["stages"][0]["kind"]  # (the IR of a budget given is as it was)
    (tmp_path / "p.ir.json").write_text(json.dumps(doc))
    r = _serq(tmp_path, "check", "p.ir.json", here=serq_in_process)
    assert (r.returncode, r.stderr) == (0, "")


def test_an_ir_that_says_no_budget_beside_one_is_refused(tmp_path, serq_in_process):
    doc = _ir(tmp_path, "  budget 10;\n", "--no-spans", here=serq_in_process)
    doc["stages"][0]["kind"]["budget_given"] = False
    (tmp_path / "p.ir.json").write_text(json.dumps(doc))
    r = _serq(tmp_path, "check", "p.ir.json", here=serq_in_process)
    assert r.returncode == 1
    assert r.stdout == ""
    assert "budget_given is false, yet the budget is not inf" in r.stderr
    assert "$.stages[0].kind.budget_given" in r.stderr
