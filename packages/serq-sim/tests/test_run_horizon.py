"""program-reference.txt: a run's horizon is required. ``serq run`` with none in the program and none on
the command line is one message and exit 1; ``--horizon`` or the run block gives one, ``inf`` included."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest
import serq_frontend
import serq_ir
import serq_sim

OPEN = "stage d : delay;\nworkload { arrive poisson(1); }\nsession { run d (1); }\n"


def serq(*args):
    return subprocess.run([sys.executable, "-m", "serq", *args, "--no-progress"], capture_output=True,
                          text=True, timeout=120)


def test_serq_run_without_a_horizon_is_an_error(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text(OPEN + "run { seed 2; }\n")
    r = serq("run", str(f))
    assert r.returncode == 1
    assert r.stdout == ""
    # at the run block, which gives none (test_hostile_round37_no_horizon)
    assert r.stderr == (f"{f}:4:7: error: the run block gives no horizon: write `horizon T;` in it, or give "
                        "--horizon T (`inf`: until no event is left)\n  run { seed 2; }\n        ^\n")
    # the same program as IR
    g = tmp_path / "p.ir.json"
    g.write_text(serq_ir.encode_pretty(serq_frontend.compile(str(f))))
    r = serq("run", str(g))
    assert r.returncode == 1 and "the run block gives no horizon" in r.stderr and "Traceback" not in r.stderr


def test_a_horizon_from_the_command_line_or_the_program(tmp_path, capsys):
    # (serq run in this process, serq.cli.main in the environment as it is: what is checked is the report)
    from serq.cli import main

    def serq(*args):
        capsys.readouterr()
        with pytest.raises(SystemExit) as info:
            main([*args, "--no-progress"])
        out = capsys.readouterr()
        return SimpleNamespace(returncode=info.value.code or 0, stdout=out.out, stderr=out.err)

    f = tmp_path / "p.sq"
    f.write_text(OPEN)
    r = serq("run", str(f), "--horizon", "5", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["horizon"] == 5
    f.write_text(OPEN + "run { horizon 5; }\n")
    r = serq("run", str(f), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["horizon"] == 5
    # an explicit `inf` is a horizon: a batch drains and the run ends when nothing is left
    f.write_text(OPEN.replace("poisson(1)", "batch(2)") + "run { horizon inf; }\n")
    r = serq("run", str(f), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["end"] == 1


def test_the_ir_tells_a_missing_horizon_from_inf():
    none = serq_frontend.compile(source=OPEN)
    assert none.run.horizon is None
    assert "horizon" not in json.loads(serq_ir.encode_pretty(none))["run"]
    inf = serq_frontend.compile(source=OPEN + "run { horizon inf; }\n")
    assert inf.run.horizon == "inf"
    # the Python API runs a program without one until no event is left
    batch = serq_frontend.compile(source=OPEN.replace("poisson(1)", "batch(3)"))
    assert serq_sim.run(batch).result.end == 1.0
