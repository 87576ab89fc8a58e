"""The calls that write a user's file take a path, a ``str`` or an ``os.PathLike`` naming one, and say at the
call, naming the call and the parameter, when given anything else: ``write_atomic(None, "x")`` was
``os.fspath``'s "expected str, bytes or os.PathLike object, not NoneType", which named neither, and
``open_atomic(None)`` said nothing until its ``with`` block was entered. ``inputs`` is an iterable of paths:
a str was taken letter by letter."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import serq_report
from serq import files
from serq_report.csv import write_table

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("call, said", [
    (lambda d: serq_report.write_atomic(None, "x"), "write_atomic: path must be a path (a str or os.PathLike), "
                                                    "not NoneType"),
    (lambda d: serq_report.write_atomic(3, "x"), "write_atomic: path must be a path (a str or os.PathLike), not int"),
    (lambda d: serq_report.write_atomic(os.fsencode(d / "r.txt"), "x"),
     "write_atomic: path must be a path (a str or os.PathLike), not bytes"),
    (lambda d: serq_report.write_atomic(d / "r.txt", "x", inputs="p.sq"),
     "write_atomic: inputs must be an iterable of paths (a list of str or os.PathLike), not str"),
    (lambda d: serq_report.write_atomic(d / "r.txt", "x", inputs=[None, 3]),
     "write_atomic: an item of inputs must be a path (a str or os.PathLike), not int"),
    # checked at the call, not when the with block is entered
    (lambda d: serq_report.open_atomic(None), "open_atomic: path must be a path (a str or os.PathLike), not NoneType"),
    (lambda d: write_table(None, {"a": [1]}), "write_table: path must be a path (a str or os.PathLike), not NoneType"),
    (lambda d: files.check_output(None), "check_output: path must be a path (a str or os.PathLike), not NoneType"),
    (lambda d: files.read_input(None), "read_input: path must be a path (a str or os.PathLike), not NoneType"),
    (lambda d: files.check_distinct([("-o", None)]),
     "check_distinct: the path of -o must be a path (a str or os.PathLike), not NoneType"),
])
def test_a_path_that_is_no_path_is_a_type_error_naming_the_parameter(tmp_path, call, said):
    with pytest.raises(TypeError) as info:
        call(tmp_path)
    assert str(info.value) == said
    assert os.listdir(tmp_path) == []  # nothing written


def test_dumps_inputs_are_paths(tmp_path, report):
    with pytest.raises(TypeError) as info:
        serq_report.dump(report, tmp_path / "d", inputs=[None, 3])
    assert str(info.value) == "dump: an item of inputs must be a path (a str or os.PathLike), not int"
    assert os.listdir(tmp_path) == []


def test_paths_of_every_accepted_kind_are_written(tmp_path):
    (tmp_path / "p.sq").write_text("input\n")
    serq_report.write_atomic(tmp_path / "a.txt", "a\n", inputs=[None, tmp_path / "p.sq", str(tmp_path / "q")])
    serq_report.write_atomic(str(tmp_path / "b.txt"), "b\n", inputs=(p for p in [tmp_path / "p.sq"]))
    with serq_report.open_atomic(Path(tmp_path / "c.txt")) as f:
        f.write("c\n")
    assert [(tmp_path / n).read_text() for n in ("a.txt", "b.txt", "c.txt")] == ["a\n", "b\n", "c\n"]
    with pytest.raises(files.OutputError):  # an input, given as a Path among the inputs, is still refused
        serq_report.write_atomic(tmp_path / "p.sq", "x", inputs=[tmp_path / "p.sq"])
    assert (tmp_path / "p.sq").read_text() == "input\n"
