"""An IR file's ``source`` does not choose the folder its trace is read from.

A workload's trace is read relative to, and only inside, the program's folder, which for an IR file is the
folder of the ``source`` it states: an IR file someone sent that said ``"source": "/etc/x.sq"`` and
``trace "passwd"`` had serq read ``/etc/passwd`` as its trace (refused only as a trace without the six
columns), and ``../../../../etc/x.sq`` did the same from anywhere. The trace must now also lie in the folder
of the file the user named, the current folder or a ``SERQ_PATH`` folder (serq_sim.trace.trace_beside,
checked by ``serq run`` and by every sweep, comparison and search before any run); ``--trace FILE``
replaces it as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """stage s : fifo;
stage tool : delay;
workload {
  arrive poisson(1);
  trace "t.csv";
  session { turn; loop { request; branch (more) { tool (think); turn; } else { end; } } }
}
server { run s (new / 1000); observe n = new; }
run { horizon 20; seed 1; }
"""
TRACE = "session,turn,new,out,think,forced\n0,1,100,4,1,0\n0,2,200,4,1,0\n1,1,300,4,1,0\n"


def _serq(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def _ir(tmp_path: Path) -> dict:
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_text(TRACE)
    return json.loads(_serq(tmp_path, "ir", "p.sq").stdout)


def test_an_ir_files_source_does_not_take_its_trace_elsewhere(tmp_path):
    ir = _ir(tmp_path)
    elsewhere = tmp_path / "secret"
    elsewhere.mkdir()
    (elsewhere / "t.csv").write_text(TRACE.replace("100", "999"))
    sent = tmp_path / "sent"
    sent.mkdir()
    for source in (str(elsewhere / "x.sq"), "../secret/x.sq"):
        (sent / "evil.ir.json").write_text(json.dumps({**ir, "source": source}))
        for command in (["run", "evil.ir.json", "--no-progress"],
                        ["sweep", "evil.ir.json", "--workers", "0", "--no-progress", "-o", "out.csv"]):
            r = _serq(sent, *command)
            assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
            assert "t.csv is outside the folder of evil.ir.json and the current folder; a program's trace is " \
                   "read only there" in r.stderr.splitlines()[0], r.stderr
            assert r.stdout == "" and not (sent / "out.csv").exists()
        # the user's own choice reads any file
        r = _serq(sent, "run", "evil.ir.json", "--no-progress", "--trace", str(tmp_path / "t.csv"))
        assert r.returncode == 0, r.stderr
        r = _serq(sent, "run", "evil.ir.json", "--no-progress", "--json", env={"SERQ_PATH": str(elsewhere)})
        assert r.returncode == 0, r.stderr  # a folder the user widened: its trace (new 999, not 100)
        assert json.loads(r.stdout)["observes"]["n"]["mean"] > 300


def test_an_ir_file_beside_its_program_or_run_from_there_reads_it(tmp_path):
    ir = _ir(tmp_path)
    (tmp_path / "p.ir.json").write_text(json.dumps(ir))
    assert _serq(tmp_path, "run", "p.ir.json", "--no-progress").returncode == 0
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "q.ir.json").write_text(json.dumps({**ir, "source": str(tmp_path / "p.sq")}))
    r = _serq(tmp_path, "run", "runs/q.ir.json", "--no-progress")  # from the program's folder
    assert r.returncode == 0, r.stderr
    r = _serq(runs, "run", "q.ir.json", "--no-progress")  # from elsewhere: the trace is the IR's claim
    assert r.returncode == 1 and "is outside the folder of q.ir.json" in r.stderr
    sq = _serq(runs, "run", "../p.sq", "--no-progress")  # a program's own folder is the one it names
    assert sq.returncode == 0, sq.stderr
