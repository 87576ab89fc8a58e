"""peer_programs37/tp_choice.sq models two TP=1 replicas (tp = 1) or one TP=2 engine (tp = 2); its choices read
`tp == 1 ? … : …` alone, so `--set tp=3` ran silently as TP=2. The program now says which values it takes with a
let that is NaN for any other (a NaN let does not link): tp=3 is one error at that let, with the note of the
--set that gave tp (docs/language.md, Items)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq_frontend.diagnostics import CompileError

HERE = Path(__file__).parent / "peer_programs37"
SERQ = str(Path(sys.executable).parent / "serq")
LINES = (HERE / "tp_choice.sq").read_text().splitlines()
GUARD = next(i for i, line in enumerate(LINES, 1) if line.startswith("let tp_is_1_or_2 ="))
TP = next(i for i, line in enumerate(LINES, 1) if line.startswith("let tp = "))


@pytest.mark.parametrize("value", ["3", "0", "1.5", "inf", "-2"])
def test_a_tp_the_program_does_not_model_is_an_error_naming_the_let(value):
    r = subprocess.run([SERQ, "run", "tp_choice.sq", "--set", f"tp={value}", "--horizon", "5"], capture_output=True,
                       text=True, cwd=HERE, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        f"tp_choice.sq:{GUARD}:20: error: `let tp_is_1_or_2` evaluates to NaN\n"
        f"  {LINES[GUARD - 1]}\n"
        f"  {' ' * 19}^\n"
        f"tp_choice.sq:{TP}:5: note: `tp` is {value}, given by --set tp\n"
        f"  {LINES[TP - 1]}\n"
        f"      ^\n"), r.stderr


@pytest.mark.parametrize("tp, replicas, blocks", [(1, 2, 8010 * 16), (2, 1, 22801 * 16)])
def test_the_two_values_it_models_compile_as_before(tp, replicas, blocks):
    program = serq_frontend.compile(path=str(HERE / "tp_choice.sq"), sets={"tp": tp})
    pools = {p.name: p for p in program.pools}
    assert (pools["kv"].size, pools["kv"].cap, pools["reqs"].size) == (replicas, blocks, replicas)
    assert {c.name: c.value for c in program.constants}["tp_is_1_or_2"] == 1.0


def test_a_sweep_over_a_value_it_does_not_model_runs_nothing(tmp_path):
    r = subprocess.run([SERQ, "sweep", str(HERE / "tp_choice.sq"), "--set", "tp=1,2,3", "--horizon", "5",
                        "--warmup", "1", "--out", "t.csv"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert "error: `let tp_is_1_or_2` evaluates to NaN" in r.stderr and "`tp` is 3, given by --set tp" in r.stderr
    assert not (tmp_path / "t.csv").exists()


def test_the_api_refuses_it_too():
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(path=str(HERE / "tp_choice.sq"), sets={"tp": 3})
    assert "error: `let tp_is_1_or_2` evaluates to NaN" in str(e.value)
    assert "note: `tp` is 3, given by sets['tp']" in str(e.value)
