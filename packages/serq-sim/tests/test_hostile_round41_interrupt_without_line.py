"""Ctrl-C landing on an instruction of the generated session code that has no line of its own.

A run stopped by Ctrl-C names in its partial report's note the statement its traceback stood in
(``compile.statement_at``, the nearest ``# @sid`` mark above the line). Python 3.11 gives a traceback entry
whose instruction has no line (one the compiler added: a loop's or a ``try``'s clean-up) the line ``None``;
``tb_lineno - 1`` was a TypeError out of ``serq_sim.run`` in place of the partial report (met by a SIGALRM
raising KeyboardInterrupt some milliseconds into runs of examples/single-turn/mg1.sq and ps.sq on the fast
tier, one run in a few hundred). Such an entry now takes the line of the nearest instruction before it that
has one."""

from __future__ import annotations

import types

import pytest
import serq_frontend
from serq_sim.api import registries
from serq_sim.compile import statement_at
from serq_sim.engine import Simulation

# statements at 4:3 (set), 5:3 (loop), 5:10 (set), 5:25 (run), 5:36 (branch), 5:54 (end)
PROGRAM = """stage d : delay;
workload { arrive batch(3); }
session {
  set i = 0;
  loop { set i = i + 1; run d (1); branch (i >= 9) { end; } }
}
run { horizon 10; }
"""
PLACES = {(4, 3), (5, 3), (5, 10), (5, 25), (5, 36), (5, 54)}


def _stopped_at_a_lineless_instruction(monkeypatch):
    """A simulation of PROGRAM on the general engine, and a KeyboardInterrupt whose traceback stands in its
    session code (session 7's frame) at an instruction without a line."""
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    sim = Simulation(serq_frontend.compile(source=PROGRAM), registries(), seed=1, horizon=None, warmup=None,
                     arrivals=None, check_invariants=False, progress=False, trace_path=None, max_events=None)
    code = sim.session_fn.__code__
    lineless = [start for start, _end, line in code.co_lines() if line is None and start > 0]
    if not lineless:  # pragma: no cover - every Python the project supports adds some
        pytest.skip("this Python gives every instruction of the session code a line")
    gen = sim.session_fn(types.SimpleNamespace(serial=7, attrs=[0.0] * 8))  # (never started: its frame alone)
    tb = types.TracebackType(None, gen.gi_frame, lineless[-1], -1)
    assert tb.tb_lineno is None  # (what Python says of such an instruction)
    before = [line for start, _end, line in code.co_lines() if start <= lineless[-1] and line is not None][-1]
    return sim, KeyboardInterrupt().with_traceback(tb), before


def test_statement_at_takes_the_line_of_the_instruction_before(monkeypatch):
    sim, e, before = _stopped_at_a_lineless_instruction(monkeypatch)
    lines = sim.compiler.sources[sim.session_fn.__code__.co_filename][0]
    marks = [lines[j] for j in range(before - 1, -1, -1) if lines[j].lstrip().startswith("# @sid ")]
    at = statement_at(sim.compiler, e.__traceback__)  # (a TypeError before)
    assert at is not None and at[1] == 7
    # the statement of the nearest mark above that line
    assert at[0] == sim.compiler.spans[int(marks[0].split()[-1])]
    assert (at[0].line, at[0].col) in PLACES


def test_the_partial_report_of_such_a_stop_names_the_statement(monkeypatch):
    sim, e, _before = _stopped_at_a_lineless_instruction(monkeypatch)
    sim.stopped(e)
    assert sim.partial == "interrupted"
    note = sim.partial_note
    assert note.startswith("interrupted at <source>:") and note.endswith(", session 7"), note
    line, col = note.removeprefix("interrupted at <source>:").removesuffix(", session 7").split(":")
    assert (int(line), int(col)) in PLACES
