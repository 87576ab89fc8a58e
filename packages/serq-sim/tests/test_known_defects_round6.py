"""Known defects, round 6 (serq-sim).

``--slo`` and blanks around a NAME: ``--set`` and ``--def`` refuse a blank around NAME
(serq.loading.split_assignment, 76da34f), as a number has none around it; ``--slo ' ttft=1'`` was read as
``ttft`` (the name trimmed) while ``--slo 'ttft= 1'`` was refused. serq_sim.metrics.parse_slo now applies
the same function, so both are usage errors (status 2) in ``serq run`` and a sweep alike.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UsageError
from serq_sim.metrics import parse_slo

SERQ = str(Path(sys.executable).parent / "serq")

# the run would fail at its first event (a negative work): an --slo error can only come before it
PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session {
  set t0 = now;
  run s (-1 - now);
  record req { sent = t0; first_token = now; last_token = now; output = 1; }
}
run { horizon 100; warmup 0; }
"""


@pytest.mark.parametrize("text, bad, name", [
    (" ttft=1", " ttft=1", "ttft"), ("ttft =1", "ttft =1", "ttft"), ("\tttft=1", "\tttft=1", "ttft"),
    ("ttft=1, tpot=0.5", " tpot=0.5", "tpot"), ("ttft=1,tpot =0.5", "tpot =0.5", "tpot"),
])
def test_a_blank_around_an_slo_name_is_the_usage_error_of_set(text, bad, name):
    with pytest.raises(UsageError) as e:
        parse_slo(text)
    assert str(e.value) == (f"error: --slo {bad!r}: a blank around the name; NAME=VALUE is written without one "
                            f"(--slo {name}=…)")


def test_names_without_blanks_are_read_as_before():
    assert parse_slo("ttft=1,tpot=0.05,e2el=inf") == {"ttft": 1.0, "tpot": 0.05, "e2el": float("inf")}


@pytest.mark.parametrize("text", ["ttft= 1", "ttft=1 "])
def test_a_blank_around_the_value_stays_refused(text):
    with pytest.raises(ValueError, match="is not a number of seconds"):
        parse_slo(text)


@pytest.mark.parametrize("text", ["ttft", "=1", "ttf=1"])
def test_what_is_no_slo_keeps_its_message(text):
    with pytest.raises(ValueError, match="an SLO is NAME=SECONDS with NAME one of ttft, tpot, e2el"):
        parse_slo(text)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", [("run", "p.sq", "--no-progress"), ("sweep", "p.sq", "--set", "x=1,2")])
@pytest.mark.parametrize("slo", [" ttft=1", "ttft= 1"])
def test_both_blanks_are_usage_errors_of_every_command(tmp_path, command, slo):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, *command, "--slo", slo], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr.count("\n") == 1 and "--slo" in r.stderr and repr(slo) in r.stderr
    assert "Traceback" not in r.stderr
