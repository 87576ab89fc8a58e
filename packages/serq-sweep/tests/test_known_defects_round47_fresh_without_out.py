"""``serq_sweep.sweep(..., fresh=True)`` without ``out=`` is refused as ``serq sweep --fresh`` without ``--out``
is (docs/sweep.md): a usage error (serq.errors.UsageError, a UserError), said before anything is compiled. It
was taken silently, a sweep without a table having nothing to resume."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.errors import UsageError, UserError

ROOT = Path(__file__).resolve().parents[3]
MG1 = ROOT / "examples/single-turn/mg1.sq"
SERQ = str(Path(sys.executable).parent / "serq")
ENV = dict(os.environ)
SAID = "error: fresh=True goes with out= (it runs the sweep again instead of resuming from the table there)"


def _sweep(program=MG1, **kw):
    return serq_sweep.sweep(program, **{"arrivals": 20, "horizon": float("inf"), "warmup": 0,
                                        "sets": {"lambda": [0.5]}, "workers": 0, "progress": False, **kw})


def test_fresh_without_out_is_a_usage_error():
    with pytest.raises(UsageError) as e:
        _sweep(fresh=True)
    assert str(e.value) == SAID
    assert isinstance(e.value, UserError)


def test_fresh_without_out_is_refused_before_compiling(tmp_path):
    # a program that does not exist would be the error of compiling it: the argument's is said first
    with pytest.raises(UsageError) as e:
        _sweep(tmp_path / "none.sq", fresh=True)
    assert str(e.value) == SAID


def test_fresh_with_out_and_no_fresh_without_out_still_run(tmp_path):
    out = tmp_path / "o.csv"
    first = _sweep(out=str(out), fresh=True)
    assert list(first["status"]) == ["ok"] and out.is_file()
    again = _sweep()  # fresh=False without out: a sweep into no table, as before
    assert list(again["status"]) == ["ok"]
    assert int(again["observes.response.count"].iloc[0]) == int(first["observes.response.count"].iloc[0]) == 20


@pytest.mark.timeout(120)
def test_the_command_line_refuses_it_with_the_same_meaning():
    p = subprocess.run([SERQ, "sweep", str(MG1), "--fresh", "--arrivals", "20", "--workers", "0", "--no-progress"],
                       capture_output=True, text=True, timeout=120, env=ENV)
    assert p.returncode == 2, p.stderr
    assert "--fresh goes with --out (it runs the sweep again instead of resuming from the table there)" in p.stderr
    assert "Traceback" not in p.stderr
