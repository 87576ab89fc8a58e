"""``dask=""`` (``--dask ""``) names no scheduler: a ValueError naming ``dask`` from the Python calls, a usage
error (status 2) from the commands, said before anything is compiled or written. It was tried as an
address: "cannot reach the scheduler: missing port number in address ''", status 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import compare, find, sweep

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).with_name("serq"))

PROGRAM = """let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (0.5); observe y = now - t0; }
run { horizon 10; }
"""

SAID = ("is empty: it names no scheduler; give \"local\" (a LocalCluster here), a scheduler's address "
        "(tcp://HOST:PORT) or a scheduler file")


@pytest.fixture
def prog(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return str(tmp_path / "p.sq")


@pytest.mark.parametrize("dask", ["", "  "])
@pytest.mark.parametrize("call", [
    lambda p, d: sweep(p, dask=d, out=str(Path(p).with_name("t.csv")), progress=False),
    lambda p, d: compare(p, sets={"lam": [0.2, 0.4]}, seeds="1..2", dask=d, progress=False),
    lambda p, d: find(p, "y.mean < 3", ("lam", "0.1:0.9"), dask=d, progress=False),
])
def test_an_empty_dask_is_a_value_error_naming_it(prog, call, dask):
    with pytest.raises(ValueError) as info:
        call(prog, dask)
    assert type(info.value) is ValueError and str(info.value) == f"dask {SAID}"
    assert sorted(p.name for p in Path(prog).parent.iterdir()) == ["p.sq"]  # nothing written


@pytest.mark.parametrize("args", [
    ["sweep", "p.sq", "-o", "t.csv"],
    ["compare", "p.sq", "--set", "lam=0.2,0.4"],
])
def test_an_empty_dask_flag_is_a_usage_error(prog, args):
    folder = Path(prog).parent
    r = subprocess.run([SERQ, *args, "--dask", "", "--no-progress"], capture_output=True, text=True, cwd=folder,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"error: invalid value for '--dask': '' {SAID} (see 'serq {args[0]} --help')\n"
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq"]
