"""Known defects, round 21 (serq-sweep): serq compare's options.

`serq compare --figure F --figure F` was accepted and F compared once, where a repeated `--set` name is
refused: it is a usage error now (status 2) naming F. The help of `--max-wall`, `--max-events` and
`--max-samples` was shared with `serq sweep` and said in serq compare "its row is then partial", of a command
that has no rows: each command's help says what it does with a run a bound cuts short."""

from __future__ import annotations

import pytest
from serq.cli import main

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { set t0 = now; run s (a * ~exp(1)); observe response = now - t0; end; }
run { horizon 5; seed 1; }
"""


def _serq(*args: str) -> int:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return info.value.code


def test_a_figure_given_twice_is_refused_before_any_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    from serq_sweep import pairing

    def arms_plan(*args, **kw):  # nothing is planned, let alone run
        raise AssertionError("planned")

    monkeypatch.setattr(pairing, "arms_plan", arms_plan)
    code = _serq("compare", "p.sq", "--set", "a=1,2", "--seeds", "1..2", "--workers", "0", "--no-progress",
                 "--figure", "response.mean", "--figure", "s.busy", "--figure", "response.mean")
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.strip().splitlines()[-1] == "error: --figure response.mean: given twice (give it once)"


def test_figures_given_once_each_are_compared(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    code = _serq("compare", "p.sq", "--set", "a=1,2", "--seeds", "1..2", "--workers", "0", "--no-progress",
                 "--figure", "response.mean", "--figure", "response.cv2")
    out, _ = capsys.readouterr()
    assert code == 0
    assert "response.mean" in out and "response.cv2" in out


def _help(command: str, capsys) -> str:
    assert _serq(command, "--help") == 0
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("option", ["--max-wall", "--max-events", "--max-samples"])
def test_each_command_says_what_a_bound_does_in_it(option, capsys):
    compare, sweep = _help("compare", capsys), _help("sweep", capsys)
    assert "row" not in compare.split(option, 1)[1].split("--", 1)[0]
    assert "compared on the figures of the time it simulated, with a warning" in compare.split(option, 1)[1]
    assert sweep.split(option, 1)[1].split("--", 1)[0].strip().split("(", 1)[1].startswith(
        "its row is then partial: status partial")


def test_the_python_api_refuses_a_figure_given_twice_by_its_argument(tmp_path, monkeypatch):
    from serq.errors import UsageError
    from serq_sweep import compare, pairing

    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.setattr(pairing, "arms_plan", lambda *a, **kw: (_ for _ in ()).throw(AssertionError("planned")))
    with pytest.raises(UsageError) as info:
        compare(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, seeds="1..2", workers=0,
                figures=["response.mean", "response.mean"])
    assert str(info.value) == "error: figures=response.mean: given twice (give it once)"
