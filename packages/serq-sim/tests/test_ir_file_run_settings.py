"""A run setting an option gave when an IR file was written (``serq ir p.sq --horizon 4 > x.ir.json``) is
named as the file's when a later command reads the file: that command was not given the option.
``serq run x.ir.json --warmup 10`` said "warmup 10 is not below the horizon 4 (--horizon 4)", naming an
option the run was not given; it now says "x.ir.json's run setting horizon, given as --horizon 4 when it was
written". An option of the later command is named as given."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).with_name("serq"))

PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (0.5); end; }\n"


def _serq(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=folder, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def ir_file(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _serq(tmp_path, "ir", "p.sq", "--horizon", "4", "--arrivals", "500")
    assert r.returncode == 0, r.stderr
    (tmp_path / "x.ir.json").write_text(r.stdout)
    return tmp_path


def test_a_later_run_names_the_ir_files_setting(ir_file):
    r = _serq(ir_file, "run", "x.ir.json", "--no-progress", "--warmup", "10")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("x.ir.json: error: --warmup 10: warmup 10 is not below the horizon 4 (x.ir.json's run "
                        "setting horizon, given as --horizon 4 when it was written)\n")


def test_a_run_time_error_names_the_ir_files_settings(ir_file):
    # 500 arrivals of a Poisson workload of rate 1 cannot all happen by t = 4: the error is the arrivals
    # setting's, headed by it, the horizon after it; both were given when the file was written
    r = _serq(ir_file, "run", "x.ir.json", "--no-progress")
    assert r.returncode == 1 and r.stdout == ""
    assert "--arrivals 500:" not in r.stderr and "(--horizon 4)" not in r.stderr
    assert ": x.ir.json's run setting arrivals, given as --arrivals 500 when it was written: only " in r.stderr
    assert r.stderr.endswith(" by the horizon (x.ir.json's run setting horizon, given as --horizon 4 when it "
                             "was written)\n")


def test_an_option_of_the_later_command_is_named_as_given(ir_file):
    r = _serq(ir_file, "run", "x.ir.json", "--no-progress", "--horizon", "3", "--warmup", "3")
    assert r.returncode == 1
    assert r.stderr == "x.ir.json: error: --warmup 3: warmup 3 is not below the horizon 3 (--horizon 3)\n"
