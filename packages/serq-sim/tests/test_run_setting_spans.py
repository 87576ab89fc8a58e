"""A run-time error a run setting causes points at where the setting was given: a setting of ``run { }`` at
its line and column (the source line and a caret), one a command-line option gave by the option as written
(``--arrivals 4``), one ``serq_sim.run`` was given by the argument (``arrivals=3``).

The IR's run block carries the span of each setting (``RunSettings.span``, optional: an IR without it loads
as before and its errors say what they said, naming no place); the options a command applies replace the
span of the settings they give with their own text. Before, these errors named no place at all, and said
``run { arrivals 4; }`` of an ``--arrivals 4`` the program's run block never had."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq.loading import apply_run_overrides
from serq_sim import SimError

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

# renewal(1): arrivals at t = 1, 2, 3, ...; each session takes 1 s (the k-th ends at k + 1)
PROGRAM = """stage d : delay;
workload { arrive renewal(1); }
session { run d (1); }
run { horizon 4;
  arrivals 5; }
"""


def _compiled(tmp_path, text=PROGRAM):
    f = tmp_path / "p.sq"
    f.write_text(text)
    return f, serq_frontend.compile(f)


@pytest.mark.parametrize("tier", ["", "general"])
def test_arrivals_of_the_run_block_not_reached_point_at_the_setting(tmp_path, monkeypatch, tier):
    # by the horizon 4 only the arrivals at 1, 2, 3, 4 have happened: the error is at `arrivals 5;` (5:3)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    f, p = _compiled(tmp_path)
    with pytest.raises(SimError) as e:
        serq_sim.run(p)
    assert str(e.value).splitlines() == [f"{f}:5:3: error: at t=4: run {{ arrivals 5; }}: only 4 arrivals by the "
                                         "horizon", "    arrivals 5; }", "    ^"]


@pytest.mark.parametrize("tier", ["", "general"])
def test_drained_before_the_warmup_points_at_the_arrivals(tmp_path, monkeypatch, tier):
    # arrivals at 1, 2, 3, the last ends at 4, before the warmup 50
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    f, p = _compiled(tmp_path, PROGRAM.replace("run { horizon 4;\n  arrivals 5; }",
                                               "run { horizon 100; warmup 50; arrivals 3; }"))
    with pytest.raises(SimError) as e:
        serq_sim.run(p)
    assert str(e.value).splitlines()[0] == (f"{f}:4:31: error: at t=4: run {{ arrivals 3; }}: drained at t=4, at or "
                                            "before the warmup 50 (nothing to measure)")


def test_a_setting_an_option_gave_is_named_by_the_option(tmp_path):
    f, p = _compiled(tmp_path)
    # --arrivals 4 in place of the run block's 5: the 4th arrives at 4 and is live at the horizon 4
    with pytest.raises(SimError) as e:
        serq_sim.run(apply_run_overrides(p, arrivals=4, name=str(f)))
    assert str(e.value) == f"{f}: error: at t=4: --arrivals 4: 1 session still live at the horizon (not drained)"
    # the run block's arrivals, the option's horizon: at the arrivals, naming the option
    with pytest.raises(SimError) as e:
        serq_sim.run(apply_run_overrides(p, horizon=2, name=str(f)))
    assert str(e.value).splitlines()[0] == (f"{f}:5:3: error: at t=2: run {{ arrivals 5; }}: only 2 arrivals by the "
                                            "horizon (--horizon 2)")


def test_the_command_line_names_the_flag(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--arrivals", "4", "--horizon", "4", "--no-progress"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("p.sq: error: at t=4: --arrivals 4: 1 session still live at the horizon (not drained) "
                        "(--horizon 4)\n")


def test_an_argument_of_run_is_named_as_given(tmp_path):
    p = serq_frontend.compile(source="stage d : delay;\nworkload { arrive closed(2); }\nsession { run d (1); }\n"
                                     "run { horizon 4; }\n")
    with pytest.raises(SimError) as e:
        serq_sim.run(p, arrivals=3)
    assert str(e.value).startswith("error: arrivals=3: needs an open workload (arrive poisson or renewal); "
                                   "`arrive closed(2)` starts a session again as each one ends")
    _, q = _compiled(tmp_path)
    with pytest.raises(SimError) as e:
        serq_sim.run(q, horizon=4.5, warmup=5)
    assert str(e.value).endswith("error: warmup=5: warmup 5 is not below the horizon 4.5 (horizon=4.5)")


def test_the_ir_carries_the_origins_and_an_ir_without_them_loads_as_before(tmp_path):
    f, p = _compiled(tmp_path)
    raw = msgspec.json.decode(serq_ir.encode(p))
    assert raw["run"]["span"] == {"horizon": [str(f), 4, 7], "arrivals": [str(f), 5, 3]}
    over = msgspec.json.decode(serq_ir.encode(apply_run_overrides(p, arrivals=4, warmup=0.5)))
    assert over["run"]["span"] == {"horizon": [str(f), 4, 7], "warmup": "--warmup 0.5", "arrivals": "--arrivals 4"}
    assert "span" not in msgspec.json.decode(serq_ir.encode(p, spans=False))["run"]
    del raw["run"]["span"]
    bare = serq_ir.decode(msgspec.json.encode(raw))
    assert bare.run.span is None and serq_ir.strip_spans(bare) == serq_ir.strip_spans(p)
    with pytest.raises(SimError) as e:
        serq_sim.run(bare)
    assert str(e.value) == f"{f}: error: at t=4: run {{ arrivals 5; }}: only 4 arrivals by the horizon"
