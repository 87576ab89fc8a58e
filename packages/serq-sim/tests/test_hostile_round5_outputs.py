"""``serq run`` refuses, before it simulates, a file output (``-o``, ``--records``) that is the ``--dump``
folder or a folder above it, and an output whose folder the system cannot walk to; nothing is written.

Each output was checked alone: ``-o r.txt --records out.csv --dump out.csv`` simulated, wrote the report, made
the folder ``out.csv`` for the dump, and then failed (``error: out.csv: is a folder, not a file``), a report
and a folder left behind by a command that failed; ``-o r.txt --dump r.txt/d`` wrote the report, then could
not make the folder under it. ``-o d/../r.txt`` (``d`` missing) passed the check, whose ``realpath`` skips
``d/..``, and failed after the run. (serq.files.check_distinct's ``folders``, serq.files.check_output.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); observe response = now; record r { y = now; } }
run { horizon 5; seed 1; }
"""


def _run(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq run p.sq --no-progress ARGS`` in ``tmp_path``, as a child process; given ``here``
    (serq_in_process), serq.cli.main in the test's process, in that folder (a test of what is said and
    written, not of the process)."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here("run", "p.sq", "--no-progress", *args)
    return subprocess.run([SERQ, "run", "p.sq", "--no-progress", *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args, message", [
    (["-o", "r.txt", "--records", "out.csv", "--dump", "out.csv"],
     "out.csv: named by --records as a file, and is --dump (a folder of files)"),
    (["-o", "r.txt", "--dump", "r.txt/d"], "r.txt: named by -o as a file, and holds the folder r.txt/d of --dump "
                                           "(a folder of files)"),
    (["-o", "./r.txt", "--dump", "r.txt"], "./r.txt: named by -o as a file, and is --dump (a folder of files)"),
    (["--records", "q.csv", "--dump", "q.csv/a/b"], "q.csv: named by --records as a file, and holds the folder "
                                                   "q.csv/a/b of --dump (a folder of files)"),
])
def test_a_file_output_that_is_or_holds_the_dump_folder_is_refused_before_the_run(tmp_path, serq_in_process, args,
                                                                                 message):
    r = _run(tmp_path, *args, here=None if args[1] == "r.txt" and args[3] == "out.csv" else serq_in_process)
    assert r.returncode == 2, r.stderr  # a usage error (serq.files.SameOutputError)
    assert r.stderr == f"error: {message}; each output of a run needs a file of its own\n"
    assert r.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_an_output_beyond_a_missing_folder_is_refused_before_the_run(tmp_path, serq_in_process):
    # (the first case of the module's refusals as a child process, the others in this process)
    r = _run(tmp_path, "-o", "d/../r.txt", "--dump", "d", here=serq_in_process)
    assert r.returncode == 1
    assert r.stderr == "error: d/../r.txt: no folder d/.. to write it in\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_outputs_apart_are_written(tmp_path):
    (tmp_path / "d").mkdir()
    r = _run(tmp_path, "-o", "d/../r.txt", "--records", "out.csv", "--dump", "dump")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r.txt").read_text().startswith("run: horizon 5")
    assert (tmp_path / "out.csv").exists() and (tmp_path / "dump" / "response.csv").exists()
    r = _run(tmp_path, "-o", "/dev/null", "--dump", "dump2")
    assert r.returncode == 0, r.stderr
