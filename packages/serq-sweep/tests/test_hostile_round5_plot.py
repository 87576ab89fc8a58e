"""``serq plot DIR --cdf NAME`` / ``--gauge NAME`` finds the file ``serq run --dump DIR`` wrote for NAME by the
rule it was written by (``serq.files.file_names``), and flags that draw another plot are refused.

* The name was joined to the folder as it is: ``--gauge ../response`` drew the observe ``response``
  (``DIR/gauge/../response.csv``) as if it were a gauge, status 0; an observe an IR file names ``a/b``,
  dumped as ``a%2Fb.csv``, was "no observe a/b in the dump (observes there: a%2Fb)", and only the escape
  drew it; and of two observes ``X`` and ``x`` (``%58.csv`` and ``x.csv``) a case-insensitive file system
  opened ``x.csv`` for ``X``. The reader now goes by the writer's rule (``serq.files.file_of``), and the
  names it lists are the program's (``serq.files.name_of_file``).
* ``--x``/``--y`` (a table's curve) beside ``--cdf`` or ``--gauge`` were ignored, status 0, as ``--cdf``
  beside ``--gauge`` is not: each is one message, a usage error (status 2: flags that do not go together),
  no picture.
* The picture's inputs were the dump folder alone, not the files read in it: ``-o x.svg``, a symbolic or
  hard link to ``DIR/response.csv``, replaced the samples it drew with the picture. Every file read is an
  input the picture is never written over.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
gauge q = queue(s);
session { run s (1); observe response = now; observe other = 2 * now; }
run { horizon 20; seed 1; }
"""


def _serq(cwd: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``cwd``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said and of the files left)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def _refused(r, message: str) -> None:
    assert r.returncode == 1, r.stderr
    assert r.stderr == message + "\n", r.stderr


