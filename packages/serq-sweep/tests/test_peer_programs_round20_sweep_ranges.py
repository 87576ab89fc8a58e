"""A range of values written as a range of seeds (peer programs, round 20: a planner sweeping a fleet's size
wrote `--set N=3..5`, the form `--seeds 1..5` takes, and was told only `'3..5' is not a number`).

`A..B` of two numbers given as a swept value is refused naming the range meant, `A:B:1` (START:STOP:STEP),
and that START:STOP steps by 1; a usage error (status 2) as before, on the command line and from Python. What
the hint offers is checked to be the range meant: `3:5` is 3, 4 and 5, as `3:5:1` is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.errors import UsageError
from serq_sweep.axes import parse_range

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "let N = 1;\nstage s : fifo(N);\nworkload { arrive poisson(1); }\nsession { run s (0.5); }\nrun { horizon 10; }\n"


@pytest.mark.parametrize(("value", "meant"), [("3..5", "3:5:1"), ("0.5..2", "0.5:2:1"), ("-1..2", "-1:2:1"),
                                              ("1,3..5", "3:5:1")])
def test_a_seeds_range_as_a_value_names_the_range_meant(value, meant):
    with pytest.raises(UsageError) as e:
        parse_range(value, "--set N")
    bad = value.split(",")[-1]
    assert str(e.value) == (f"error: --set N: '{bad}' is not a number: a range of values is START:STOP:STEP ({meant}), or "
                            "START:STOP with a step of 1; A..B is a range of seeds")


def test_what_the_hint_offers_is_the_range():
    assert parse_range("3:5:1", "--set N") == parse_range("3:5", "--set N") == [3.0, 4.0, 5.0]
    assert parse_range("0.5:2:1", "--set N") == [0.5, 1.5]


@pytest.mark.parametrize("value", ["3...5", "3..", "..5", "a..b", "1e3..5"])
def test_other_text_is_still_no_number(value):
    with pytest.raises(UsageError) as e:
        parse_range(value, "--set N")
    assert str(e.value).startswith(f"error: --set N: '{value}' is not a number") and "seeds" not in str(e.value)


def test_the_command_line_and_python_say_it(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", str(p), "--set", "N=1..3", "--no-progress"], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("error: --set N: '1..3' is not a number: a range of values is START:STOP:STEP (1:3:1), or "
                        "START:STOP with a step of 1; A..B is a range of seeds\n")
    with pytest.raises(UsageError, match=r"sets\['N'\]: '1\.\.3' is not a number: a range of values is"):
        serq_sweep.sweep(str(p), sets={"N": "1..3"}, progress=False)
