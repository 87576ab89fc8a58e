"""A sweep of several programs whose record tables differ resumes every run.

A serving researcher swept two policies, `fcfs.sq` (lib/vllm.sq's `request` table) and `prio.sq` (the same and
a table of its own, `record cls { prio = prio; }`), with `--out mx.csv --records mxr.csv`, and ran the same
command again: `6 run(s) … (3 run now, 3 resumed)`, and so at every resume. A run's records were complete only
with rows of every table of the sweep, and fcfs.sq's runs have none of `cls`, which their program does not
declare (their `records.cls` is no figure of theirs, not 0). A run is now held to the tables its own point's
program records (serq_sweep.api.Records.complete); the records written are the same.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
PLAIN = """stage s : delay;
workload { arrive poisson(1); }
session {
  set t0 = now;
  set prio = ~bernoulli(0.5);
  run s (~exp(1));
  record request { sent = t0; first_token = now; last_token = now; prompt = 1; output = 1; }
EXTRA}
run { horizon 40; seed 1; }
"""


def sweep(tmp_path: Path, seeds: str) -> str:
    r = subprocess.run([SERQ, "sweep", "a.sq", "b.sq", "--seeds", seeds, "--no-progress", "--out", "t.csv",
                        "--records", "r.csv"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return next(line for line in (r.stdout + r.stderr).splitlines() if " run(s) of " in line)


def rows(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_the_runs_of_a_program_without_a_table_are_resumed(tmp_path):
    (tmp_path / "a.sq").write_text(PLAIN.replace("EXTRA", ""))
    (tmp_path / "b.sq").write_text(PLAIN.replace("EXTRA", "  record cls { prio = prio; }\n"))
    assert sweep(tmp_path, "1..2").startswith("4 run(s) of 2 point(s) x 2 seed(s) (4 run now, 0 resumed)")
    request, cls = rows(tmp_path / "r.request.csv"), rows(tmp_path / "r.cls.csv")
    # every run's requests, b's runs alone in cls: one row a request of b
    table = rows(tmp_path / "t.csv")
    assert len(request) == sum(int(r["records.request"]) for r in table)
    assert {r["program"] for r in cls} == {"b.sq"}
    assert len(cls) == sum(int(r["records.request"]) for r in table if r["program"] == "b.sq")
    assert sweep(tmp_path, "1..2").startswith("4 run(s) of 2 point(s) x 2 seed(s) (0 run now, 4 resumed)")
    assert rows(tmp_path / "r.request.csv") == request and rows(tmp_path / "r.cls.csv") == cls
    assert sweep(tmp_path, "1..3").startswith("6 run(s) of 2 point(s) x 3 seed(s) (2 run now, 4 resumed)")
    assert len(rows(tmp_path / "r.cls.csv")) > len(cls)
