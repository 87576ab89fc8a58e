"""A dump lists its own files, and ``serq plot DIR`` takes only those (serq.files.DUMP_MANIFEST).

``serq run b.sq --dump out`` into a folder where ``a.sq`` was dumped before leaves a.sq's CSVs of the
observes b.sq does not have (the user named the folder, not its files, and serq removes none), and
``serq plot out --cdf ttft`` drew a.sq's old samples, status 0, as if they were the last run's. The dump
now writes ``out/serq-dump.json`` last, listing the files it wrote; plot reads a name only from those,
and names a file left from an earlier dump as such. A folder without the list (a dump of an earlier serq,
or one cut short: the list goes first) is read as before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_report
import serq_report.csv as dump_module
import serq_sim

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

A = ("stage s : delay;\nworkload { arrive poisson(1); }\ngauge q = queue(s);\n"
     "session { set t0 = now; run s (1); observe ttft = now - t0; observe other = 2; }\nrun { horizon 20; }\n")
B = ("stage s : delay;\nworkload { arrive poisson(1); }\n"
     "session { set t0 = now; run s (2); observe lat = now - t0; }\nrun { horizon 20; }\n")


def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def _here(serq_in_process, cwd: Path, *args: str):
    """``serq ARGS…`` in this process, in ``cwd``: for the runs that make the dump a test then plots (what it
    checks is the serq plot run on it, a child process)."""
    with pytest.MonkeyPatch.context() as m:
        m.chdir(cwd)
        return serq_in_process(*args)


def test_the_dump_lists_what_it_wrote(tmp_path):
    serq_report.dump(serq_sim.run(serq_frontend.compile(source=A)), tmp_path / "out")
    assert json.loads((tmp_path / "out" / "serq-dump.json").read_text()) == {
        "serq-dump": 1, "observes": ["ttft", "other"], "gauges": ["q"]}


def test_plot_takes_no_file_an_earlier_dump_left(tmp_path, serq_in_process):
    (tmp_path / "a.sq").write_text(A)
    (tmp_path / "b.sq").write_text(B)
    assert _here(serq_in_process, tmp_path, "run", "a.sq", "--dump", "out").returncode == 0
    assert _here(serq_in_process, tmp_path, "run", "b.sq", "--dump", "out").returncode == 0
    assert (tmp_path / "out" / "ttft.csv").exists()  # left where it was: no file the user did not name is removed
    r = _serq(tmp_path, "plot", "out", "--cdf", "ttft", "-o", "t.png")
    assert r.returncode == 1 and not (tmp_path / "t.png").exists()
    assert r.stderr.strip() == ("error: out: no observe ttft in the dump (observes there: lat); ttft.csv there is "
                                "left from an earlier dump, not written by the last one")
    r = _serq(tmp_path, "plot", "out", "--gauge", "q", "-o", "q.png")
    assert r.returncode == 1 and "no gauge q in the dump (gauges there: none); q.csv there is left" in r.stderr
    r = _serq(tmp_path, "plot", "out", "--cdf", "lat", "-o", "l.png")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "l.png").stat().st_size > 0


def test_a_folder_without_the_list_is_read_as_before(tmp_path, serq_in_process):
    (tmp_path / "a.sq").write_text(A)
    assert _here(serq_in_process, tmp_path, "run", "a.sq", "--dump", "out").returncode == 0
    (tmp_path / "out" / "serq-dump.json").unlink()
    r = _serq(tmp_path, "plot", "out", "--cdf", "ttft", "-o", "t.png")
    assert r.returncode == 0, r.stderr


def test_a_list_that_is_no_dump_s_is_named(tmp_path, serq_in_process):
    (tmp_path / "a.sq").write_text(A)
    assert _here(serq_in_process, tmp_path, "run", "a.sq", "--dump", "out").returncode == 0
    (tmp_path / "out" / "serq-dump.json").write_text('{"serq-dump": 1, "observes": "ttft"}')
    r = _serq(tmp_path, "plot", "out", "--cdf", "ttft", "-o", "t.png")
    assert r.returncode == 1 and r.stderr == (  # at the value, the line quoted with a caret
        f"{Path('out') / 'serq-dump.json'}:1:30: error: not the list of files serq run --dump writes (no list "
        'of observes)\n  {"serq-dump": 1, "observes": "ttft"}\n' + " " * 31 + "^\n")


def test_a_dump_cut_short_leaves_the_earlier_one_whole(tmp_path, monkeypatch):
    report = serq_sim.run(serq_frontend.compile(source=A))
    serq_report.dump(report, tmp_path)
    other = serq_sim.run(serq_frontend.compile(source=A), seed=7)
    calls = []

    def failing(path, *a, **k):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", path)
        return write(path, *a, **k)

    write = dump_module._write_csv
    monkeypatch.setattr(dump_module, "_write_csv", failing)
    before = _files(tmp_path)
    with pytest.raises(OSError):
        serq_report.dump(other, tmp_path)
    # a dump is all or nothing: the earlier one is there whole, its list with it (the list went first, and
    # the files written before the failure were left, of another run)
    assert _files(tmp_path) == before and "serq-dump.json" in before
    monkeypatch.undo()
    serq_report.dump(other, tmp_path)
    assert _files(tmp_path) != before  # (the other run's samples)


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_list_is_an_output_of_the_run(tmp_path):
    """-o DIR/serq-dump.json beside --dump DIR: two outputs that are one file, refused before the run (the
    report was written, then replaced by the list)."""
    (tmp_path / "a.sq").write_text(A)
    r = _serq(tmp_path, "run", "a.sq", "--dump", "out", "-o", "out/serq-dump.json")
    assert r.returncode == 2  # a usage error (serq.files.SameOutputError)
    assert r.stderr.strip() == ("error: out/serq-dump.json: named by both -o and --dump; each output of a run "
                                "needs a file of its own")
    assert not (tmp_path / "out" / "serq-dump.json").exists()


# -- the list is read as every JSON file a user gives is (serq.jsonin.read_json) -----------------------------
# It was read with its own reader: a byte-order mark refused it, a key given twice, a byte that is not UTF-8
# or a JSON mistake was a bare parenthesis of Python's exception text, with no line, column or caret.

def _listing(tmp_path: Path, data: bytes) -> str:
    (tmp_path / "serq-dump.json").write_bytes(data)
    return str(tmp_path / "serq-dump.json")


def test_a_listing_with_a_byte_order_mark_is_read(tmp_path):
    from serq_sweep.plots import _dump_listing

    _listing(tmp_path, b'\xef\xbb\xbf{"serq-dump": 1, "observes": ["a"], "gauges": []}\n')
    assert _dump_listing(str(tmp_path), "observes") == {"a"}


@pytest.mark.parametrize("data, line, col, message", [
    # the second "observes" at offset 33 (column 34); the first at offset 17 (column 18)
    (b'{"serq-dump": 1, "observes": [], "observes": ["x"]}', 1, 34,
     'the key "observes" is given twice in one object (first at line 1, column 18)'),
    # the text ends at column 17 of line 2, where a key was wanted
    (b'{"serq-dump": 1,\n "observes": [],', 2, 17,
     "not JSON: Expecting property name enclosed in double quotes"),
    # 0xFF is the 32nd byte: column 32
    (b'{"serq-dump": 1, "observes": ["\xff"]}', 1, 32, "the file is not UTF-8 text (byte 0xFF)"),
])
def test_a_bad_listing_is_one_located_message(tmp_path, data, line, col, message):
    from serq.errors import UserError
    from serq_sweep.plots import _dump_listing

    path = _listing(tmp_path, data)
    with pytest.raises(UserError) as e:
        _dump_listing(str(tmp_path), "observes")
    head, quoted, caret = str(e.value).split("\n")
    assert head == f"{path}:{line}:{col}: error: {message}"
    assert quoted.startswith("  ") and caret == "  " + " " * (col - 1) + "^"


def test_a_huge_listing_is_refused_by_the_shared_bound(tmp_path):
    from serq.errors import UserError
    from serq.files import MAX_JSON
    from serq_sweep.plots import _dump_listing

    path = tmp_path / "serq-dump.json"
    with open(path, "wb") as f:  # sparse: nothing is written
        f.truncate(MAX_JSON + 1)
    with pytest.raises(UserError) as e:
        _dump_listing(str(tmp_path), "observes")
    assert str(e.value).startswith(f"error: {path}: cannot read: is ") and "more than a dump's list of files may have" \
        in str(e.value)
