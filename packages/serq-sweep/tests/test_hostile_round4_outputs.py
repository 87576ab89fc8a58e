"""The capacity search's table (``serq sweep --find … -o FILE``, ``serq_sweep.find(…, out=FILE)``) is an output
like every other: never one of the files its runs read, and refused before the search when the write
would refuse it.

``find_cli`` wrote the table with ``write_atomic(out, …)`` and no inputs: ``-o t.csv``, where ``t.csv`` is the
trace the program replays, replaced the trace with the search's table (``serq sweep -o`` and ``serq compare
-o`` refuse it), and an output in a folder that does not exist was refused only after the whole search.
The search now checks ``out`` before it runs (serq.files.check_output) and against what each point's run
reads (its program, its libraries, its trace; by any path, a symbolic link included) before that point
runs, and writes with those inputs. ``serq_sweep.find`` takes ``out=`` as ``serq_sweep.sweep`` does.

A sweep's own tables (``serq sweep -o``, ``--records``; ``serq_sweep.sweep(out=, records=)``) are checked the same
way before the first run: see the second part below.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.files import OutputError

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """let lambda = 0.5;
stage svc : fifo;
workload { arrive poisson(lambda); trace "t.csv"; }
session { set t0 = now; run svc (~exp(1)); observe response = now - t0; }
"""
TRACE = "session,turn,new,out,think,forced\n1,1,10,5,0,0\n2,1,12,5,0,0\n3,1,8,5,0,0\n"
ARGS = dict(seeds=(1,), horizon=100.0, warmup=0.0, workers=0, progress=False)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "q.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_text(TRACE)
    (tmp_path / "link.csv").symlink_to("t.csv")
    return tmp_path


def _find(folder: Path, out: str | Path | None) -> tuple[list[str], list[dict]]:
    return serq_sweep.find(str(folder / "q.sq"), "response.mean < 3", ("lambda", "0.1:0.9"), out=out, **ARGS)


@pytest.mark.parametrize("name", ["t.csv", "link.csv"])
def test_the_command_refuses_a_table_over_the_trace_its_runs_read(folder, name):
    r = subprocess.run([SERQ, "sweep", "q.sq", "--find", "response.mean < 3", "--over", "lambda", "0.1:0.9",
                        "--seeds", "1", "--horizon", "100", "--warmup", "0", "--workers", "0", "--no-progress",
                        "-o", name], capture_output=True, text=True, cwd=folder, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"error: {name}: refusing to write over an input of this run")
    assert len(r.stderr.splitlines()) == 1
    assert (folder / "t.csv").read_text() == TRACE and (folder / "link.csv").is_symlink()


@pytest.mark.parametrize("name", ["t.csv", "link.csv", "q.sq.csv"])
def test_the_api_refuses_an_input_by_any_path(folder, name):
    if name == "q.sq.csv":  # a hard link to the program, named as a table
        (folder / "q.sq.csv").hardlink_to(folder / "q.sq")
    with pytest.raises(OutputError, match="refusing to write over an input of this run"):
        _find(folder, folder / name)
    assert (folder / "t.csv").read_text() == TRACE and (folder / "q.sq").read_text() == PROGRAM


def test_an_output_the_write_would_refuse_is_refused_before_the_search(folder, monkeypatch):
    from serq_sweep import core

    def no_runs(*_a, **_k):  # pragma: no cover - the failure this test is about
        raise AssertionError("the search ran before its output was checked")

    monkeypatch.setattr(core, "execute", no_runs)
    with pytest.raises(OutputError, match="no folder"):
        _find(folder, folder / "nowhere" / "f.csv")
    (folder / "d.csv").mkdir()
    with pytest.raises(OutputError, match="is a folder"):
        _find(folder, folder / "d.csv")


def test_the_table_is_written_where_it_may_be(folder):
    columns, rows = _find(folder, folder / "f.csv")
    lines = (folder / "f.csv").read_text().splitlines()
    assert lines[0] == ",".join(columns) and len(lines) == 1 + len(rows) == 2
    assert columns[:5] == ["lambda", "outcome", "holds", "fails", "evaluations"]


# ---------------------------------------------------------------------------------------------------------------
# serq sweep -o / --records (serq_sweep.sweep(out=, records=)): what the writes would refuse, refused before
# anything runs. check_outputs looked only at the folder and at the files serq names: a table under /dev that
# does not exist ran the whole sweep and then failed, leaving the journal it had made there
# (/dev/x.csv.journal, as root), and a table that is a folder (the API, --fresh) ran every run first.
# ---------------------------------------------------------------------------------------------------------------

RECORDED = PROGRAM.replace("observe response = now - t0;", "observe response = now - t0; record req { lat = now - t0; }")


def _no_runs(monkeypatch) -> None:
    from serq_sweep import core

    def no_runs(*_a, **_k):  # pragma: no cover - the failure these tests are about
        raise AssertionError("the sweep ran before its outputs were checked")

    monkeypatch.setattr(core, "execute", no_runs)


def _sweep(folder: Path, **kw):
    (folder / "r.sq").write_text(RECORDED)
    return serq_sweep.sweep(str(folder / "r.sq"), sets={"lambda": "0.1,0.2"}, fresh=True,
                            **ARGS, **kw)


@pytest.fixture
def under_dev():
    """A name under /dev that does not exist; whatever a failing sweep made there is removed after."""
    import uuid

    name = f"/dev/serq-test-{uuid.uuid4().hex[:12]}.csv"
    yield name
    for made in (name, f"{name}.journal", name.replace(".csv", ".points.csv")):
        if Path(made).is_file() and not Path(made).is_symlink():
            Path(made).unlink()


@pytest.mark.skipif(not Path("/dev").is_dir(), reason="a /dev folder")
@pytest.mark.parametrize("which", ["out", "records"])
def test_a_table_under_dev_that_does_not_exist_is_refused_before_the_sweep(folder, monkeypatch, under_dev, which):
    _no_runs(monkeypatch)
    kw = {"out": under_dev} if which == "out" else {"out": str(folder / "f.csv"), "records": under_dev}
    with pytest.raises(OutputError, match="no such file"):
        _sweep(folder, **kw)
    assert not any(Path(p).exists() for p in (f"{under_dev}.journal", str(folder / "f.csv.journal")))


@pytest.mark.parametrize("which", ["out", "records"])
def test_a_table_that_is_a_folder_is_refused_before_the_sweep(folder, monkeypatch, which):
    _no_runs(monkeypatch)
    (folder / "d.csv").mkdir()
    kw = {"out": str(folder / "d.csv")} if which == "out" else {"out": str(folder / "f.csv"),
                                                                 "records": str(folder / "d.csv")}
    with pytest.raises(OutputError, match="is a folder"):
        _sweep(folder, **kw)


def test_the_command_refuses_a_table_under_dev_before_the_sweep(folder, under_dev):
    (folder / "r.sq").write_text(RECORDED)
    r = subprocess.run([SERQ, "sweep", "r.sq", "--set", "lambda=0.1,0.2", "--seeds", "1", "--horizon", "100",
                        "--warmup", "0", "--workers", "0", "--no-progress", "-o", under_dev], capture_output=True,
                       text=True, cwd=folder, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "run(s)" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"error: {under_dev}: no such file"), r.stderr
    assert not Path(f"{under_dev}.journal").exists()


def test_a_sweep_with_its_records_is_written_where_it_may_be(folder):
    frame, records = _sweep(folder, out=str(folder / "f.csv"), records=str(folder / "rec.csv"))
    assert (folder / "f.csv").is_file() and (folder / "f.points.csv").is_file() and (folder / "rec.csv").is_file()
    assert not (folder / "f.csv.journal").exists() and len(frame) == 2
