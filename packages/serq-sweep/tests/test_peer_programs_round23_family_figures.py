"""A figure named without a member's index on a family is told as the family's.

A capacity planner sweeping a fleet (`pool kv[N]`, `stage engine[N]`) asked for `--show pools.kv.preemptions` and
was told `no figure 'pools.kv.preemptions' in the results (did you mean `pools.kv[1].preemptions`?)`: one member
of the family, the last of the two equally near ones, as if the other did not exist. A name that is a family's
figure but for the index (serq_sweep.figures._members) is now told as such, every member named (of more
than four, the first three and the last), so that the planner sees that each member has its own figure and
none is the family's sum. A name that members of two paths end with (`kv.used` of `pools.kv[0].used` and
`stages.kv[0].used`) is no one family's, and is told as before.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep.figures import UnknownFigure, resolve

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
FLEET = """
let N = 2;
pool p[N] { cap 1; }
stage s : delay;
workload { arrive poisson(1); }
session { hold p[serial % N] (1) { run s (1); } }
run { horizon 20; seed 1; }
"""


def test_a_familys_figure_without_an_index_names_every_member():
    cols = ["events", *(f"pools.kv[{i}].{f}" for i in range(5) for f in ("used", "preemptions"))]
    for name in ("pools.kv.preemptions", "kv.preemptions"):
        with pytest.raises(UnknownFigure) as e:
            resolve(name, cols)
        assert str(e.value) == (f"error: no figure {name!r} in the results: it names a family's figure, which each "
                                "member has under its index: `pools.kv[0].preemptions`, `pools.kv[1].preemptions`, "
                                "`pools.kv[2].preemptions`, …, `pools.kv[4].preemptions` (5 member(s)); name one")
    # a points table's column of it, FIGURE:mean
    with pytest.raises(UnknownFigure, match=r"family's figure, .* `pools\.kv\[0\]\.used`, `pools\.kv\[1\]\.used`"):
        resolve("pools.kv.used:mean", cols[:5])
    # a member named is the member
    assert resolve("kv[3].used", cols) == "pools.kv[3].used"
    # four members are all named (no … between the third and the last)
    with pytest.raises(UnknownFigure) as e:
        resolve("kv.used", [f"pools.kv[{i}].used" for i in range(4)])
    assert str(e.value).endswith("under its index: `pools.kv[0].used`, `pools.kv[1].used`, `pools.kv[2].used`, "
                                 "`pools.kv[3].used` (4 member(s)); name one")


def test_members_of_two_paths_are_no_one_family():
    cols = ["pools.kv[0].used", "pools.kv[1].used", "stages.kv[0].used"]
    with pytest.raises(UnknownFigure) as e:
        resolve("kv.used", cols)
    assert "family" not in str(e.value)
    with pytest.raises(UnknownFigure, match=r"family's figure, .*`pools\.kv\[1\]\.used` \(2 member\(s\)\)"):
        resolve("pools.kv.used", cols)


def test_serq_sweep_show_tells_it_before_any_run(tmp_path):
    program = tmp_path / "fleet.sq"
    program.write_text(FLEET)
    out = tmp_path / "t.csv"
    r = subprocess.run([SERQ, "sweep", str(program), "--set", "N=2", "--seeds", "1..2", "--no-progress", "--out",
                        str(out), "--show", "pools.p.used"], capture_output=True, text=True)
    assert r.returncode != 0 and not out.exists(), r.stderr
    assert r.stderr.strip().splitlines() == [
        "error: --show: no figure 'pools.p.used' in the results: it names a family's figure, which each member has "
        "under its index: `pools.p[0].used`, `pools.p[1].used` (2 member(s)); name one"]
    r = subprocess.run([SERQ, "sweep", str(program), "--set", "N=2", "--seeds", "1..2", "--no-progress", "--out",
                        str(out), "--show", "pools.p[1].used"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "pools.p[1].used" in r.stdout.splitlines()[-2]
