"""``serq metrics RECORDS -o FILE`` refuses an output it cannot write before it reads the records, as every
command's output is (docs/security.md: a path under a file or in a folder that does not exist is ``no folder
D to write it in``, status 1, before the work). It read and measured the records first and then said the
system's words as it wrote, ``cannot create a file in its folder p.sq (Not a directory); serq writes a file
whole or not at all, …``, and a records file with a fault of its own hid the output's."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.timeout(60)

RECORDS = ("session,turn,time,sent,admitted,first_token,last_token,prompt,output,cached,preemptions\n"
           "0,1,2.5,0.5,0.5,0.75,2.5,100,8,0,0\n"
           "1,1,3.0,1.0,1.25,1.5,3.0,50,4,16,0\n")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.csv").write_text(RECORDS)
    (tmp_path / "bad.csv").write_text("session,turn,time,sent\n0,1,x,0\n")
    return tmp_path


@pytest.mark.parametrize(("output", "folder_named"), [("nowhere/m.json", "nowhere"), ("r.csv/m.json", "r.csv"),
                                                      ("link.csv", "{tmp}/nowhere")])
@pytest.mark.parametrize("records", ["r.csv", "bad.csv"])
def test_an_output_that_cannot_be_written_is_refused_before_the_records_are_read(folder, serq_in_process, output,
                                                                                  folder_named, records):
    os.symlink("nowhere/m.csv", folder / "link.csv")  # (a link to a file in a folder that does not exist)
    got = serq_in_process("metrics", records, "-o", output)
    assert got.returncode == 1
    assert got.stderr == f"error: {output}: no folder {folder_named.format(tmp=folder)} to write it in\n"
    assert sorted(p.name for p in folder.iterdir()) == ["bad.csv", "link.csv", "r.csv"]


def test_an_output_that_can_be_written_is_written(folder, serq_in_process):
    got = serq_in_process("metrics", "r.csv", "-o", "m.csv")
    assert got.returncode == 0, got.stderr
    head, row = (folder / "m.csv").read_text().splitlines()
    figures = dict(zip(head.split(","), row.split(",")))
    # two requests sent at 0.5 and 1, their last tokens at 2.5 and 3: completed 2 over 2.5 s
    assert figures["completed"] == "2" and float(figures["duration"]) == 2.5
    assert float(figures["ttft.mean"]) == 0.375  # (0.25 and 0.5)
