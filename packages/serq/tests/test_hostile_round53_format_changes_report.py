"""A third party's report format that changes the report it is given (serq.plugins._own_copy; docs/hooks.md,
"Reports").

``serq run`` renders the report with the format first, then writes ``--dump`` and ``--records`` from the same
report and reads its exit status from it. A format that set ``report.result = None`` ended the command in a
TypeError traceback of serQ's dump (``report.result is a NoneType, not a serq_ir.report.Result``) after the
report had been written to ``-o``; one that set ``report.record_table = None`` in ``'NoneType' object is not
callable`` from the records' writing; one that set ``report.result.partial`` changed the command's exit status
(3 for a run that ran to its end). The format is now given a copy of its own."""

from __future__ import annotations

import json
import sys

import pytest

pytestmark = pytest.mark.timeout(60)

PLUGIN = '''import os

from serq import hookimpl


def changing(report, out):
    case = os.environ.get("R53_CASE", "")
    if case == "result":
        report.result = None
    elif case == "records":
        report.record_table = None
    elif case == "partial":
        report.result.partial = "max-events"
    elif case == "observes":
        report.result.observes.clear()
    out.write("changed\\n")


@hookimpl
def serq_report_register_formats(register):
    register("changing", changing)
'''

#: two sessions sent at t = 0, waiting 0.5 and 1.5: two rows of records, two samples of w
PROGRAM = """stage d : delay;

workload {
  arrive batch(2);
}

session {
  set t0 = now;
  run d (0.5 + serial);
  observe w = now - t0;
  record request {
    sent = t0;
    first_token = now;
    last_token = now;
    output = 1;
  }
}

run { horizon 10; }
"""

#: by hand: the samples of w, session 0 at 0.5 of 0.5 and session 1 at 1.5 of 1.5
EXPECTED_W = "time,session,turn,value\n0.5,0,0,0.5\n1.5,1,0,1.5\n"


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    info = tmp_path / "site" / "serq_changing-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-changing\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nchanging = r53_changing_format\n")
    (tmp_path / "site" / "r53_changing_format.py").write_text(PLUGIN)
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("r53_changing_format", None)


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("case", ["", "result", "records", "partial", "observes"])
def test_what_the_format_changes_is_its_own(cwd, monkeypatch, serq_in_process, case, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    monkeypatch.setenv("R53_CASE", case)
    r = serq_in_process("run", "p.sq", "--no-progress", "--format", "changing", "-o", "r.txt", "--dump", "d",
                        "--records", "rec.csv")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert (cwd / "r.txt").read_text() == "changed\n"
    # by hand: session 0 waits 0.5 and records at 0.5, session 1 waits 1.5 and records at 1.5, both sent at 0
    assert (cwd / "rec.csv").read_text().splitlines() == [
        "session,turn,time,sent,first_token,last_token,output", "0,0,0.5,0.0,0.5,0.5,1", "1,0,1.5,0.0,1.5,1.5,1"]
    assert json.loads((cwd / "d" / "serq-dump.json").read_text())["observes"] == ["w"]
    assert (cwd / "d" / "w.csv").read_text() == EXPECTED_W


def test_a_partial_set_by_the_format_is_not_the_commands_status(cwd, monkeypatch, serq_in_process):
    # the run ran to its end: status 0, as without the format's change (it was 3, a run stopped at --max-events)
    monkeypatch.setenv("R53_CASE", "partial")
    r = serq_in_process("run", "p.sq", "--no-progress", "--format", "changing")
    assert (r.returncode, r.stdout, r.stderr) == (0, "changed\n", "")
