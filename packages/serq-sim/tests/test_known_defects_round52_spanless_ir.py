"""A run-time error of an IR file without spans (``serq ir --no-spans``, or its spans deleted) is told at the
node's own place in the file, its JSON path after the message, as a fault of the file is told
(``… - at '$.stages[0].kind.cost'``): serq_ir.codec.placed gives each node without a span one at its object's
line and column when the file is read. Before, a step stage's cost that came out NaN was ``nan.sq: error: at
t=0, session 0: stage E: the iteration's cost is NaN …``: the program's source named (not even the file run)
and no place. ``serq ir`` of such a file writes it without spans, as it was; a file with spans is told as
before. Both tiers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from serq.jsonin import value_at

NAN = """pool kv { cap 100; }
stage E : step { budget 4; cost 0 * (1 / (tokens - tokens)); memory kv; }
workload { arrive batch(1); }
session {
  hold kv (1) {
    run E prefill (2) growing kv;
  }
}
run { horizon 100; }
"""

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

# the iteration at 0 prefills session 0's 2 tokens: its cost 0 * (1 / 0) = 0 * inf is NaN
COST = ("error: at t=0, session 0: stage E: the iteration's cost is NaN (its batch: tokens 2, decoders 0, prefilled 2, "
        "residents 1, kv_decode 0, kv_prefill 2)")
# session 0 holds 1 / (0 - 1) = -1 units at t=1
UNITS = "error: at t=1, session 0: the units of kv are negative (-1)"


def serq(tmp_path, *args, tier=""):
    env = {**os.environ, "SERQ_SIM_TIER": tier, "SERQ_COMPILE_CACHE": "0"}
    return subprocess.run([sys.executable, "-m", "serq", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def strip(x):
    """The IR JSON ``x`` with every span deleted, as by hand."""
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k != "span"}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def at(text: str, path: tuple) -> str:
    pos = value_at(text, path)
    assert pos is not None and text[pos] == "{"
    return f"{text.count(chr(10), 0, pos) + 1}:{pos - text.rfind(chr(10), 0, pos)}"


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("source, message, path", [
    (NAN, COST, ("stages", 0, "kind", "cost")),
    (HOLD, UNITS, ("session", 1, "pools", 0, "units")),
], ids=["step cost", "hold units"])
def test_a_run_time_error_of_a_spanless_ir_names_its_place_and_path(tmp_path, tier, source, message, path):
    (tmp_path / "p.sq").write_text(source)
    ir = serq(tmp_path, "ir", "p.sq")
    assert ir.returncode == 0, ir.stderr
    text = json.dumps(strip(json.loads(ir.stdout)), indent=1)
    (tmp_path / "x.ir.json").write_text(text)
    r = serq(tmp_path, "run", "x.ir.json", "--no-progress", tier=tier)
    shown = "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f"x.ir.json:{at(text, path)}: {message} - at '{shown}'\n"
    # with its spans, the same file is told at the source, quoted, as before
    (tmp_path / "s.ir.json").write_text(ir.stdout)
    r = serq(tmp_path, "run", "s.ir.json", "--no-progress", tier=tier)
    assert r.returncode == 1 and r.stderr.startswith("p.sq:") and " - at " not in r.stderr
    assert r.stderr.splitlines()[0].endswith(message)


def test_serq_ir_of_a_spanless_file_writes_it_without_spans(tmp_path):
    (tmp_path / "p.sq").write_text(NAN)
    ir = serq(tmp_path, "ir", "--no-spans", "p.sq")
    assert ir.returncode == 0, ir.stderr
    (tmp_path / "x.ir.json").write_text(ir.stdout)
    again = serq(tmp_path, "ir", "x.ir.json")
    assert (again.returncode, again.stdout) == (0, ir.stdout)
