"""An output's name that names nothing, given to the library: ``report.dump("")``, ``write_atomic("", …)``,
``open_atomic("a\\0b")``. They reached the system: Python's FileNotFoundError of ``''`` (of the temporary
file, for ``write_atomic``) and os.lstat's ValueError, "embedded null byte". Now each is the
:class:`serq.files.OutputError` an output the rules refuse is, before anything is written."""

from __future__ import annotations

import os

import pytest
import serq_frontend
import serq_report
import serq_sim
from serq.files import OutputError, check_folder, check_output

SOURCE = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (~exp(2)); observe w = 1; }\n"


@pytest.fixture(scope="module")
def report():
    return serq_sim.run(serq_frontend.compile(source=SOURCE), seed=1, horizon=20, warmup=0)


@pytest.mark.parametrize(("call", "what"), [
    (lambda r, p: serq_report.dump(r, p), "folder"),
    (lambda r, p: serq_report.write_atomic(p, "x"), "file"),
    (lambda r, p: serq_report.open_atomic(p), "file"),
    (lambda r, p: check_output(p), "file"),
    (lambda r, p: check_folder(p), "folder"),
], ids=["dump", "write_atomic", "open_atomic", "check_output", "check_folder"])
def test_a_name_that_names_nothing_is_an_output_error(report, tmp_path, monkeypatch, call, what):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputError) as e:
        call(report, "")
    assert str(e.value) == f"error: an empty name names no {what}"
    with pytest.raises(OutputError) as e:
        call(report, "d\0x")
    assert str(e.value) == "error: 'd\\x00x': a file name holds no NUL character"
    assert os.listdir(tmp_path) == []


def test_a_name_that_names_a_folder_still_dumps(report, tmp_path):
    written = serq_report.dump(report, tmp_path / "d")
    assert [os.path.basename(p) for p in written] == ["w.csv", "serq-dump.json"]
