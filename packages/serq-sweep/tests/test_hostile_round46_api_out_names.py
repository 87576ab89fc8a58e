"""The Python API's ``out=`` of no table's suffix is named by its keyword, as ``records=`` is (round 40):
``serq_sim.sweep(out='o.txt')`` and ``serq_sweep.find(..., out='o.txt')`` said ``--out o.txt: a table is
.parquet or .csv``, an option the caller never gave. The command line's words are unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_sim
import serq_sweep
from serq.errors import UserError

HERE = Path(__file__).parent
MMC = HERE / "peer_programs27" / "mmc.sq"


def _sweep(**kw):
    return serq_sim.sweep(MMC, **{"horizon": 10, "warmup": 0, "sets": {"lam": [1]}, "workers": 0,
                                  "progress": False, **kw})


@pytest.mark.parametrize("name", ["o.txt", "o", "o.csv.bak"])
def test_sweep_out_of_no_table_names_out(name, tmp_path):
    with pytest.raises(UserError) as e:
        _sweep(out=tmp_path / name)
    assert str(e.value) == f"error: out={tmp_path / name}: a table is .parquet or .csv"
    assert os.listdir(tmp_path) == []


def test_find_out_of_no_table_names_out(tmp_path):
    with pytest.raises(UserError) as e:
        serq_sweep.find(MMC, "observes.response.mean <= 1", ("lam", "0.5:1"), horizon=10, warmup=0, workers=0,
                        progress=False, out=str(tmp_path / "s.json"))
    assert str(e.value) == f"error: out={tmp_path / 's.json'}: a table is .parquet or .csv"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("find", [(), ("--find", "observes.response.mean <= 1", "--over", "lam", "0.5:1")])
def test_the_command_lines_words_are_unchanged(find, tmp_path):
    r = subprocess.run([sys.executable, "-m", "serq", "sweep", str(MMC), *find, "--horizon", "10", "--warmup", "0",
                        "--workers", "0", "-o", "o.txt"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "error: --out o.txt: a table is .parquet or .csv" in r.stderr, r.stderr
