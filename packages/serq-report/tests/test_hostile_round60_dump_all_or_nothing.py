"""`serq run --dump DIR` that fails part way (a full disk: ENOSPC; a file-size limit, an I/O error) left the
files it had written so far over an earlier dump's, and that dump's list removed: DIR held a mix of two runs.
A dump is now all or nothing: every file is written whole beside its target and all are renamed into place
once all are written (serq.files.renamed_together); a failure removes what it wrote, leaves every file in DIR
as it was (an earlier dump's, the user's own) and the folders the dump made for itself are removed again.
The disk is made full by a stand-in for os.fsync that refuses the one file named."""

from __future__ import annotations

import errno
import os

import pytest

PROGRAM = """let rate = 1;
stage s : fifo;
pool p { cap 2; }
gauge held = used(p);
workload { arrive poisson(rate); }
session { set t0 = now; hold p (1) { run s (0.5); } observe y = now - t0; observe z = 2; }
run { horizon 50; seed 3; }
"""


@pytest.fixture
def full_at(monkeypatch):
    """``full_at(name)``: from now on, the fsync of a file whose name ends in ``name`` (its temporary file,
    ``.NAME.xxxxxxxx.tmp``) fails as a full disk's would."""
    real = os.fsync

    def arm(name):
        def fsync(fd):
            path = os.readlink(f"/proc/self/fd/{fd}")
            if os.path.basename(path).startswith(f".{name}.") and path.endswith(".tmp"):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(fd)

        monkeypatch.setattr(os, "fsync", fsync)

    return arm


def _tree(folder):
    """Every file under ``folder``: its path (relative) and its bytes."""
    found = {}
    for root, _dirs, files in os.walk(folder):
        for f in files:
            path = os.path.join(root, f)
            with open(path, "rb") as fh:
                found[os.path.relpath(path, folder)] = fh.read()
    return found


def test_a_failed_dump_leaves_the_earlier_one_whole(tmp_path, monkeypatch, serq_in_process, full_at):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    first = serq_in_process("run", "p.sq", "--no-progress", "--dump", "out")
    assert first.returncode == 0, first.stderr
    (tmp_path / "out" / "notes.txt").write_text("the user's own\n")
    before = _tree(tmp_path / "out")
    assert sorted(before) == ["gauge/held.csv", "notes.txt", "serq-dump.json", "y.csv", "z.csv"]
    for failing, said in [("z.csv", "out/z.csv"), ("held.csv", "out/gauge/held.csv"),
                          ("serq-dump.json", "out/serq-dump.json")]:
        full_at(failing)
        r = serq_in_process("run", "p.sq", "--no-progress", "--seed", "4", "--dump", "out")
        assert r.returncode == 1
        assert r.stderr == f"error: {said}: No space left on device\n"
        assert _tree(tmp_path / "out") == before, failing  # (no file of the second run, no temporary file)
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    again = serq_in_process("run", "p.sq", "--no-progress", "--seed", "4", "--dump", "out")
    assert again.returncode == 0, again.stderr
    after = _tree(tmp_path / "out")
    assert sorted(after) == sorted(before) and after["notes.txt"] == before["notes.txt"]
    assert after["y.csv"] != before["y.csv"]  # (the second seed's samples: the same names, other values)


def test_a_failed_dump_removes_the_folders_it_made(tmp_path, monkeypatch, serq_in_process, full_at):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    full_at("held.csv")
    r = serq_in_process("run", "p.sq", "--no-progress", "--dump", "new/out")
    assert (r.returncode, r.stderr) == (1, "error: new/out/gauge/held.csv: No space left on device\n")
    assert sorted(os.listdir(tmp_path)) == ["p.sq"]
    # the report written into the dump's folder keeps that folder (with the report alone in it)
    r = serq_in_process("run", "p.sq", "--no-progress", "--dump", "new", "-o", "new/r.txt")
    assert r.returncode == 1
    assert sorted(os.listdir(tmp_path / "new")) == ["r.txt"]


def test_the_api_dump_is_all_or_nothing(tmp_path, full_at):
    import serq_frontend
    import serq_sim
    from serq_report import dump

    (tmp_path / "p.sq").write_text(PROGRAM)
    report = serq_sim.run(serq_frontend.compile(tmp_path / "p.sq"))
    written = dump(report, tmp_path / "d")
    assert [os.path.relpath(p, tmp_path / "d") for p in written] == ["y.csv", "z.csv", "gauge/held.csv",
                                                                      "serq-dump.json"]
    before = _tree(tmp_path / "d")
    other = serq_sim.run(serq_frontend.compile(tmp_path / "p.sq"), seed=9)
    full_at("serq-dump.json")
    with pytest.raises(OSError) as e:
        dump(other, tmp_path / "d")
    assert e.value.errno == errno.ENOSPC and e.value.filename.endswith("serq-dump.json")
    assert _tree(tmp_path / "d") == before
    with pytest.raises(OSError):
        dump(other, tmp_path / "e" / "f")
    assert not (tmp_path / "e").exists()
