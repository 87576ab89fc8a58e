"""A user's JSON (a scenario, a step trace, an IR file) whose object gives a key twice is one error at the
second key, naming where the first is.

Python's json and msgspec keep the last value: ``{"budget": 48, …, "budget": 1}`` ran a scenario of budget 1
(and said so only in a later error about max_seqs), a step ``{"decoders": 1, …, "decoders": 2}`` was fitted
with 2, and an IR file's ``"horizon": 5, "horizon": 100.0`` ran to 100, silently: which of the two the
writer meant is anybody's guess, and a program that gives a setting twice is refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from serq import jsonin

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("text, found", [
    ('{"a": 1, "a": 2}', ("a", 9, 1)),
    ('{"a": 1, "b": {"c": [1, {"d": 1}], "c": 2}}', ("c", 35, 15)),
    ('{"\\u0061": 1, "a": 2}', ("a", 14, 1)),  # one key, however it is written
    ('{"a\\"": 1, "a\\"": 2}', ('a"', 11, 1)),
    ('[{"x": 1}, {"x": 2}]', None),  # one key in each of two objects
    ('{"a": {"b": 1}, "b": {"a": 1}}', None),
    ('{"a": "x:", "b": "{", "c": "}"}', None),  # brackets and colons inside strings
])
def test_the_first_key_given_twice_is_found(text, found):
    assert jsonin.first_twice(text) == found
    if found is None:
        assert jsonin.loads(text) == json.loads(text)
    else:
        with pytest.raises(jsonin.JSONDuplicateKey) as e:
            jsonin.loads(text)
        assert (e.value.key, e.value.pos, e.value.first) == found


def test_a_scenario_that_gives_a_setting_twice_is_one_error_at_it(tmp_path):
    (tmp_path / "sc.json").write_text('{"budget": 48, "max_seqs": 8, "block_size": 8, "num_blocks": 14,\n'
                                      ' "budget": 1, "requests": [{"prompt": 39, "out": 16}]}\n')
    r = _serq(tmp_path, "vllm", "scenario", "sc.json")
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [
        'sc.json:2:2: error: the key "budget" is given twice in one object (first at line 1, column 2)',
        '   "budget": 1, "requests": [{"prompt": 39, "out": 16}]}',
        "   ^"]


def test_a_request_that_gives_a_key_twice_is_one_error_at_it(tmp_path):
    (tmp_path / "sc.json").write_text(json.dumps({"budget": 48, "max_seqs": 8, "block_size": 8, "num_blocks": 14,
                                                  "requests": [{"prompt": 39, "out": 16}]})
                                      .replace('"out": 16', '"out": 16, "out": 1'))
    r = _serq(tmp_path, "vllm", "scenario", "sc.json")
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert r.stderr.startswith('sc.json:1:105: error: the key "out" is given twice in one object (first at line 1, '
                               'column 94)\n'), r.stderr


def test_a_step_that_gives_a_term_twice_is_one_error_at_it(tmp_path):
    (tmp_path / "s.jsonl").write_text('{"decoders": 1, "time": 1}\n{"decoders": 1, "time": 1, "decoders": 2}\n')
    r = _serq(tmp_path, "fit", "s.jsonl")
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert r.stderr.splitlines() == [
        's.jsonl:2:28: error: the key "decoders" is given twice in one object (first at column 2)',
        '  {"decoders": 1, "time": 1, "decoders": 2}',
        "                             ^"]


def test_an_ir_file_that_gives_a_key_twice_is_one_error_at_it(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _serq(tmp_path, "ir", "p.sq", "--no-spans")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith('"horizon"'))
    lines.insert(at, '    "horizon": 5,')
    (tmp_path / "p.ir.json").write_text("\n".join(lines) + "\n")
    for command in ("run", "check"):
        r = _serq(tmp_path, command, "p.ir.json")
        assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.splitlines()[0] == (f'p.ir.json:{at + 2}:{lines[at + 1].index(chr(34)) + 1}: error: the key '
                                            f'"horizon" is given twice in one object (first at line {at + 1}, column 5)')
