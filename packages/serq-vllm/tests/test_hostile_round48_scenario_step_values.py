"""A request's ``arrive`` or ``think`` that is no non-negative integer is told what it is: each was refused
with '...must be a non-negative integer (a number of steps); the two sides round a fraction differently',
a -1, a NaN, an Infinity, a "3", a null and a 2.0 alike, none of them a fraction. The fraction keeps its
reason; a 2.0 is told it is written without a point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_vllm.scenarios import read_scenario

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
BASE = {"budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 64}


def _message(tmp_path, arrive_text: str) -> str:
    p = tmp_path / "s.json"
    p.write_text('{"budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 64,\n'
                 ' "requests": [{"prompt": 4, "out": 1, "arrive": ' + arrive_text + '}]}\n')
    with pytest.raises(UserError) as e:
        read_scenario(str(p))
    return str(e.value)


HEAD = "requests[0].arrive: must be a non-negative integer (a number of steps), not "


@pytest.mark.parametrize(("text", "said"), [
    ("2.5", "2.5: the two sides round a fraction differently"),
    ("2.0", "2.0: a whole number is written without a point (2)"),
    ("-1", "-1"),
    ("NaN", "NaN"),
    ("Infinity", "inf"),
    ("-Infinity", "-inf"),
    ('"3"', "the string '3'"),
    ("null", "null"),
    ("true", "true"),
    ("[1]", "a list"),
    ('{"x": 1}', "an object"),
])
def test_the_value_refused_is_told_for_what_it_is(tmp_path, text, said):
    first = _message(tmp_path, text).splitlines()[0]
    assert first.endswith(HEAD + said), first
    # the reason of a fraction is given for a fraction alone
    assert ("round a fraction" in first) == (text == "2.5")


def test_a_think_likewise_and_the_command_says_it_at_its_place(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps(dict(BASE, requests=[{"prompt": 4, "out": 1, "session": "a", "turn": 1},
                                                 {"prompt": 9, "out": 1, "session": "a", "turn": 2, "think": -5}])))
    r = subprocess.run([SERQ, "vllm", "scenario", str(p)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert r.stdout == ""
    line = p.read_text()
    col = line.index('"think": -5') + len('"think": ') + 1
    first, source, caret = r.stderr.splitlines()[:3]
    assert first == (f"{p}:1:{col}: error: requests[1].think: must be a non-negative integer (a number of steps), "
                     "not -5"), first
    assert source == "  " + line
    assert caret == " " * (col + 1) + "^"
    assert "Traceback" not in r.stderr
