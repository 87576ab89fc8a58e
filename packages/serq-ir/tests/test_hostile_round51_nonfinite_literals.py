"""An IR edited in Python and saved with json.dump's defaults holds ``NaN``, ``Infinity`` or ``-Infinity`` for
such a float, which is no JSON and which no JSON reader takes. It was ``JSON is malformed: invalid character``
at the word, and said nothing of why: the message now says the word is no JSON number and how the IR writes
an infinite value ("inf"). Any other malformed JSON is said as before."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
import serq_ir
from ir_programs import mm1
from serq_ir.errors import IRError

NOTE = ("is no JSON number (Python's json.dump writes it for such a float): a number of the IR is finite, and an "
        "infinite value is written \"inf\" or \"-inf\", where the IR allows one")


def ir_text(rate: float) -> str:
    """An M/M/1 queue's IR, its arrival rate ``rate`` as json.dump writes it."""
    data = json.loads(serq_ir.encode(mm1()))
    data["workload"]["arrive"]["rate"] = rate
    return json.dumps(data)


@pytest.mark.parametrize(("rate", "word"), [(math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity")])
def test_a_nonfinite_literal_is_said_as_such_at_it(rate, word):
    text = ir_text(rate)
    with pytest.raises(IRError) as info:
        serq_ir.decode(text, name="p.ir.json")
    first = str(info.value).splitlines()[0]
    at = text.index(f'"rate": {word}') + len('"rate": ') + 1
    assert first.startswith(f"p.ir.json:1:{at}") or first.startswith(f"p.ir.json:1:{at + 1}"), first
    assert "error: JSON is malformed: invalid character (at offset" in first
    assert first.endswith(f"; `{word}` {NOTE}"), first


def test_other_malformed_json_is_said_as_before():
    text = ir_text(0.8).replace('"rate": 0.8', '"rate": Nope')
    with pytest.raises(IRError) as info:
        serq_ir.decode(text, name="p.ir.json")
    first = str(info.value).splitlines()[0]
    assert first.endswith("error: JSON is malformed: invalid character (at offset "
                          f"{text.index('Nope')})"), first


def test_the_command_says_it(tmp_path):
    (tmp_path / "p.ir.json").write_text(ir_text(math.inf))
    r = subprocess.run([sys.executable, "-m", "serq", "check", "p.ir.json"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stderr.splitlines()[0].endswith(f"; `Infinity` {NOTE}"), r.stderr[:400]
    assert r.stdout == "" and "Traceback" not in r.stderr
