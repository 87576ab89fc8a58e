"""IR files a user did not get from serq ir: what the source refuses, a file is refused too, at its place.

Two declarations of one name were taken: the report keys its figures and a dump its files by name, so the
second observe (or gauge, stage, pool) silently replaced the first's figures in a JSON report and
overwrote its file in `serq run --dump DIR`. A horizon of 0 or below passed `serq check` and was refused
by a run as "warmup 0 is not below the horizon -1"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_ir
from ir_programs import located_first_line, mm1

SERQ = str(Path(sys.executable).parent / "serq")


def _ir(change) -> dict:
    d = json.loads(serq_ir.encode(mm1(), spans=False))
    change(d)
    return d


def _refused(d: dict, message: str) -> None:
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(json.dumps(d), name="bad.ir.json")
    assert str(e.value) == f"error: bad.ir.json: {message}"


def _second_observe(d):
    d["observes"].append({"name": "response"})
    d["session"].append({**d["session"][2], "observe": 1})


def _gauge(name):
    return {"name": name, "value": {"kind": "Num", "value": 1.0}}


NAMES = {
    "observe": (_second_observe, "the name 'response' is given twice (first at $.observes[0].name); every "
                                 "observe has a name of its own - at '$.observes[1].name'"),
    "gauge": (lambda d: d.__setitem__("gauges", [_gauge("g"), _gauge("g")]),
              "the name 'g' is given twice (first at $.gauges[0].name); every gauge has a name of its own - at "
              "'$.gauges[1].name'"),
    "gauge named as an observe": (lambda d: d.__setitem__("gauges", [_gauge("response")]),
                                  "the name 'response' is given twice (first at $.observes[0].name); every gauge "
                                  "has a name of its own - at '$.gauges[0].name'"),
    "stage": (lambda d: d["stages"].append(d["stages"][0]),
              "the name 'server' is given twice (first at $.stages[0].name); every stage has a name of its own "
              "- at '$.stages[1].name'"),
    "pool named as a stage": (lambda d: d.__setitem__("pools", [{"name": "server"}]),
                              "the name 'server' is given twice (first at $.stages[0].name); every pool has a "
                              "name of its own - at '$.pools[0].name'"),
    "attribute": (lambda d: d["attributes"].append({"name": "t0"}),
                  "the name 't0' is given twice (first at $.attributes[4].name); every attribute has a name of "
                  "its own - at '$.attributes[5].name'"),
}


@pytest.mark.parametrize("case", sorted(NAMES))
def test_a_name_declared_twice_is_refused_at_the_second(case):
    change, message = NAMES[case]
    _refused(_ir(change), message)


@pytest.mark.parametrize("horizon", [0.0, -1.0, "-inf"])
def test_a_horizon_not_above_zero_is_refused(horizon):
    _refused(_ir(lambda d: d["run"].__setitem__("horizon", horizon)),
             f"the horizon is above 0 (or inf), not {horizon} - at '$.run.horizon'")


@pytest.mark.parametrize("horizon", [1e-9, 5.0, "inf"])
def test_a_positive_horizon_is_taken(horizon):
    # (the warmup below it: mm1's warmup of 100 leaves no window before a horizon of 5, refused since round 5)
    serq_ir.decode(json.dumps(_ir(lambda d: d["run"].update(horizon=horizon, warmup=0.0))), name="ok.ir.json")


def test_a_dump_file_is_not_overwritten_by_an_observe_of_the_same_name(tmp_path):
    # `serq run twice.ir.json --dump out` wrote out/response.csv twice, the first observe's samples lost
    (tmp_path / "twice.ir.json").write_text(json.dumps(_ir(_second_observe)))
    for command in (["check"], ["run", "--dump", "out", "--horizon", "50", "--no-progress"]):
        r = subprocess.run([SERQ, command[0], "twice.ir.json", *command[1:]], capture_output=True, text=True,
                           cwd=tmp_path, timeout=60)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        # told at the second observe's name, the line quoted with a caret
        text = (tmp_path / "twice.ir.json").read_text()
        second = text.index('"response"', text.index('"response"') + 1)
        lines = r.stderr.splitlines()
        assert lines[0] == located_first_line("twice.ir.json", text, second, NAMES["observe"][1])
        assert len(lines) == 3 and lines[2].strip() == "^"
        assert not (tmp_path / "out").exists()


UNPRINTABLE = {
    # the text report printed a stage named so as it is: the escape sequence drove the reader's terminal
    "escape sequence": ("stages", "\x1b[2Jserver", "'\\x1b'"),
    # a newline broke the report's table in two
    "newline": ("observes", "resp\nonse", "'\\n'"),
    "NUL": ("attributes", "t\x00", "'\\x00'"),
    "bidirectional override": ("observes", "resp\u202eesnop", "'\\u202e'"),
}


@pytest.mark.parametrize("case", sorted(UNPRINTABLE))
def test_a_name_that_does_not_print_is_refused(case):
    field, name, char = UNPRINTABLE[case]
    i = 4 if field == "attributes" else 0
    _refused(_ir(lambda d: d[field][i].__setitem__("name", name)),
             f"the name {ascii(name)} holds {char}, a character that does not print; a name is printable text "
             f"- at '$.{field}[{i}].name'")


def test_record_and_constant_names_print_and_are_not_empty():
    _refused(_ir(lambda d: d.__setitem__("records", [{"name": "req", "columns": ["a\tb"]}])),
             "the name 'a\\tb' holds '\\t', a character that does not print; a name is printable text - at "
             "'$.records[0].columns[0]'")
    _refused(_ir(lambda d: d.__setitem__("constants", [["\x07", 1.0]])),
             "the name '\\x07' holds '\\x07', a character that does not print; a name is printable text - at "
             "'$.constants[0][0]'")
    _refused(_ir(lambda d: d["observes"][0].__setitem__("name", "")), "a name is not empty - at "
                                                                       "'$.observes[0].name'")


def test_a_name_of_any_printable_text_is_taken():
    # names need not be identifiers (test_generated_code.py runs names written to break out of the code)
    change = lambda d: d["stages"][0].__setitem__("name", "x'); é \"s\" (")  # noqa: E731
    serq_ir.decode(json.dumps(_ir(change)), name="ok.ir.json")
