"""A run stopped by Ctrl-C or SIGTERM names, in its partial report's note, the statement and the session it
was running when the signal came (where that is a session's statement), as ``--max-wall``'s note does
within one event: it named the simulated time alone (``note: interrupted at t=0; …``)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

# 1 000 sessions, each 900 000 passes of a loop at t=0 (below the spin guard's 1 000 000): minutes of work
# inside the session's statements, all of them on line 4
LOOP = """workload { arrive batch(1000); }
session {
  set i = 0;
  loop { set i = i + 1; branch (i >= 900000) { end; } }
}
run { horizon 10; }
"""
LINE = LOOP.splitlines()[3]
#: the columns of the statements of line 4: loop, set, branch, end
COLUMNS = {LINE.index(w) + 1 for w in ("loop", "set", "branch", "end")}


def _signalled(tmp_path: Path, sig: int, tier: str) -> tuple[int, dict]:
    """``serq run p.sq --json`` of LOOP, sent ``sig`` once it runs: its exit status and report. A signal
    during start-up is one line and no report, so the wait grows until the run had begun."""
    (tmp_path / "p.sq").write_text(LOOP)
    env = dict(os.environ, SERQ_SIM_TIER=tier)
    for wait in (1.0, 3.0, 8.0):
        proc = subprocess.Popen([SERQ, "run", "p.sq", "--no-progress", "--json"], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        try:
            time.sleep(wait)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
            proc.wait()
        assert b"Traceback" not in err, err
        if out:
            return proc.returncode, json.loads(out)
    raise AssertionError("the run never began")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig, tier, status, words", [
    (signal.SIGINT, "", 130, "interrupted"),
    (signal.SIGTERM, "general", 143, "terminated (SIGTERM)"),
], ids=["sigint-fast", "sigterm-general"])
def test_the_note_of_a_signal_names_the_statement_and_the_session(tmp_path, sig, tier, status, words):
    code, doc = _signalled(tmp_path, sig, tier)
    assert code == status
    note = next(n for n in doc["notes"] if n.startswith(f"note: {words}"))
    m = re.fullmatch(rf"note: {re.escape(words)} at p\.sq:4:(\d+), session (\d+) at t=0; "
                     "the figures cover what was simulated", note)
    assert m is not None, note
    assert int(m.group(1)) in COLUMNS and 0 <= int(m.group(2)) < 1000, note
