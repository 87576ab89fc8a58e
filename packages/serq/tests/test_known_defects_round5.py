"""Known defects, found by a hostile reading, each fixed at its cause.

1. The NAME of ``--set NAME=VALUE``, ``--def NAME=BODY`` and ``--over NAME`` is cut as every message cuts a
   name it quotes (serq.errors.clipped: its first 60 and last 59 characters around ``…`` past 120): the
   heads of their errors (``--set NAME: the program has no `let NAME```) echoed a 100 000-character NAME
   whole, a line of 100 167 characters, where the quoted ``let NAME`` beside it was already cut.
3. A FILE that does not exist is told so whatever its name (serq.loading.load_program), as ``serq run
   missing.sq`` tells it: one of no loader's suffix was "unknown file type", so ``serq sweep find x.sq``
   (``find`` read as a FILE) and ``serq sweep missing --find ...`` said the type of a file that is not there.
"""

from __future__ import annotations

import pytest
from serq.errors import clipped

pytestmark = pytest.mark.timeout(120)

PROGRAM = """stage s : fifo;

workload {
  arrive poisson(1);
}

session {
  run s (1);
  end;
}

run { horizon 10; seed 1; }
"""

NAME = "q" * 50_000 + "r" * 50_000
CUT = "q" * 60 + "…" + "r" * 59


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "p.sq"
    path.write_text(PROGRAM)
    return path


@pytest.fixture
def error(capsys, monkeypatch):
    """The first line of the error of ``serq ARGS…`` in ``cwd`` (serq.cli.main in this process)."""
    from serq.cli import main

    def call(*args: str, cwd) -> str:
        monkeypatch.chdir(cwd)
        with pytest.raises(SystemExit) as info:
            main(list(args))
        err = capsys.readouterr().err
        assert info.value.code and "Traceback" not in err
        return first(err)

    return call


def first(stderr: str) -> str:
    lines = stderr.splitlines()
    assert max(map(len, lines)) < 400, [len(x) for x in lines]
    return lines[0]


@pytest.mark.parametrize("args, expected", [
    (("--set", f"{NAME}=1"), f"p.sq: error: --set {CUT}: the program has no `{clipped('let ' + NAME)}`"),
    (("--def", f"{NAME}=1"), f"p.sq: error: --def {CUT}: the program has no expression definition `{CUT}`"),
    (("--set", f"{NAME}=x"), f"error: --set {CUT}=x: 'x' is not a number"),
    (("--set", f"{NAME}=1", "--set", f"{NAME}=2"), f"error: --set {CUT}: given twice, '1' and '2' (give it once)"),
])
def test_run_cuts_the_name_of_a_flag(error, program, args, expected):
    line = error("run", "p.sq", *args, cwd=program.parent)
    assert line.startswith(expected), line[:400]


@pytest.mark.parametrize("args, expected", [
    (("--set", f"{NAME}=x"), f"error: --set {CUT}: 'x' is not a number"),
    (("--find", "s.wait>1", "--over", NAME, "0:1"), f"error: p.sq: --over {CUT}: the program has no `let {CUT}`"),
])
def test_sweep_cuts_the_name_of_a_flag(error, program, args, expected):
    line = error("sweep", "p.sq", *args, cwd=program.parent)
    assert line.startswith(expected), line[:400]


def test_a_short_name_is_quoted_whole(error, program):
    name = "z" * 120
    assert error("run", "p.sq", "--set", f"{name}=1", cwd=program.parent) == \
        f"p.sq: error: --set {name}: the program has no `{clipped('let ' + name)}`"


@pytest.mark.parametrize("args", [
    ("run", "missing"), ("check", "missing"), ("ir", "missing"), ("sweep", "missing", "--set", "lambda=1"),
    ("sweep", "missing", "--find", "s.wait>1", "--over", "lambda", "0:1"), ("sweep", "find", "p.sq"),
])
def test_a_missing_file_of_no_loaders_suffix(error, program, args):
    line = error(*args, cwd=program.parent)
    missing = "find" if "find" in args[:2] else "missing"
    assert line.startswith(f"error: {missing}: cannot read: No such file or directory"), line
    # the words of a missing file of a loader's suffix
    assert error("run", "missing.sq", cwd=program.parent) == "error: missing.sq: cannot read: No such file or directory"


def test_a_file_there_of_no_loaders_suffix_is_still_of_an_unknown_type(error, program):
    (program.parent / "p.txt").write_text(PROGRAM)
    assert error("run", "p.txt", cwd=program.parent).startswith("error: p.txt: unknown file type")
