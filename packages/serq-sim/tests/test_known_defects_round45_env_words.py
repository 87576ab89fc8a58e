"""Every word a ``SERQ_*`` variable takes is read in any case (and without the blanks around it), and the message
refusing a value says so. ``SERQ_SIM_TIER=GENERAL`` was taken while the message of a bad value listed only
'general' and 'fast', lowercase; ``SERQ_HYPOTHESIS_SEARCH=off`` (the test suite's) was read as on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq.errors import UserError
from serq.switches import switch
from serq_sim import memguard, tier_env

SERQ = str(Path(sys.executable).parent / "serq")
ROOT = Path(__file__).resolve().parents[3]

PROGRAM = """stage s : fifo;

workload {
  arrive poisson(0.5);
}

session {
  run s (~exp(1));
  observe r = now;
}

run { horizon 50; seed 1; }
"""


@pytest.mark.parametrize(("value", "tier"), [("GENERAL", "general"), ("General", "general"), (" gEnErAl ", "general"),
                                             ("FAST", "fast"), ("Fast", "fast"), ("general", "general")])
def test_the_tier_is_a_word_in_any_case(monkeypatch, value, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", value)
    assert tier_env.forced_general() is (tier == "general")
    # the run itself: the program is in the fast tier's class, so only the word decides which engine runs it
    assert serq_sim.run(serq_frontend.compile(source=PROGRAM)).tier == tier


def test_a_bad_tier_says_any_case(monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", "GENERALL")
    with pytest.raises(UserError) as e:
        tier_env.forced_general()
    assert str(e.value) == ("error: the environment variable SERQ_SIM_TIER is 'GENERALL': it is 'general' (every run "
                            "on the general engine) or unset, empty or 'fast' (the fast tier where a program allows "
                            "it), either word in any case")


def test_the_share_off_is_a_word_in_any_case(monkeypatch):
    for value in ("off", "OFF", "Off", " oFF "):
        monkeypatch.setenv("SERQ_MEMORY_SHARE", value)
        assert memguard.machine_share() is None, value
    monkeypatch.setenv("SERQ_MEMORY_SHARE", "offf")
    with pytest.raises(UserError) as e:
        memguard.machine_share()
    assert str(e.value).endswith("a number above 0 and at most 1 (unset or empty: 0.5), or 'off' in any case (no "
                                 "bound but a ulimit's)")


@pytest.mark.parametrize(("value", "on"), [("OFF", False), ("No", False), ("FALSE", False), (" 0 ", False),
                                           ("ON", True), ("Yes", True), ("TRUE", True), ("1", True)])
def test_the_switches_are_words_in_any_case(monkeypatch, value, on):
    # the switches read by serq.switches (SERQ_COMPILE_CACHE, SERQ_DISABLE_PLUGIN_AUTOLOAD, SERQ_TRACE_ITER,
    # SERQ_HYPOTHESIS_SEARCH): the same value, whatever its case, whatever the default
    monkeypatch.setenv("SERQ_COMPILE_CACHE", value)
    assert switch("SERQ_COMPILE_CACHE", True) is on
    assert switch("SERQ_COMPILE_CACHE", False) is on


@pytest.mark.parametrize(("value", "profile"), [("OFF", "serq"), ("no", "serq"), ("0", "serq"), ("", "serq"),
                                                ("On", "serq-search"), ("1", "serq-search")])
def test_the_suites_search_switch_is_a_switch(value, profile):
    # the root conftest.py's profile of the property tests: 'off' drew fresh examples (any value but blank and
    # '0' was on)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import conftest; from hypothesis import settings; "
            "print(settings._current_profile)")
    env = {**os.environ, "SERQ_HYPOTHESIS_SEARCH": value}
    r = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, env=env, timeout=120,
                       stdin=subprocess.DEVNULL, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == profile


def test_the_command_says_any_case(tmp_path):
    program = tmp_path / "p.sq"
    program.write_text(PROGRAM)
    env = {**os.environ, "SERQ_SIM_TIER": "Generl"}
    r = subprocess.run([SERQ, "run", str(program), "--no-progress"], capture_output=True, text=True, env=env,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("error: the environment variable SERQ_SIM_TIER is 'Generl': it is 'general' (every run on the "
                        "general engine) or unset, empty or 'fast' (the fast tier where a program allows it), either "
                        "word in any case\n")
