"""``SERQ_SWEEP_STOP_AFTER`` is read as digits 0-9: ``²`` (and other characters ``str.isdigit`` takes but
``int()`` does not) was a ValueError traceback of every sweep. Any other value is now refused naming it (round
41: it was no stop at all, without a word), as the other SERQ_* numbers are."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep import core

SERQ = str(Path(sys.executable).parent / "serq")


@pytest.mark.parametrize("value", ["\u00b2", "\u2460", "\u0663", "\uff13", "-1", "1.5"])
def test_a_value_that_is_not_ascii_digits_is_refused(monkeypatch, value):
    monkeypatch.setenv("SERQ_SWEEP_STOP_AFTER", value)
    with pytest.raises(UserError, match="^error: the environment variable SERQ_SWEEP_STOP_AFTER is "):
        core._stop_after()


@pytest.mark.parametrize("value, count", [("", 0), ("0", 0), (" 2", 2)])
def test_empty_zero_and_blanks(monkeypatch, value, count):
    monkeypatch.setenv("SERQ_SWEEP_STOP_AFTER", value)
    assert core._stop_after() == count


def test_ascii_digits_are_the_count(monkeypatch):
    monkeypatch.setenv("SERQ_SWEEP_STOP_AFTER", "3")
    assert core._stop_after() == 3


@pytest.mark.timeout(60)
def test_a_sweep_under_such_a_value_is_refused_without_a_traceback(tmp_path):
    (tmp_path / "p.sq").write_text("stage s : fifo;\nworkload { arrive poisson(0.5); }\n"
                                   "session { set t0 = now; run s (~exp(1)); observe r = now - t0; }\n"
                                   "run { horizon 20; }\n")
    env = {**os.environ, "SERQ_SWEEP_STOP_AFTER": "\u00b2"}
    r = subprocess.run([SERQ, "sweep", "p.sq", "--workers", "0", "--no-progress"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("error: the environment variable SERQ_SWEEP_STOP_AFTER is '\u00b2': it is how many")
