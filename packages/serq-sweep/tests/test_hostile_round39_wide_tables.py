"""A sweep resuming from a table with very many columns of no figure among its figures (a table widened by
hand or by another tool, 10**5 columns after `seed`): the check that refuses such columns found each one's
place with `list.index`, once per column, which is quadratic: 10**4 columns took 3 s and 10**5 more than two
minutes before the one error. Each column's place is now looked up in one pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep.core import refuse_unknown_figures

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let lambda = 0.8;\nstage svc : fifo;\nworkload { arrive poisson(lambda); }\n"
           "session { set t0 = now; run svc (~exp(1)); observe response = now - t0; end; }\n"
           "run { horizon 20; seed 1; }\n")


@pytest.mark.timeout(60)  # (a guard: quadratic in the columns, 2 * 10**5 of them took hours)
def test_the_check_of_a_very_wide_table_is_one_pass():
    n = 200_000
    names = ["point", "lambda", *(f"a{i}" for i in range(3)), "seed", "status", "message", "warnings", "key",
             "observes.response.mean", *(f"c{i}" for i in range(n))]
    unknown = ["a0", "a1", "a2", *(f"c{i}" for i in range(n))]
    with pytest.raises(UserError) as e:
        refuse_unknown_figures("t.csv", names, unknown)
    # the columns after seed, in order; a0..a2 stand before it (swept names of before: a warning, elsewhere)
    assert str(e.value).startswith(f"error: t.csv: the column(s) c0, c1, c2, c3, c4 and {n - 5} more of the table there "
                                   "stand among its figures")
    refuse_unknown_figures("t.csv", names, ["a0", "a1", "a2"])  # before seed: not refused here


def test_a_sweep_refuses_a_wide_table_and_leaves_it(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    args = [SERQ, "sweep", "p.sq", "--set", "lambda=0.5,0.6", "--workers", "0", "--no-progress", "-o", "t.csv"]
    first = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert first.returncode == 0, first.stderr
    head, rest = (tmp_path / "t.csv").read_text().split("\n", 1)
    k = 20_000
    wide = (head + "".join(f",c{i}" for i in range(k)) + "\n"
            + "".join(line + "," * k + "\n" for line in rest.splitlines()))
    (tmp_path / "t.csv").write_text(wide)
    r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert (r.returncode, r.stdout) == (1, ""), r.stderr
    assert r.stderr.startswith(f"error: t.csv: the column(s) c0, c1, c2, c3, c4 and {k - 5} more of the table "
                               "there stand among its figures"), r.stderr[:300]
    assert len(r.stderr.splitlines()) == 1
    assert (tmp_path / "t.csv").read_text() == wide  # left as it was
