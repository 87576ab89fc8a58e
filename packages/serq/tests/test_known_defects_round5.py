"""Known defects, found by a hostile reading, each fixed at its cause.

1. The NAME of ``--set NAME=VALUE``, ``--def NAME=BODY`` and ``--over NAME`` is cut as every message cuts a
   name it quotes (serq.errors.clipped: its first 60 and last 59 characters around ``…`` past 120): the
   heads of their errors (``--set NAME: the program has no `let NAME```) echoed a 100 000-character NAME
   whole, a line of 100 167 characters, where the quoted ``let NAME`` beside it was already cut.
3. A FILE that does not exist is told so whatever its name (serq.loading.load_program), as ``serq run
   missing.sq`` tells it: one of no loader's suffix was "unknown file type", so ``serq sweep find x.sq``
   (``find`` read as a FILE) and ``serq sweep missing --find ...`` said the type of a file that is not there.
5. One rule for blanks in ``NAME=VALUE`` (serq.loading.split_assignment, ``serq run``'s and a sweep's): none
   around NAME, as none is around a number (docs/language.md), so ``--set`` has none either side of its
   ``=``: ``--set ' lambda=1'`` was read as ``lambda`` (the name trimmed) while ``--set 'lambda= 1'`` was
   refused. A ``--def`` body's blanks are the expression's.
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
    assert max(map(len, lines)) < 500, [len(x) for x in lines]  # (three names of 120 at most)
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


@pytest.mark.parametrize("command", ["sweep", "compare"])
def test_the_point_a_sweeps_error_names_cuts_the_name(error, program, command):
    line = error(command, "p.sq", "--set", f"{NAME}=1,2", cwd=program.parent)
    assert line == f"p.sq: error: --set {CUT}: the program has no `{clipped('let ' + NAME)}` (at the sweep's point " \
        f"{CUT}=1)", line[:400]


@pytest.mark.parametrize("command, args, expected", [
    ("run", ("--slo", f"{NAME}=1"), f"error: invalid value for --slo: '{clipped(NAME + '=1')}': an SLO is "
                                    "NAME=SECONDS"),
    ("run", ("--slo", f"ttft={NAME}"), f"error: invalid value for --slo: '{clipped('ttft=' + NAME)}': "
                                       f"'{CUT}' is not a number of seconds"),
    ("sweep", ("--set", "a=1", "--zip", f"{NAME},a"), f"error: --zip {CUT},a: {CUT} is not a swept name"),
])
def test_the_names_of_slo_and_zip_are_cut_too(error, program, command, args, expected):
    line = error(command, "p.sq", *args, cwd=program.parent)
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


MG1 = """let lambda = 0.5;

stage s : fifo;

def service() = 1;

workload {
  arrive poisson(lambda);
}

session {
  run s (service());
  end;
}

run { horizon 10; seed 1; }
"""


@pytest.mark.parametrize("command", ["run", "sweep"])
@pytest.mark.parametrize("flag, item", [
    ("--set", " lambda=1"), ("--set", "lambda =1"), ("--set", "\tlambda=1"), ("--def", "service =2"),
    ("--def", " service=2"),
])
def test_a_blank_around_a_name_is_refused(error, tmp_path, command, flag, item):
    (tmp_path / "m.sq").write_text(MG1)
    name = item.split("=")[0].strip()
    assert error(command, "m.sq", flag, item, cwd=tmp_path) == \
        f"error: {flag} {item!r}: a blank around the name; NAME=VALUE is written without one ({flag} {name}=…)"


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_blank_around_a_number_is_refused_as_before(error, tmp_path, command):
    (tmp_path / "m.sq").write_text(MG1)
    assert "' 1' is not a number" in error(command, "m.sq", "--set", "lambda= 1", cwd=tmp_path)


def test_blanks_in_a_definitions_body_are_the_expressions(capsys, tmp_path, monkeypatch):
    from serq.cli import main

    (tmp_path / "m.sq").write_text(MG1)
    monkeypatch.chdir(tmp_path)
    outs = []
    for item in ("service=2", "service= 2 "):
        with pytest.raises(SystemExit) as info:
            main(["run", "m.sq", "--def", item])
        assert not info.value.code
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and "s " in outs[0]
