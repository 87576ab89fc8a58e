"""Known defects, round 21 (serq): an error after the program is loaded notes the values --set gave, in every
command that takes --set, as `serq run`'s run-time errors did alone (serq.loading.sets_noted): `serq ir
--set H=20 --warmup 30` of a program whose horizon is `H` said the warmup is not below the horizon 20, and not
where 20 came from."""

from __future__ import annotations

import pytest
from serq.cli import main
from serq.errors import UsageError, UserError
from serq.loading import sets_noted

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let H = 10;
stage s : delay;
workload { arrive poisson(1); }
session { run s (1); end; }
run { horizon H; warmup 5; seed 1; }
"""


def _serq(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return info.value.code, capsys.readouterr().err


@pytest.mark.parametrize("command", [["ir"], ["run", "--no-progress"]])
def test_a_run_setting_error_notes_the_sets(command, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.sq").write_text(PROGRAM)
    code, err = _serq(capsys, command[0], "h.sq", *command[1:], "--set", "H=20", "--warmup", "30")
    assert code == 1
    assert err == ("h.sq: error: --warmup 30: warmup 30 is not below the horizon 20\n"
                   "note: `H` is 20, given by --set H\n")


def test_the_error_keeps_its_class_and_sets_none_adds_nothing():
    with pytest.raises(UsageError) as info, sets_noted({"a": 0.5}):
        raise UsageError("--x 1: no")
    assert str(info.value) == "error: --x 1: no\nnote: `a` is 0.5, given by --set a"
    with pytest.raises(UserError) as info, sets_noted({}):
        raise UserError("no")
    assert str(info.value) == "error: no"
    with pytest.raises(ValueError) as info, sets_noted({"a": 1}):  # not a user's error: as it was
        raise ValueError("bug")
    assert str(info.value) == "bug"
