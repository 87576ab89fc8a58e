"""A value of a flag that the flag's own form refuses is a usage error, status 2, in every command.

click's usage errors exit 2 (a value an option's type refuses: ``--horizon nan``, ``--slo ttft=x``), while
the values a command read itself exited 1: ``--set g=nan``, ``--set g``, ``--def g``, a sweep's list
``1,,2`` or range, ``--seeds 5..1``, ``--zip a,,b``, ``--find``'s condition, ``--over``'s range, an unknown
``--format``. The rule is now one (serq.errors.UsageError, which serq.cli exits 2 with): the form of a
flag's value is the command line's business, status 2; a well-formed value that does not fit the program
(a ``--set`` of a ``let`` it has not) is an error of the program with that value, status 1. Each message
stays one line naming the flag and the value, with no traceback.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(120)

PROGRAM = ("let g = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (g); observe response = now - t0; }\nrun { horizon 5; }\n")


def _status(capsys, args: list[str]) -> tuple[int, str]:
    from serq.cli import main

    with pytest.raises(SystemExit) as info:
        main(args)
    out = capsys.readouterr()
    return info.value.code, out.err


@pytest.fixture
def here(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("args, head", [
    # click's own: the type of the option refuses it (these exited 2 already)
    (["run", "p.sq", "--horizon", "nan"], "error: invalid value for '--horizon'"),
    (["run", "p.sq", "--slo", "ttft=x"], "error: invalid value for --slo: 'ttft=x'"),
    # what a command read itself: exited 1
    (["run", "p.sq", "--set", "g=nan"], "error: --set g=nan: NaN is not the value of a constant"),
    (["run", "p.sq", "--set", "g=1_000"], "error: --set g=1_000: '1_000' is not a number"),
    (["run", "p.sq", "--set", "g"], "error: --set 'g': expected NAME=VALUE"),
    (["run", "p.sq", "--set", "g=1", "--set", "g=2"], "error: --set g: given twice, '1' and '2'"),
    (["run", "p.sq", "--def", "g"], "error: --def 'g': expected NAME=VALUE"),
    (["run", "p.sq", "--format", "xml"], "error: --format xml: unknown report format"),
    (["check", "p.sq", "--set", "g=x"], "error: --set g=x: 'x' is not a number"),
    # values a sweep takes, given to a command of one value: said to be serq sweep's (it said only "not a number")
    (["run", "p.sq", "--set", "g=2:8:2"], "error: --set g=2:8:2: '2:8:2' is not a number; this command takes one "
                                          "value: a list or a range of values is serq sweep's (serq sweep FILE "
                                          "--set g=2:8:2, docs/sweep.md)\n"),
    (["check", "p.sq", "--set", "g=1,2"], "error: --set g=1,2: '1,2' is not a number; this command takes one value"),
    (["vllm", "target", "p.sq", "--set", "g=1..2"], "error: --set g=1..2: '1..2' is not a number; this command"),
    (["ir", "p.sq", "--set", "g=nan"], "error: --set g=nan: NaN is not the value of a constant"),
    (["vllm", "target", "p.sq", "--set", "g"], "error: --set 'g': expected NAME=VALUE"),
    (["sweep", "p.sq", "--workers", "0", "--set", "g=1,,2"], "error: --set g: '1,,2': item 2 of 3 is empty"),
    (["sweep", "p.sq", "--workers", "0", "--set", "g=3:1"], "error: --set g: '3:1': the range ends before it"),
    (["sweep", "p.sq", "--workers", "0", "--seeds", "5..1"], "error: --seeds 5..1: '5..1' ends before it starts"),
    (["sweep", "p.sq", "--workers", "0", "--set", "g=1,2", "--zip", "g,,h"], "error: --zip 'g,,h': name 2 of 3"),
    (["sweep", "p.sq", "--workers", "0", "--find", "response.mean", "--over", "g", "1:2"], "error: --find "),
    (["sweep", "p.sq", "--workers", "0", "--find", "response.mean <= 1", "--over", "g", "2:1"],
     "error: --over g 2:1: LO must be below HI"),
    (["sweep", "p.sq", "--workers", "0", "-o", "t.txt"], "error: --out t.txt: a table is .parquet or .csv"),
    (["compare", "p.sq", "--workers", "0", "--set", "g=1,2", "--seeds", "1"],
     "error: serq compare needs two or more seeds"),
])
def test_a_bad_flag_value_is_a_usage_error(here, capsys, args, head):
    quiet = ["--no-progress"] if args[0] in ("run", "sweep", "compare") else []
    code, err = _status(capsys, [*args, *quiet])
    assert (code, err.count("\n")) == (2, 1), err
    assert err.startswith(head) and "Traceback" not in err, err
    assert sorted(p.name for p in here.iterdir()) == ["p.sq"]  # nothing written


@pytest.mark.parametrize("command", [["run"], ["check"], ["ir"], ["sweep", "--workers", "0"]])
def test_a_set_of_a_let_the_program_has_not_is_an_error_of_the_program(here, capsys, command):
    # well formed, but the program has no `let h`: status 1, as every error of a program is
    quiet = ["--no-progress"] if command[0] in ("run", "sweep") else []
    code, err = _status(capsys, [command[0], "p.sq", *command[1:], "--set", "h=1", *quiet])
    assert code == 1 and "--set h: the program has no `let h`" in err and "Traceback" not in err, err
