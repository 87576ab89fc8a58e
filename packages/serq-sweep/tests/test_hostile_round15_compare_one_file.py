"""``serq compare`` of one program file named by two paths (``p.sq ./p.sq``, a symbolic link) is refused
as ``p.sq p.sq`` is: the arms are one program, and an A/A test is written as one FILE under one value given
twice. The check of one file by two paths was skipped for a comparison, so it ran the program against
itself and reported every figure equal, where the same two names spelt alike were refused."""

from __future__ import annotations

import os

import pytest
import serq_sweep
from serq.errors import UserError

pytestmark = pytest.mark.timeout(60)

PROGRAM = "let c = 1;\nstage svc : fifo;\nworkload { arrive poisson(0.5); }\nsession { run svc (1); end; }\n"


@pytest.mark.parametrize("other", ["./p.sq", "link.sq"])
def test_one_file_by_two_paths_is_one_arm(tmp_path, monkeypatch, other):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    os.symlink("p.sq", tmp_path / "link.sq")
    with pytest.raises(UserError) as e:
        serq_sweep.compare(["p.sq", other], seeds="1", horizon=10, workers=0, progress=False)
    assert str(e.value) == (f"error: the arms of the comparison are one program given twice: p.sq and {other} are "
                            "one file; an A/A test is one FILE under one value given twice (--set NAME=V,V)")


def test_two_files_of_one_text_are_two_arms(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "q.sq").write_text(PROGRAM)
    rows = serq_sweep.compare(["p.sq", "q.sq"], seeds="1,2", horizon=10, workers=0, progress=False,
                              figures=["stages.svc.completions"]).to_dict("records")
    assert [r["diff"] for r in rows] == [0]  # the same program under the same seeds: no difference
