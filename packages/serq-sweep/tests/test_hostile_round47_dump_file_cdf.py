"""``serq plot --cdf`` of one observe's file of a dump folder says to give the folder.

``serq run --dump DIR`` writes each observe's samples as ``DIR/NAME.csv`` (``time,session,turn,value``).
Given such a file, ``serq plot DIR/ttft.csv --cdf ttft`` read it as records and said only ``needs the
records' columns sent, first_token (it has time, session, turn, value)``, and ``--cdf response`` that the
records have no such column: the CDF the user wanted is ``serq plot DIR --cdf ttft``, which neither said. Both
now say what the file is and the command that draws it; a records table is told as before.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage svc : fifo;

workload {
  arrive poisson(1);
}

session {
  set t0 = now;
  run svc (0.5);
  observe ttft = now - t0;
  record req {
    wait = now - t0;
  }
  end;
}

run { horizon 50; seed 1; }
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    here = tmp_path_factory.mktemp("dump")
    (here / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--dump", "out", "--records", "req.csv", "--no-progress"], cwd=here,
                       capture_output=True, text=True, timeout=100)
    assert r.returncode == 0, r.stderr
    assert (here / "out" / "ttft.csv").read_text().startswith("time,session,turn,value\n")
    return here


def _plot(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "plot", *args], cwd=folder, capture_output=True, text=True, timeout=100)


HINT = ("; it is the samples of the observe ttft as serq run --dump writes them: their CDF is drawn from the dump "
        "folder, serq plot out --cdf ttft -o FILE")


def test_a_request_metric_of_a_dump_file(folder):
    r = _plot(folder, "out/ttft.csv", "--cdf", "ttft", "-o", "a.svg")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("error: out/ttft.csv: --cdf ttft needs the records' columns sent, first_token (it has time, "
                        f"session, turn, value){HINT}\n")
    assert not (folder / "a.svg").exists()


def test_an_observe_of_a_dump_file(folder):
    r = _plot(folder, "out/ttft.csv", "--cdf", "wait", "-o", "a.svg")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith("error: out/ttft.csv: --cdf wait: no column wait in the records and no metric of that "
                               "name (metrics: ")
    assert HINT in r.stderr
    assert not (folder / "a.svg").exists()


def test_the_command_it_gives_draws_it_and_records_are_told_as_before(folder):
    r = _plot(folder, "out", "--cdf", "ttft", "-o", "b.svg")
    assert r.returncode == 0, r.stderr
    assert (folder / "b.svg").read_text().lstrip().startswith("<?xml")
    r = _plot(folder, "req.csv", "--cdf", "ttft", "-o", "c.svg")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("error: req.csv: --cdf ttft needs the records' columns sent, first_token (it has session, turn, "
                        "time, wait)\n")
