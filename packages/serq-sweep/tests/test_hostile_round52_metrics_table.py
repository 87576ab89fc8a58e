"""``serq metrics --format csv`` and ``-o FILE.parquet`` of runs and groups whose labels clash with the table.

* A sweep's run label column of numbers and texts (a swept definition's bodies ``~exp(1)`` and ``2``, read back
  a cell at a time) is all texts, as a ``--by`` column of texts is: ``-o t.parquet`` was pyarrow's
  ArrowTypeError traceback ('Expected bytes, got a 'int' object').
* A label of a figure's name (a swept ``let duration``, ``--by completed``) or of ``whole`` is written by its
  JSON path, ``run.NAME`` or ``group.NAME``: the figure was written over it, so a sweep over ``duration`` held
  every run's window in ``duration`` and its swept values nowhere, and the groups of ``--by completed`` were
  told apart by nothing. A name that would still be written twice is refused.

Truth: the cells written here, read back."""

from __future__ import annotations

import csv
import io

import pandas as pd

SWEEP = "point,{name},seed,key,sent,first_token,last_token,output\n"


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_run_label_of_numbers_and_texts_is_texts(tmp_path, serq_in_process):
    p = tmp_path / "r.csv"
    p.write_text(SWEEP.format(name="d") + "0,~exp(1),1,k1,0,1,2,3\n1,2,1,k2,0,1,2,3\n")
    out = tmp_path / "t.parquet"
    r = serq_in_process("metrics", str(p), "-o", str(out))
    assert r.returncode == 0 and r.stderr == ""
    frame = pd.read_parquet(out)
    assert frame["d"].tolist() == ["~exp(1)", "2"] and frame["point"].tolist() == [0, 1]
    assert frame["completed"].tolist() == [1, 1]
    r = serq_in_process("metrics", str(p), "--format", "csv")
    assert [(row["d"], row["completed"]) for row in _csv(r.stdout)] == [("~exp(1)", "1"), ("2", "1")]


def test_a_swept_let_named_as_a_figure(tmp_path, serq_in_process):
    p = tmp_path / "r.csv"
    # runs of the windows 2 and 4 s (first sent to last token), a swept `duration` of 5 and 7
    p.write_text(SWEEP.format(name="duration") + "0,5,1,k1,0,1,2,3\n1,7,1,k2,0,1,4,3\n")
    r = serq_in_process("metrics", str(p), "--format", "csv")
    assert r.returncode == 0, r.stderr
    rows = _csv(r.stdout)
    assert list(rows[0])[:5] == ["point", "run.duration", "seed", "completed", "duration"]
    assert [(row["run.duration"], row["duration"]) for row in rows] == [("5", "2.0"), ("7", "4.0")]
    out = tmp_path / "t.parquet"
    assert serq_in_process("metrics", str(p), "-o", str(out)).returncode == 0
    frame = pd.read_parquet(out)
    assert frame["run.duration"].tolist() == [5, 7] and frame["duration"].tolist() == [2.0, 4.0]


def test_by_columns_named_as_a_figure_or_whole(tmp_path, serq_in_process):
    p = tmp_path / "req.csv"
    p.write_text("sent,first_token,last_token,output,completed,whole\n0,1,2,3,a,x\n0,1,3,3,b,y\n")
    r = serq_in_process("metrics", str(p), "--by", "completed", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert [(row["group.completed"], row["whole"], row["completed"]) for row in _csv(r.stdout)] == [
        ("a", "0", "1"), ("b", "0", "1"), ("", "1", "2")]
    r = serq_in_process("metrics", str(p), "--by", "whole", "--format", "csv")
    assert [(row["group.whole"], row["whole"]) for row in _csv(r.stdout)] == [("x", "0"), ("y", "0"), ("", "1")]


def test_a_name_written_twice_is_refused(tmp_path, serq_in_process):
    p = tmp_path / "req.csv"
    p.write_text("sent,first_token,last_token,output,group.completed,completed\n0,1,2,3,a,x\n")
    out = tmp_path / "t.csv"
    r = serq_in_process("metrics", str(p), "--by", "completed", "--by", "group.completed", "-o", str(out))
    assert r.returncode == 1 and not out.exists()
    assert r.stderr == ("error: the table's column group.completed would be written twice (a label of the run or "
                        "of --by, and a figure's or another label's); give --format json, which keeps them apart\n")
    # the JSON keeps them apart
    r = serq_in_process("metrics", str(p), "--by", "completed", "--by", "group.completed", "--json")
    assert r.returncode == 0 and '"completed": "x"' in r.stdout and '"group.completed": "a"' in r.stdout