def _dump(tmp_path: Path, here, rename: dict[str, str] | None = None) -> Path:
    """A dump of PROGRAM (its observes renamed in its IR by ``rename``), made by ``here`` (serq_in_process: the
    commands in this process, in ``tmp_path``; what a test checks is the serq plot run on it after)."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    source = "p.sq"
    with pytest.MonkeyPatch.context() as m:
        m.chdir(tmp_path)
        if rename:
            r = here("ir", "p.sq")
            assert r.returncode == 0, r.stderr
            ir = json.loads(r.stdout)
            for o in ir["observes"]:
                o["name"] = rename.get(o["name"], o["name"])
            (tmp_path / "p.ir.json").write_text(json.dumps(ir))
            source = "p.ir.json"
        r = here("run", source, "--dump", "d", "-o", "report.txt")
    assert r.returncode == 0, r.stderr
    return tmp_path / "d"


def test_a_name_is_no_path_into_or_out_of_the_dump(tmp_path, serq_in_process):
    _dump(tmp_path, serq_in_process)
    # (the refusals in the test's process; the plot that draws, below, as a child process)
    _refused(_serq(tmp_path, "plot", "d", "--gauge", "../response", "-o", "a.svg", here=serq_in_process),
             "error: d: no gauge ../response in the dump (gauges there: q)")
    _refused(_serq(tmp_path, "plot", "d", "--cdf", "gauge/q", "-o", "a.svg", here=serq_in_process),
             "error: d: no observe gauge/q in the dump (observes there: other, response)")
    _refused(_serq(tmp_path, "plot", "d", "--cdf", "../p", "-o", "a.svg", here=serq_in_process),
             "error: d: no observe ../p in the dump (observes there: other, response)")
    assert not (tmp_path / "a.svg").exists()
    r = _serq(tmp_path, "plot", "d", "--gauge", "q", "-o", "a.svg")
    assert r.returncode == 0 and (tmp_path / "a.svg").exists(), r.stderr


def test_an_observe_whose_name_is_escaped_is_drawn_by_its_name(tmp_path, serq_in_process):
    d = _dump(tmp_path, serq_in_process, {"response": "a/b", "other": "Ö ü"})
    assert sorted(p.name for p in d.iterdir() if p.is_file()) == ["%C3%96%20%C3%BC.csv", "a%2Fb.csv",
                                                                  "serq-dump.json"]
    for name in ("a/b", "Ö ü"):
        r = _serq(tmp_path, "plot", "d", "--cdf", name, "-o", "a.svg")
        assert r.returncode == 0, r.stderr
    _refused(_serq(tmp_path, "plot", "d", "--cdf", "a%2Fb", "-o", "b.svg", here=serq_in_process),
             "error: d: no observe a%2Fb in the dump (observes there: a/b, Ö ü)")


def test_names_that_differ_in_case_are_each_their_own_file(tmp_path, serq_in_process):
    d = _dump(tmp_path, serq_in_process, {"response": "X", "other": "x"})
    assert sorted(p.name for p in d.iterdir() if p.is_file()) == ["%58.csv", "serq-dump.json", "x.csv"]
    xs = {}
    for name in ("X", "x"):
        r = _serq(tmp_path, "plot", "d", "--cdf", name, "-o", f"{name}{len(xs)}.svg")
        assert r.returncode == 0, r.stderr
        xs[name] = (tmp_path / f"{name}{len(xs)}.svg").read_bytes()
    assert xs["X"] != xs["x"]  # response and 2 * response: two curves


def test_the_rule_inverts_the_writers():
    from serq.files import file_names, file_of, name_of_file

    names = ["a/b", "..", "", "%", "X", "x", "con", "Ö", "y" * 300, "plain.name-1"]
    files = file_names(names)
    for name, stem in files.items():
        assert file_of(name, files.values()) == stem
        if "~" not in stem:
            assert name_of_file(stem) == name
    assert file_of("y", files.values()) is None and file_of("../x", ["x"]) is None


@pytest.mark.parametrize("args, message", [
    (["d", "--cdf", "response", "--x", "a", "--y", "b"], "--x and --cdf"),
    (["d", "--gauge", "q", "--y", "b"], "--y and --gauge"),
    (["r.csv", "--cdf", "x", "--x", "seed"], "--x and --cdf"),
])
def test_a_table_curves_flags_beside_a_distribution_are_refused(tmp_path, serq_in_process, args, message):
    _dump(tmp_path, serq_in_process)
    (tmp_path / "r.csv").write_text("session,turn,time,x\n0,0,1,2\n")
    # (the first as a child process; the others call serq.cli.main in the test's process)
    r = _serq(tmp_path, "plot", *args, "-o", "a.svg", here=None if args[2:3] == ["--x"] else serq_in_process)
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"error: {message} make two plots (--x/--y a sweep's table's curve): give one of them\n"
    assert not (tmp_path / "a.svg").exists()


@pytest.mark.parametrize("args, read", [(["--cdf", "response"], "d/response.csv"), (["--gauge", "q"], "d/gauge/q.csv")])
@pytest.mark.parametrize("how", ["symlink", "hardlink"])
def test_the_picture_is_never_written_over_a_dump_file_it_read(tmp_path, serq_in_process, args, read, how):
    # the plot's inputs were the folder alone: -o x.svg, a link to d/response.csv, replaced the samples
    # with the picture
    d = _dump(tmp_path, serq_in_process)
    before = (tmp_path / read).read_bytes()
    link = tmp_path / "x.svg"
    link.symlink_to(tmp_path / read) if how == "symlink" else link.hardlink_to(tmp_path / read)
    # (the symbolic link to the samples as a child process; the others in the test's process)
    here = None if how == "symlink" and args[0] == "--cdf" else serq_in_process
    _refused(_serq(tmp_path, "plot", "d", *args, "-o", "x.svg", here=here),
             f"error: x.svg: refusing to write over an input of this run (it is {read})")
    assert (tmp_path / read).read_bytes() == before
    assert (d / "other.csv").exists()
