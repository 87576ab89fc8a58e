"""serq plot of a dump folder without --cdf or --gauge (peer programs, round 20: a researcher plotting the GPU's
use over time from `serq run --dump dump/` wrote `serq plot dump/ --y gpu_used -o g.svg` and was told `serq plot
TABLE needs --x NAME and --y FIGURE`, flags a folder does not take). A folder is now told what it takes:
`--cdf OBSERVE` or `--gauge NAME`; a table keeps its words. A usage error, status 2, as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("pool kv { cap 10; }\nstage s : fifo;\nworkload { arrive poisson(1); }\n"
           "session { hold kv (1) { run s (0.5); } observe r = now; }\ngauge used_kv = used(kv);\n"
           "run { horizon 20; warmup 0; }\n")


def serq(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``tmp_path``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said and written)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("flags", [[], ["--y", "used_kv"], ["--x", "time"]])
def test_a_dump_folder_is_told_what_it_takes(tmp_path, serq_in_process, flags):
    (tmp_path / "p.sq").write_text(PROGRAM)
    # the dump made in the test's process; the plots of the first case as child processes, the others' in the
    # test's process
    assert serq(tmp_path, "run", "p.sq", "--no-progress", "--dump", "d", "-o", "r.json",
                here=serq_in_process).returncode == 0
    here = None if not flags else serq_in_process
    r = serq(tmp_path, "plot", "d", *flags, "-o", "g.svg", here=here)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("error: serq plot d: a dump folder (serq run --dump DIR) needs --cdf OBSERVE or --gauge NAME; "
                        "a sweep's table takes --x NAME and --y FIGURE\n")
    assert not (tmp_path / "g.svg").exists()
    # what it names draws the folder's gauge
    r = serq(tmp_path, "plot", "d", "--gauge", "used_kv", "-o", "g.svg", here=here)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "g.svg").read_text().lstrip().startswith("<?xml")


def test_a_table_keeps_its_words(tmp_path):
    (tmp_path / "t.csv").write_text("point,seed,x\n0,1,1\n")
    r = serq(tmp_path, "plot", "t.csv", "--y", "x", "-o", "a.svg")
    assert r.returncode == 2 and r.stderr == ("error: serq plot TABLE --y x needs --x NAME: the table sweeps no name "
                                              "(--x is the one swept name of a table that sweeps one)\n")
