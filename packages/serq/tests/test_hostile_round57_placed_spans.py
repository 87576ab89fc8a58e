"""serq.errors.PLACED, the JSON path of each span serq_ir.codec.placed gives a node of an IR file read without
spans, grew with every such file a process read and was never cleared: a script that read 10 000 generated IR
files kept every node's place of each, and a file read again after it changed kept the places of its old
layout beside the new. It now keeps the places of the files read last (serq.errors.place_spans: at most
PLACED_FILES files and PLACED_MOST places, the file read last whole), a file read again in place of what it
held before; the program read last is told its run-time error at its place and path as before."""

from __future__ import annotations

import json
import re

import pytest
import serq.errors as E
import serq_ir

# session 0 holds 1 / (0 - 1) = -1 units of kv at t=1 (its run of d takes 1 s): the run's error at the hold
HOLD = """pool kv { cap 100; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (1);
  hold kv (1 / (serial - 1)) {
    run d (1);
  }
}
run { horizon 100; }
"""
UNITS = "error: at t=1, session 0: the units of kv are negative (-1) - at '$.session[1].pools[0].units'"


def _strip(x):
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k != "span"}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _objects(x) -> int:
    """The JSON objects of ``x`` that are IR nodes with a place (every object but a span-less value's)."""
    if isinstance(x, dict):
        return 1 + sum(_objects(v) for v in x.values())
    if isinstance(x, list):
        return sum(_objects(v) for v in x)
    return 0


@pytest.fixture
def spanless(tmp_path, monkeypatch):
    """The IR of HOLD without spans, as text (indent 1), and a clean PLACED for the test."""
    serq_frontend = pytest.importorskip("serq_frontend")
    (tmp_path / "p.sq").write_text(HOLD)
    tree = _strip(json.loads(serq_ir.encode(serq_frontend.compile(str(tmp_path / "p.sq")))))
    monkeypatch.setattr(E, "PLACED", {})
    monkeypatch.setattr(E, "_PLACED_OF", {})
    monkeypatch.chdir(tmp_path)
    return tree


def _places_of(name: str) -> set:
    return {s for s in E.PLACED if s[0] == name}


def test_the_places_kept_are_those_of_the_files_read_last(spanless, monkeypatch):
    serq_sim = pytest.importorskip("serq_sim")
    monkeypatch.setattr(E, "PLACED_FILES", 3)
    text = json.dumps(spanless, indent=1)
    names = [f"f{i}.ir.json" for i in range(8)]
    for name in names:
        with open(name, "w") as f:
            f.write(text)
    programs = [serq_ir.load(name) for name in names]
    # each file's places are its span-less nodes' (one text: as many for each); the first five files' are let go
    each = len(_places_of(names[-1]))
    assert 0 < each <= _objects(spanless)
    assert sorted({s[0] for s in E.PLACED}) == names[-3:]
    assert len(E.PLACED) == 3 * each
    # read again and again: nothing more is kept
    for _ in range(20):
        serq_ir.load(names[-1])
    assert len(E.PLACED) == 3 * each
    # the program read last: its place and path, as before
    with pytest.raises(Exception) as e:
        serq_sim.run(programs[-1], seed=1)
    line = text[: text.index('"units"')].count("\n") + 1  # (the units' object opens on the line of its key)
    assert str(e.value).startswith(f"f7.ir.json:{line}:")
    assert str(e.value).endswith(UNITS)
    # one read before those kept: the same place, without the path (docs/architecture.md), never a wrong one
    with pytest.raises(Exception) as e:
        serq_sim.run(programs[0], seed=1)
    assert re.fullmatch(f"f0.ir.json:{line}:[0-9]+: " + re.escape(UNITS.split(" - at ")[0]), str(e.value))


def test_a_file_read_again_keeps_only_its_new_places(spanless):
    with open("x.ir.json", "w") as f:
        f.write(json.dumps(spanless, indent=1))
    serq_ir.load("x.ir.json")
    first = _places_of("x.ir.json")
    assert first and all(s[1] > 1 for s in first)  # (indented: no object but the whole opens on line 1)
    with open("x.ir.json", "w") as f:
        f.write(json.dumps(spanless))  # one line: every place is on line 1
    serq_ir.load("x.ir.json")
    again = _places_of("x.ir.json")
    assert len(again) == len(first) and all(s[1] == 1 for s in again)
    assert set(E.PLACED) == again


def test_the_most_places_lets_older_files_go_but_never_the_last(spanless, monkeypatch):
    monkeypatch.setattr(E, "PLACED_MOST", 3)  # (fewer than one file's)
    text = json.dumps(spanless, indent=1)
    for name in ("a.ir.json", "b.ir.json"):
        with open(name, "w") as f:
            f.write(text)
        serq_ir.load(name)
    assert {s[0] for s in E.PLACED} == {"b.ir.json"} and len(E.PLACED) > 3
