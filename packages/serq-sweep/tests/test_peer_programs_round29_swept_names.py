"""A swept name that is a column of the table already, or that two options sweep, is refused saying which of
the two it is and by the option that sweeps it. Both were "NAME: swept twice, or the name of a column of the
table (…)": routing rules compared as the bodies of a definition named ``key`` (``--def key=…``, a name the
table's run key takes) were told they were swept twice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """def key(j) = j;
let policy = 0;
stage svc[2] : fifo;
workload { arrive poisson(1); }
session { choose j in 2 by (key(j) + policy); run svc[j] (~exp(0.5)); }
run { horizon 10; }
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "p.sq"
    path.write_text(PROGRAM)
    return str(path)


def _said(*args):
    r = subprocess.run([SERQ, *args, "--no-progress"], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stderr


def test_a_definition_named_as_a_column(program):
    code, err = _said("compare", program, "--def", "key=j", "--def", "key=-j", "--seeds", "1..2")
    assert (code, err) == (2, "error: --def key: key is a column of the table of the runs already (point, seed, "
                              "status, message, warnings, key); a swept name is a column of its own: give the "
                              "definition another name to sweep it\n")


def test_a_let_named_as_a_column(program, tmp_path):
    text = Path(program).read_text().replace("policy", "seed")
    Path(program).write_text(text)
    code, err = _said("sweep", program, "--set", "seed=0,1", "--seeds", "1")
    assert (code, err) == (2, "error: --set seed: seed is a column of the table already (point, seed, status, "
                              "message, warnings, key); a swept name is a column of its own: give the let another "
                              "name to sweep it\n")
    with pytest.raises(Exception, match=r"^error: sets\['seed'\]: seed is a column of the table already"):
        serq_sweep.sweep(program, sets={"seed": "0,1"}, progress=False)


def test_a_name_swept_by_two_options(program):
    code, err = _said("sweep", program, "--set", "policy=0,1", "--def", "policy=1", "--seeds", "1")
    assert (code, err) == (2, "error: --set policy and --def policy: policy is swept twice, a column of the table "
                              "each; a name is swept once (a let's values by --set, a definition's bodies by "
                              "--def)\n")
