"""A scheduling researcher's comparison of two queue keys given as definition bodies, `--def 'qkey=prio -
waited' --def qkey=prio`: the printed heading `ARM - BASE` read `qkey=prio - qkey=prio - waited, paired
over …`, where nothing told where one arm ended. An arm whose label holds ` - ` is now written in
parentheses there (`--out`'s `arm` and `base` keep the labels as they were)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from serq_sweep import core

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let rate = 0.5;
def qkey() = prio - waited;
pool server {
  cap 1;
  queue by (qkey());
}
stage svc : delay;

workload {
  arrive poisson(rate);
}

session {
  set prio = floor(~uniform(0, 3));
  set t0 = now;
  hold server (1) {
    observe wait = now - t0;
    run svc (~exp(1));
  }
}

run { horizon 200; }
"""


def test_an_arm_holding_the_headings_minus_is_put_in_parentheses(tmp_path):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    out = tmp_path / "c.csv"
    r = subprocess.run([SERQ, "compare", str(prog), "--def", "qkey=prio - waited", "--def", "qkey=prio",
                        "--def", "qkey=-prio", "--seeds", "1..2", "--workers", "0", "--no-progress",
                        "--figure", "wait.mean", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    heads = [x for x in r.stdout.splitlines() if "paired over" in x]
    assert heads == ["qkey=prio - (qkey=prio - waited), paired over 2 seeds (95 % CIs):",
                     "qkey=-prio - (qkey=prio - waited), paired over 2 seeds (95 % CIs):"]
    rows = core.read_table(str(out))
    assert [(x["arm"], x["base"]) for x in rows] == [("qkey=prio", "qkey=prio - waited"),
                                                     ("qkey=-prio", "qkey=prio - waited")]
