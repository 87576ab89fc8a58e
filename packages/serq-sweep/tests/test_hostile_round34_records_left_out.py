"""A sweep's records hold its own runs alone, and the records of other runs at ``--records FILE`` (another
sweep's, of values or seeds not swept now) are said before the first run, as the table's are
(core.left_out): they were replaced without a word, so ``--records r.csv`` of a second sweep into another
``--out`` lost the first sweep's records, and a sweep narrowed to fewer values warned of its table's rows
alone. Records of this sweep's runs only, or no file there, say nothing."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); record r { x = now; } }
run { horizon 5; seed 1; }
"""


def _sweep(folder: Path, values: str, out: str, records: str = "r.csv", here=None) -> str:
    """What the sweep said before its summary line; as a child process, or given ``here`` (serq_in_process)
    on serq.cli.main in the test's process, in ``folder`` (a test of what is said, not of the process)."""
    args = ["sweep", "p.sq", "--set", f"a={values}", "--workers", "0", "--no-progress", "-o", out, "--records",
            records]
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(folder)
            r = here(*args)
    else:
        r = subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=folder, timeout=50,
                           stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    said, last = r.stderr[:-1].rpartition("\n")[0::2]
    assert " run(s) of " in last and last.endswith(f"records: {records}")  # the summary, after any warning
    return said + "\n" if said else ""


def _keys(path: Path) -> list[str]:
    return list(dict.fromkeys(row["key"] for row in csv.DictReader(io.StringIO(path.read_text()))))


def _warning(n: int, records: str = "r.csv") -> str:
    return (f"warning: --records {records}: the records of {n} run(s) there (or in its journal) are of no point "
            "and seed of this sweep (a value or seed not swept now, another sweep's, or the program, a trace, a "
            "run bound or a serQ version changed since): the records this sweep writes leave them out; copy "
            "them aside now to keep them, or give another --records\n")


@pytest.fixture
def folder(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert _sweep(tmp_path, "1,2", "t1.csv", here=serq_in_process) == ""
    assert len(_keys(tmp_path / "r.csv")) == 2
    return tmp_path


def test_another_sweeps_records_are_said_before_they_go(folder):
    said = _sweep(folder, "3", "t2.csv")  # (as a child process; the module's other sweeps in this process)
    assert said == _warning(2)
    assert _keys(folder / "r.csv") == _keys(folder / "t2.csv")  # the records of a=3's run alone, as said


def test_a_narrowed_sweep_says_both_the_tables_and_the_records(folder, serq_in_process):
    said = _sweep(folder, "1", "t1.csv", here=serq_in_process).splitlines(keepends=True)
    assert len(said) == 2 and said[0].startswith("warning: t1.csv: 1 run(s) of the table there")
    assert said[1] == _warning(1)


def test_the_records_journals_runs_are_counted(folder, serq_in_process):
    # a sweep stopped before its tables: its records in the journal alone
    key = _keys(folder / "r.csv")[0]
    (folder / "r.csv").unlink()
    entry = {"key": key, "tables": {"r": {"session": [0], "turn": [0], "time": [1.0], "x": [1.0]}}}
    (folder / "r.csv.journal").write_text(json.dumps(entry) + "\n")
    assert _sweep(folder, "3", "t3.csv", here=serq_in_process) == _warning(1)


def test_the_sweeps_own_records_say_nothing(folder, serq_in_process):
    assert _sweep(folder, "1,2", "t1.csv", here=serq_in_process) == ""  # every run resumed
    assert _sweep(folder, "1,2", "t4.csv", "r2.csv", here=serq_in_process) == ""  # nothing there
