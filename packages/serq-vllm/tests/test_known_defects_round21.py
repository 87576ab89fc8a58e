"""Known defects, round 21 (serq-vllm): `serq vllm target --set B=inf` refused the budget of inf at `budget B;`
and named no --set: the value came from the command line, not from the line quoted. Every command that takes
--set notes the values it was given after an error raised once the program is loaded, as `serq run`'s run-time
errors do (serq.loading.sets_noted, the one way): `note: `B` is inf, given by --set B`."""

from __future__ import annotations

from pathlib import Path

import pytest
from serq.cli import main

pytestmark = pytest.mark.timeout(60)

VLLM = str(Path(__file__).resolve().parents[3] / "examples/multi-turn/vllm.sq")


def _serq(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return info.value.code, capsys.readouterr().err


def test_target_notes_the_set_that_made_its_error(capsys):
    code, err = _serq(capsys, "vllm", "target", VLLM, "--set", "B=inf", "--set", "bs=16")
    lines = err.rstrip("\n").split("\n")
    assert code == 1
    assert lines[0].endswith("error: the engine's budget is inf: vLLM's max_num_batched_tokens is a whole "
                             "number, at least 1")
    assert lines[-2:] == ["note: `B` is inf, given by --set B", "note: `bs` is 16, given by --set bs"]


def test_target_without_sets_says_no_note(capsys, tmp_path):
    p = tmp_path / "v.sq"
    p.write_text(Path(VLLM).read_text().replace("let B = 2048;", "let B = inf;  "))
    code, err = _serq(capsys, "vllm", "target", str(p))
    assert code == 1 and "note:" not in err and "budget is inf" in err
