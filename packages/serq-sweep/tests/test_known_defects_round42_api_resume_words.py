"""A sweep of the Python API (``serq_sim.sweep``) is told of its own keywords where a resume is refused or
warns: ``fresh=True`` and ``out=`` / ``records=``, not the command line's ``--fresh`` and ``--out`` its caller
never gave (``remove it or give --fresh``, ``give --out another name, or give --fresh``, ``let it end, or give
another --out``, ``not an entry of a sweep's journal; remove the file or give --fresh``). The command line's
words are unchanged (its own tests pin them; two are checked here beside the API's)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_sim
from serq.errors import UserError

HERE = Path(__file__).parent
MMC = HERE / "peer_programs27" / "mmc.sq"


def _sweep(lam=(1,), **kw):
    return serq_sim.sweep(MMC, **{"horizon": 10, "warmup": 0, "sets": {"lam": list(lam)}, "workers": 0,
                                  "progress": False, **kw})


def _refused(**kw) -> str:
    with pytest.raises(UserError) as e:
        _sweep(**kw)
    return str(e.value)


def test_a_table_of_someone_elses_names_fresh_true(tmp_path):
    out = tmp_path / "o.csv"
    out.write_text("name,score\na,1\n")
    said = _refused(out=out)
    assert said == f"error: {out}: not a sweep's table (no column key); remove it or give fresh=True"
    assert out.read_text() == "name,score\na,1\n"  # (kept)
    _sweep(out=out, fresh=True)  # what it says to give does what it says
    assert out.read_text().startswith("point,lam,seed,status,")


def test_a_journal_line_of_someone_elses_names_fresh_true(tmp_path):
    out = tmp_path / "o.csv"
    (tmp_path / "o.csv.journal").write_text("hello\n")
    said = _refused(out=out)
    assert said == (f"{tmp_path / 'o.csv.journal'}:1:1: error: not an entry of a sweep's journal; remove the file "
                    "or give fresh=True\n  hello\n  ^")


def test_a_points_table_of_someone_elses_names_out_and_fresh(tmp_path):
    out = tmp_path / "o.csv"
    (tmp_path / "o.points.csv").write_text("a,b\n1,2\n")
    said = _refused(out=out)
    assert said == (f"error: {tmp_path / 'o.points.csv'}: not a sweep's points table (no column point and runs); "
                    f"a sweep into {out} writes its table of points there: remove it, give out= another name, or "
                    "give fresh=True")


def test_a_locked_journal_names_out(tmp_path):
    out = tmp_path / "o.csv"
    with open(tmp_path / "o.csv.journal", "a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        said = _refused(out=out)
    assert said == (f"error: {out}: another serq command (a run, a sweep or a comparison) is writing this file now (its journal {out}.journal "
                    "is locked); let it end, or give out= another name")


def test_runs_left_out_warn_of_out_and_records(tmp_path, capsys):
    out, recs = tmp_path / "o.csv", tmp_path / "r.csv"
    _sweep(lam=(1, 2), out=out, records=recs)
    capsys.readouterr()
    _sweep(lam=(1,), out=out, records=recs)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(lines) == 2, err
    assert lines[0].startswith(f"warning: {out}: 1 run(s) of the table there") and lines[0].endswith(
        "copy it aside now to keep them, or give out= another name"), lines[0]
    assert lines[1].startswith(f"warning: records={recs}: the records of 1 run(s) there") and lines[1].endswith(
        "copy them aside now to keep them, or give records= another name"), lines[1]
    assert "--" not in err


def test_a_records_journal_of_someone_elses_names_fresh_true(tmp_path):
    out, recs = tmp_path / "o.csv", tmp_path / "r.csv"
    (tmp_path / "r.csv.journal").write_text('{"key": "k", "tables": 3}\n')
    said = _refused(out=out, records=recs)
    assert said.splitlines()[0] == (f"{tmp_path / 'r.csv.journal'}:1:24: error: not an entry of a sweep's journal; "
                                    "remove the file or give fresh=True")


def test_the_command_lines_words_are_unchanged(tmp_path):
    (tmp_path / "o.points.csv").write_text("a,b\n1,2\n")
    base = [sys.executable, "-m", "serq", "sweep", str(MMC), "--horizon", "10", "--warmup", "0", "--set", "lam=1",
            "--workers", "0", "--no-progress", "-o", "o.csv"]
    r = subprocess.run(base, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip().endswith("remove it, give --out another name, or give --fresh"), r.stderr
    os.unlink(tmp_path / "o.points.csv")
    with open(tmp_path / "o.csv.journal", "a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = subprocess.run(base, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stderr.strip().endswith("let it end, or give another --out"), r.stderr
