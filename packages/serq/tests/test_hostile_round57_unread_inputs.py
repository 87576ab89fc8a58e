"""A file `serq metrics` or `serq plot` reads that cannot be read (one that does not exist, a loop of symbolic
links, a folder that cannot be searched) was click's usage error, `error: invalid value for 'RECORDS': File
'r.csv' does not exist (see 'serq metrics --help')`, status 2 (click's `exists=True` of serq.options.Path),
where `serq run`, `serq check`, `serq sweep`, `serq fmt` and a missing trace say `error: NAME: cannot read:
REASON`, status 1. Both now say it as the rest do (serq.options.Path raises serq's UserError), the missing name
that is not ASCII told its look-alike as `serq run`'s is; a folder given as RECORDS stays a usage error, as
`serq run FOLDER` is."""

from __future__ import annotations

import os

import pytest

COMMANDS = {"metrics": ["metrics", "{}"], "plot": ["plot", "{}", "--cdf", "ttft", "-o", "c.svg"],
            "run": ["run", "{}"]}


def _said(serq, command: str, name: str):
    return serq(*[a.format(name) for a in COMMANDS[command]])


@pytest.mark.parametrize("command", ["metrics", "plot"])
def test_a_missing_file_is_said_as_serq_run_says_it(tmp_path, monkeypatch, serq_in_process, command):
    pytest.importorskip("serq_sweep")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.csv").write_text("x\n")
    os.symlink("b.csv", tmp_path / "a.csv")
    os.symlink("a.csv", tmp_path / "b.csv")
    for name, why in (("nope.csv", "No such file or directory"),
                      ("a.csv", "Too many levels of symbolic links"),
                      ("no/such/r.csv", "No such file or directory"),
                      ("q.csv/r.csv", "Not a directory")):
        r = _said(serq_in_process, command, name)
        assert (r.returncode, r.stdout, r.stderr) == (1, "", f"error: {name}: cannot read: {why}\n")
    # the look-alike of a name pasted with a Cyrillic letter, as serq run tells it (U+0071 q vs U+051B)
    r = _said(serq_in_process, command, "\u051b.csv")
    assert r.returncode == 1
    assert r.stderr == ("error: \u051b.csv: cannot read: No such file or directory (did you mean `q.csv`? the name "
                        "given is not ASCII: its `\u051b` is U+051B CYRILLIC SMALL LETTER QA)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv", "q.csv"]  # (no c.svg)


def test_the_message_is_serq_runs_own(tmp_path, monkeypatch, serq_in_process):
    # the same name unread by serq run (a loader's suffix) and by metrics/plot: the same line, the same status
    pytest.importorskip("serq_sweep")
    monkeypatch.chdir(tmp_path)
    ran = _said(serq_in_process, "run", "gone.sq")
    assert ran.returncode == 1 and ran.stderr.startswith("error: gone.sq: cannot read: ")
    for command in ("metrics", "plot"):
        r = _said(serq_in_process, command, "gone.sq")
        assert (r.returncode, r.stderr) == (ran.returncode, ran.stderr)


def test_a_folder_given_as_records_stays_a_usage_error(tmp_path, monkeypatch, serq_in_process):
    pytest.importorskip("serq_sweep")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").mkdir()
    (tmp_path / "d.sq").mkdir()
    r = _said(serq_in_process, "metrics", "d.csv")
    assert (r.returncode, r.stderr) == (2, "error: invalid value for 'RECORDS': File 'd.csv' is a directory (see "
                                           "'serq metrics --help')\n")
    assert _said(serq_in_process, "run", "d.sq").returncode == 2
