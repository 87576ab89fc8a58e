"""A preset session's arrival time is a finite number at least 0.

The run starts at 0: a preset at -5 was taken, and its arrival, the first event, took the clock back to
-5 (its sample was at t = -4, and every time average after it was over a window that began before the
run); a NaN or an infinite time was a session scheduled where no clock reading is."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import serq_ir
from ir_programs import located_first_line, mm1
from serq_ir import nodes as n
from serq_ir.validate import validate


def with_presets(*times: float) -> n.Program:
    p = mm1()
    wl = msgspec.structs.replace(p.workload, arrive=n.NoArrivals(), presets=[n.Preset(at=t) for t in times])
    return msgspec.structs.replace(p, workload=wl)


@pytest.mark.parametrize("at", [-5.0, -1e-300, math.nan, math.inf, -math.inf])
def test_a_preset_before_the_run_or_at_no_time_is_refused(at):
    with pytest.raises(serq_ir.IRError, match=r"a preset session arrives at a finite time at least 0, not "
                       r".* - at '\$\.workload\.presets\[1\]\.at'"):
        validate(with_presets(0.0, at))


def test_a_preset_at_0_or_later_is_taken():
    validate(with_presets(0.0, 0, 3.5, 1e9))


def test_an_ir_file_with_a_negative_preset_is_one_error(tmp_path):
    d = json.loads(serq_ir.encode(with_presets(1.0), spans=False))
    d["workload"]["presets"].insert(0, {"at": -5.0})
    f = tmp_path / "neg.ir.json"
    f.write_text(json.dumps(d))
    serq = str(Path(sys.executable).parent / "serq")
    for cmd in ("check", "run"):
        r = subprocess.run([serq, cmd, str(f)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 1, r
        text = f.read_text()
        lines = r.stderr.splitlines()
        assert lines[0] == located_first_line(str(f), text, text.index("-5.0"), "a preset session arrives at a "
                                              "finite time at least 0, not -5.0 - at '$.workload.presets[0].at'")
        assert len(lines) == 3 and lines[2].strip() == "^"


def with_slots(attrs: list[tuple[int, float]], turns: list[list[tuple[int, float]]]) -> n.Program:
    p = mm1()
    p = msgspec.structs.replace(p, attributes=[*p.attributes, n.Attribute(name="a"), n.Attribute(name="b")])
    k = len(p.attributes) - 2
    sv = [n.SlotValue(slot=k + s, value=v) for s, v in attrs]
    tv = [[n.SlotValue(slot=k + s, value=v) for s, v in row] for row in turns]
    wl = msgspec.structs.replace(p.workload, arrive=n.NoArrivals(), presets=[n.Preset(at=0.0, attrs=sv, turns=tv)])
    return msgspec.structs.replace(p, workload=wl)


@pytest.mark.parametrize("attrs, turns, where", [
    ([(0, 1.0), (0, 2.0)], [], "$.workload.presets[0].attrs[1].slot"),
    ([(0, 1.0)], [[(1, 1.0)], [(0, 1.0), (1, 2.0), (1, 3.0)]], "$.workload.presets[0].turns[1][2].slot"),
])
def test_a_slot_given_twice_in_one_row_is_refused(attrs, turns, where):
    # one row's values are set together: a slot given twice had its last value win without a word
    with pytest.raises(serq_ir.IRError, match=r"attribute slot \d+ is given twice in one row; give each slot once"
                       rf" - at '{re.escape(where)}'"):
        validate(with_slots(attrs, turns))


def test_each_slot_once_a_row_is_taken():
    validate(with_slots([(0, 1.0), (1, 2.0)], [[(0, 1.0), (1, 1.0)], [(0, 2.0)]]))
