"""``serq run -o DIR/gauge --dump DIR`` of a program with gauges is refused before the run, nothing written.

A dump writes its gauges into the folder ``DIR/gauge`` it makes. ``-o`` naming that folder as a file was
not one of the outputs ``serq run`` checks against the dump's folders (only ``DIR`` was): the run wrote its
report to ``out/gauge``, then failed making the folder (``out/gauge: is not a folder``), status 1, a report
left where the dump's folder belongs and no dump. The gauge folder is now a folder of the dump's for that
check (serq_sim.cli, serq.files.check_distinct); a program without gauges makes no such folder, so
``-o DIR/gauge`` is its report.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;
{gauge}
workload {{ arrive poisson(1); }}
session {{ run s (1); observe x = now; }}
run {{ horizon 5; warmup 0; seed 1; }}
"""


def _run(tmp_path: Path, gauge: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM.format(gauge=gauge))
    return subprocess.run([SERQ, "run", "p.sq", "--no-progress", *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.timeout(120)
def test_the_report_named_as_the_dumps_gauge_folder_is_refused_before_the_run(tmp_path):
    r = _run(tmp_path, "gauge g = 1;", "--dump", "out", "-o", "out/gauge")
    assert r.returncode == 2 and r.stdout == "", r.stderr  # a usage error (serq.files.SameOutputError)
    assert r.stderr == ("error: out/gauge: named by -o as a file, and is --dump's gauge folder (a folder of "
                        "files); each output of a run needs a file of its own\n")
    assert not (tmp_path / "out").exists()  # nothing written, no folder made


@pytest.mark.timeout(120)
def test_without_gauges_the_name_is_the_reports(tmp_path):
    r = _run(tmp_path, "", "--dump", "out", "-o", "out/gauge")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "gauge").read_text().startswith("run: horizon 5")
    assert (tmp_path / "out" / "x.csv").is_file()
