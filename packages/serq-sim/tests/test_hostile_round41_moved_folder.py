"""A program the library API compiled, run after the current folder changed (docs/simulator.md, "The Python
API's report": a program runs from the folder it was compiled in).

``serq_frontend.compile("p.sq")`` names its files as given: the source ``p.sq``, its spans, and its trace clause
``trace "t.csv"``, relative to the folder the compile ran in, which the IR does not record. ``serq_sim.run``
read them from the current folder of the run: after an ``os.chdir`` into a folder holding another ``t.csv`` the
run replayed that trace, a report of other data without a word, and a run-time error quoted the line of
another ``p.sq`` under its message. The compile now notes its folder with the program (serq_ir.folders), and
the run reads the trace and quotes the lines from it, on both tiers."""

from __future__ import annotations

import copy
import gc
import weakref

import pytest
import serq_frontend
import serq_sim
from serq_ir.folders import compiled_in
from serq_sim import SimError

# a trace replayed turn by turn: each turn's `new` observed, so the report says which file was read
REPLAY = """stage pause : delay;
stage svc : fifo;

workload {
  arrive batch(2);
  trace "t.csv" ordered;
}

session {
  turn;
  loop {
    run svc (out);
    observe n = new;
    branch (more) {
      run pause (think);
      turn;
    } else {
      end;
    }
  }
}

run { horizon inf; seed 1; }
"""

# a run-time error at line 8, column 31: the index 1 of a family of 1 (declared with its size: a stage declared
# without one takes no index, test_fleet_round47_not_a_family)
FAULT = """stage d[1] : delay;

workload {
  arrive batch(1);
}

session {
  observe x = 1 + member(d[serial + 1]);
  end;
}

run { horizon 10; seed 1; }
"""

HEADER = "session,turn,new,out,think,forced\n"


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """``a`` holds the program and its trace (two sessions of turns of 5 and 7 tokens); ``b`` another trace of
    the same name (one turn of 50) and a file ``p.sq`` of other lines. The test starts in ``a``."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "p.sq").write_text(REPLAY)
    (a / "t.csv").write_text(HEADER + "0,1,5,1,1,0\n0,2,7,2,1,0\n1,1,5,1,1,0\n")
    (b / "t.csv").write_text(HEADER + "0,1,50,10,1,0\n")
    (a / "f.sq").write_text(FAULT)
    (b / "f.sq").write_text("".join(f"line {i} of another file\n" for i in range(1, 12)))
    monkeypatch.chdir(a)
    return a, b


def _new(report) -> list[float]:
    return report.observe("n").values.tolist()


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_program_compiled_from_a_relative_path_replays_its_own_trace_after_a_chdir(folders, monkeypatch, tier):
    a, b = folders
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    program = serq_frontend.compile("p.sq")
    here = _new(serq_sim.run(program))
    # by hand: session 0 replays turns of 5 and 7 tokens, session 1 one turn of 5
    assert sorted(here) == [5.0, 5.0, 7.0]
    monkeypatch.chdir(b)
    assert _new(serq_sim.run(program)) == here  # (it replayed b's t.csv: [50.0, 50.0])
    (b / "t.csv").unlink()
    assert _new(serq_sim.run(program)) == here  # (it was "cannot read the trace t.csv")


def test_a_program_given_as_text_replays_the_trace_of_the_folder_it_was_compiled_in(folders, monkeypatch):
    a, b = folders
    program = serq_frontend.compile(source=REPLAY)
    monkeypatch.chdir(b)
    assert sorted(_new(serq_sim.run(program))) == [5.0, 5.0, 7.0]
    # compiled in b, it is b's trace: each of the two sessions replays b's one session, one turn of 50
    assert _new(serq_sim.run(serq_frontend.compile(source=REPLAY))) == [50.0, 50.0]


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_run_time_error_after_a_chdir_quotes_the_programs_own_line(folders, monkeypatch, tier):
    a, b = folders
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    program = serq_frontend.compile("f.sq")
    said = []
    for folder in (a, b):
        monkeypatch.chdir(folder)
        with pytest.raises(SimError) as e:
            serq_sim.run(program)
        said.append(str(e.value))
    assert said[0] == said[1]
    assert said[1] == ("f.sq:8:26: error: at t=0, session 0: stage d: index 1 out of range (the family has 1)\n"
                       "    observe x = 1 + member(d[serial + 1]);\n"
                       "                           ^")


def test_the_note_is_the_objects_own_and_keeps_nothing_alive(folders, monkeypatch):
    a, b = folders
    program = serq_frontend.compile("p.sq")
    assert compiled_in(program) == str(a)
    # a copy is another object, with no note: it reads its names from the current folder, as an IR does
    twin = copy.deepcopy(program)
    assert twin == program and compiled_in(twin) is None
    monkeypatch.chdir(b)
    assert _new(serq_sim.run(twin)) == [50.0, 50.0]
    from serq_ir.folders import _FOLDERS

    key, alive = id(program), weakref.ref(program)
    assert key in _FOLDERS
    del program
    gc.collect()
    assert alive() is None and key not in _FOLDERS  # (freed, and its note with it)
