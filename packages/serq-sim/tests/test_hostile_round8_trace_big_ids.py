"""A trace's session and turn cells are below 2**53 in size, where a double tells whole numbers apart.

The trace's cells are read as doubles: the sessions ``9007199254740992`` and ``9007199254740993`` (a trace
exported with 64-bit ids) were one session, silently replayed as one conversation of both sessions' turns
(35 turns where 18 were given), and turns that large could be put out of order. Such a cell is now one
error at its line and column (serq_sim.trace: ``_KEYS``, checked on the whole columns, located row by row).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sim.errors import SimError
from serq_sim.trace import load_trace

SERQ = str(Path(sys.executable).parent / "serq")
HEADER = "session,turn,new,out,think,forced\n"


@pytest.mark.parametrize(("rows", "at", "said"), [
    ("9007199254740992,1,100,4,1,0\n9007199254740993,1,300,4,1,0\n", "2:1", "column session: 9007199254740992"),
    ("1,1,100,4,1,0\n2,-9007199254740993,300,4,1,0\n", "3:3", "column turn: -9007199254740993"),
    ("1,1,100,4,1,0\n1e300,1,1,1,1,0\n", "3:1", "column session: 1e300"),
])
def test_a_key_beyond_2_53_is_refused_at_its_cell(tmp_path, rows, at, said):
    (tmp_path / "t.csv").write_text(HEADER + rows)
    with pytest.raises(SimError) as e:
        load_trace(str(tmp_path / "t.csv"))
    assert str(e.value).startswith(f"{tmp_path / 't.csv'}:{at}: error: {said} is not below 2**53 in size"), e.value
    assert "two sessions could be read as one" in str(e.value) or "two turns" in str(e.value)


def test_keys_below_2_53_are_read_apart(tmp_path):
    big = 2**53 - 1
    (tmp_path / "t.csv").write_text(HEADER + f"{big},1,100,4,1,0\n{big - 1},1,300,4,1,0\n-{big},{big},5,4,1,0\n")
    trace = load_trace(str(tmp_path / "t.csv"))
    assert len(trace.sessions) == 3 and trace.rows == 3


def test_the_command_says_it(tmp_path):
    (tmp_path / "p.sq").write_text(
        'stage s : fifo;\nworkload {\n  arrive poisson(1);\n  trace "t.csv";\n'
        "  session { turn; loop { request; end; } }\n}\nserver { run s (new / 1000); }\nrun { horizon 5; }\n")
    (tmp_path / "t.csv").write_text(HEADER + "9007199254740992,1,100,4,1,0\n9007199254740993,1,300,4,1,0\n")
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr and r.stdout == ""
    assert r.stderr.startswith("t.csv:2:1: error: column session: 9007199254740992 is not below 2**53"), r.stderr
