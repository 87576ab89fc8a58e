"""``SERQ_SIM_TIER`` is read in one place (serq_sim.tier_env), and a value it does not take is an error.

The fast tier's module, the compiler and the step stage each read it (three copies of one rule), and any
value but ``general`` meant the default: ``SERQ_SIM_TIER=genral`` silently ran the fast tier, so a check
of the general engine against the fast tier compared the fast tier with itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq.errors import UserError
from serq_sim.tier_env import forced_general

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """stage s : fifo;
workload { arrive poisson(0.5); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 50; seed 1; }
"""


@pytest.mark.parametrize(("value", "general"), [("", False), ("fast", False), (" Fast ", False),
                                                ("general", True), ("GENERAL", True), (" general\n", True)])
def test_the_values_it_takes(monkeypatch, value, general):
    monkeypatch.setenv("SERQ_SIM_TIER", value)
    assert forced_general() is general


def test_unset_is_the_default(monkeypatch):
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    assert forced_general() is False


@pytest.mark.parametrize("value", ["genral", "1", "true", "slow", "general,fast", "\x1b[31m"])
def test_any_other_value_is_an_error_naming_it(monkeypatch, value):
    monkeypatch.setenv("SERQ_SIM_TIER", value)
    with pytest.raises(UserError) as info:
        forced_general()
    assert str(info.value).startswith("error: the environment variable SERQ_SIM_TIER is '")
    assert "\x1b" not in str(info.value)
    program = serq_frontend.compile(source=PROGRAM)
    with pytest.raises(UserError):
        serq_sim.run(program, progress=False)


def test_the_command_says_it_once(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=60, env={**os.environ, "SERQ_SIM_TIER": "genral"}, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("error: the environment variable SERQ_SIM_TIER is 'genral': it is 'general' (every run on "
                        "the general engine) or unset, empty or 'fast' (the fast tier where a program allows it), either word in any case\n")


def test_both_tiers_still_agree(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = {}
    for tier in ("fast", "general"):
        r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "--json"], capture_output=True, cwd=tmp_path,
                           timeout=60, env={**os.environ, "SERQ_SIM_TIER": tier}, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr
        out[tier] = r.stdout
    assert out["fast"] == out["general"]
