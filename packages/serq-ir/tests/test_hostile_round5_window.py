"""A run's warmup is below its horizon wherever a program comes from: one rule
(``serq_ir.rules.window_problem``) for an IR file and for the command line's ``--warmup``/``--horizon``.

``serq ir p.sq --warmup 1000`` of a program of horizon 100 printed an IR (status 0) that ``serq check`` took
(``OK: …``) and ``serq run`` refused ("warmup 1000 is not below the horizon 100"): an IR file whose run block
leaves no measured window passed validation. ``serq_ir.validate`` refuses it at ``$.run.warmup``, and
``serq.loading.apply_run_overrides``, through which ``serq run``, ``serq ir`` and a sweep's points take the
command line's values, refuses the overrides, naming the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_ir
from ir_programs import located_first_line, mm1

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); observe x = now; }
run { horizon 100; seed 1; }
"""


def _serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("horizon, warmup", [(100.0, 100.0), (100.0, 1000.0), (1e-9, 1e-9)])
def test_an_ir_file_whose_warmup_is_not_below_its_horizon_is_refused(horizon, warmup):
    d = json.loads(serq_ir.encode(mm1(), spans=False))
    d["run"].update(horizon=horizon, warmup=warmup)
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(json.dumps(d), name="w.ir.json")
    assert str(e.value) == (f"error: w.ir.json: warmup {warmup:g} is not below the horizon {horizon:g} - at "
                            "'$.run.warmup'")


@pytest.mark.parametrize("horizon, warmup", [(100.0, 99.0), ("inf", 1e300), (None, 1e300)])
def test_a_window_that_is_not_empty_is_taken(horizon, warmup):
    d = json.loads(serq_ir.encode(mm1(), spans=False))
    d["run"].update(horizon=horizon, warmup=warmup)
    serq_ir.decode(json.dumps(d), name="ok.ir.json")


def test_serq_ir_does_not_write_an_ir_serq_run_refuses(tmp_path):
    r = _serq(tmp_path, "ir", "p.sq", "--warmup", "1000")
    assert r.returncode == 1 and r.stdout == "", r.stdout
    assert r.stderr == "p.sq: error: --warmup 1000: warmup 1000 is not below the horizon 100\n"
    r = _serq(tmp_path, "ir", "p.sq", "--horizon", "5", "--warmup", "5")
    assert r.returncode == 1 and r.stderr == "p.sq: error: --warmup 5: warmup 5 is not below the horizon 5 " \
                                             "(--horizon 5)\n"
    r = _serq(tmp_path, "ir", "p.sq", "--horizon", "5", "--warmup", "1")
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)["run"]
    # (and where each setting came from, IR's run spans: the options for those they gave)
    assert run.pop("span")["warmup"] == "--warmup 1"
    assert run == {"horizon": 5.0, "warmup": 1.0}


def test_check_and_run_of_such_an_ir_file_say_the_same(tmp_path):
    r = _serq(tmp_path, "ir", "p.sq")
    d = json.loads(r.stdout)
    d["run"]["warmup"] = 1000.0
    (tmp_path / "w.ir.json").write_text(json.dumps(d))
    for command in ("check", "run"):
        r = _serq(tmp_path, command, "w.ir.json")
        assert r.returncode == 1, r.stderr
        text = (tmp_path / "w.ir.json").read_text()
        assert r.stderr.splitlines()[0] == located_first_line(
            "w.ir.json", text, text.index("1000.0"), "warmup 1000 is not below the horizon 100 - at '$.run.warmup'")


def test_the_run_command_names_the_file_and_the_flags(tmp_path):
    r = _serq(tmp_path, "run", "p.sq", "--warmup", "300")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == "p.sq: error: --warmup 300: warmup 300 is not below the horizon 100\n"
