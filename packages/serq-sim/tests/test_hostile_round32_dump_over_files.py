"""``serq run --dump DIR`` (and ``serq_report.dump``) writes only over the files a dump wrote there.

The user names the folder, not its files: ``serq run p.sq --dump .`` replaced a ``response.csv`` of theirs in
the current folder with the samples of the observe ``response``, and a ``serq-dump.json`` of theirs with the
dump's list, as a sweep replaced a file of another program at its ``OUT.points.csv`` before it checked that
file's columns. A regular file there is now replaced only when it begins as a dump writes it (an observe's
``time,session,turn,value``, a gauge's ``time,value``, the list's ``{"serq-dump": …``) or is empty; another is
refused before the run, status 1, with nothing written (``serq.files.check_dumped``).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import serq_frontend
import serq_sim
from serq.files import OutputError
from serq_report import dump

PROGRAM = """stage s : fifo;
workload { arrive batch(2); }
gauge q = queue(s);
session { set t0 = now; run s (1); observe response = now - t0; }
run { horizon 20; }
"""


def _serq(*args, cwd, here=None):
    """``serq run --no-progress ARGS`` in ``cwd``, as a child process; given ``here`` (serq_in_process),
    serq.cli.main in the test's process, in that folder (a test of what is said and written, not of the
    process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here("run", "--no-progress", *args)
    return subprocess.run([sys.executable, "-m", "serq", "run", "--no-progress", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return tmp_path


@pytest.mark.parametrize(("file", "text", "why", "what"), [
    ("response.csv", "user data\n", "its first line is not time,session,turn,value", "the CSV of an observe"),
    ("response.csv", "time,value\n1,2\n", "its first line is not time,session,turn,value", "the CSV of an observe"),
    ("gauge/q.csv", "time,session,turn,value\n", "its first line is not time,value", "the CSV of a gauge"),
    ("serq-dump.json", '{"keep": 1}\n', 'not a JSON object beginning with "serq-dump"',
     "its list of the files it wrote"),
])
def test_a_file_no_dump_wrote_is_refused_before_the_run(folder, serq_in_process, file, text, why, what):
    (folder / "gauge").mkdir()
    (folder / file).write_text(text)
    before = _snapshot(folder)
    here = None if text == "user data\n" else serq_in_process  # (the first case as a child process)
    r = _serq("p.sq", "--dump", ".", cwd=folder, here=here)
    where = f"./{file}"
    assert r.returncode == 1, r.stderr
    assert r.stderr == (f"error: {where}: not a file a dump writes ({why}); a dump into {where.rsplit('/', 1)[0]} "
                        f"writes {what} there (remove it, or dump elsewhere)\n")
    assert r.stdout == ""  # refused before the run: no report
    assert _snapshot(folder) == before


def test_the_files_a_dump_wrote_are_replaced_by_the_next(folder, serq_in_process):
    out = folder / "out"
    (out / "gauge").mkdir(parents=True)
    # an earlier dump's files (a byte-order mark and CRLF line ends, as a spreadsheet saves them), an empty one
    (out / "response.csv").write_bytes(b"\xef\xbb\xbftime,session,turn,value\r\n9.0,0,0,9.0\r\n")
    (out / "gauge" / "q.csv").write_text("")
    (out / "serq-dump.json").write_text('{\n "serq-dump": 1,\n "observes": [],\n "gauges": []\n}\n')
    r = _serq("p.sq", "--dump", "out", cwd=folder)
    assert r.returncode == 0, r.stderr
    # by hand: two sessions at 0 on one server of work 1: responses 1 and 2; the queue 1 from 0 to 1, then 0
    assert (out / "response.csv").read_text() == "time,session,turn,value\n1.0,0,0,1.0\n2.0,1,0,2.0\n"
    assert (out / "gauge" / "q.csv").read_text().startswith("time,value\n")
    assert '"observes": [\n  "response"\n ]' in (out / "serq-dump.json").read_text()
    again = _snapshot(folder)
    # (the dump over its own files on serq.cli.main in this process, the first as a child process)
    assert _serq("p.sq", "--dump", "out", cwd=folder, here=serq_in_process).returncode == 0
    assert _snapshot(folder) == again  # a dump over its own files: the same bytes


def test_the_python_dump_refuses_it_too(folder):
    report = serq_sim.run(serq_frontend.compile(str(folder / "p.sq")))
    (folder / "d").mkdir()
    (folder / "d" / "response.csv").write_text("keep me\n")
    with pytest.raises(OutputError, match=r"d/response\.csv: not a file a dump writes"):
        dump(report, str(folder / "d"))
    assert (folder / "d" / "response.csv").read_text() == "keep me\n"
    assert sorted(p.name for p in (folder / "d").iterdir()) == ["response.csv"]
