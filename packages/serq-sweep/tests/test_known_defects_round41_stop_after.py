"""``SERQ_SWEEP_STOP_AFTER`` follows serq.numbers' rule, as the other SERQ_* numbers do
(``SERQ_MEMORY_WORKERS``): a value in other digits (``٣``, Arabic-Indic three; ``３``, fullwidth) was taken for
no stop at all, without a word, where ``SERQ_MEMORY_WORKERS=٣`` is refused. Every value that is not a whole
number in the digits 0-9 (blanks around it allowed) is refused now, naming the variable, with the rule's hint
where Python's ``int()`` reads the text; before any run, in one shape (serq_sim.tier_env.env_error)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq import numbers
from serq.errors import UserError
from serq_sweep import core

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
TAKES = ("it is how many runs a sweep journals before it stops itself (SIGSTOP), for tests of its signals: a whole "
         "number, 0 for never")


@pytest.mark.parametrize("value, hint", [
    ("\u0663", True), ("\uff13", True), ("1_0", True), ("+3", True),   # int() reads these
    ("\u00b2", False), ("-1", False), ("1.5", False), ("three", False), ("3 4", False),
])
def test_other_text_is_refused_naming_it(monkeypatch, value, hint):
    monkeypatch.setenv("SERQ_SWEEP_STOP_AFTER", value)
    with pytest.raises(UserError) as e:
        core._stop_after()
    assert str(e.value) == (f"error: the environment variable SERQ_SWEEP_STOP_AFTER is {value!r}: {TAKES}"
                            + (f" ({numbers.WHOLE_HINT})" if hint else ""))


@pytest.mark.parametrize("value, count", [("", 0), ("  ", 0), ("0", 0), ("3", 3), (" 12\t", 12), ("007", 7),
                                          ("9" * 5000, sys.maxsize)])
def test_ascii_digits_are_the_count(monkeypatch, value, count):
    monkeypatch.setenv("SERQ_SWEEP_STOP_AFTER", value)
    assert core._stop_after() == count


def test_the_sweep_refuses_it_before_any_run(tmp_path):
    (tmp_path / "p.sq").write_text("stage s : fifo;\nworkload { arrive poisson(0.5); }\n"
                                   "session { run s (1); }\nrun { horizon 20; }\n")
    env = {**os.environ, "SERQ_SWEEP_STOP_AFTER": "\u0663"}
    r = subprocess.run([SERQ, "sweep", "p.sq", "--workers", "0", "--no-progress", "--out", "t.csv"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=100, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stderr == (f"error: the environment variable SERQ_SWEEP_STOP_AFTER is '\u0663': {TAKES} "
                        f"({numbers.WHOLE_HINT})\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]  # no table, no journal
