from __future__ import annotations

import os

import numpy as np
import pytest
import serq_report
from serq import files as atomic  # serq_report writes through the host's atomic files
from serq_report import csv as dump_module


class Boom(Exception):
    pass


def test_write_atomic(tmp_path):
    serq_report.write_atomic(tmp_path / "a.txt", "one\ntwo ±\n")
    assert (tmp_path / "a.txt").read_bytes() == "one\ntwo ±\n".encode()
    serq_report.write_atomic(str(tmp_path / "a.txt"), b"\x00bytes")
    assert (tmp_path / "a.txt").read_bytes() == b"\x00bytes"
    assert os.listdir(tmp_path) == ["a.txt"]
    with pytest.raises(TypeError):
        serq_report.write_atomic(tmp_path / "b.txt", 3)


def test_permissions_follow_the_umask(tmp_path):
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    old = os.umask(0o022)
    try:
        serq_report.write_atomic(tmp_path / "a", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o644


def test_text_mode_writes_lf(tmp_path):
    with serq_report.open_atomic(tmp_path / "t", "w") as f:
        f.write("a\nb\n")
    assert (tmp_path / "t").read_bytes() == b"a\nb\n"
    with pytest.raises(ValueError):
        with serq_report.open_atomic(tmp_path / "t", "a"):
            pass


@pytest.mark.parametrize("exc", [Boom, KeyboardInterrupt])
@pytest.mark.parametrize("mode", ["w", "wb"])
def test_a_failure_in_the_block_leaves_the_old_file(tmp_path, exc, mode):
    target = tmp_path / "report.txt"
    target.write_bytes(b"old\n")
    with pytest.raises(exc):
        with serq_report.open_atomic(target, mode) as f:
            f.write("half" if mode == "w" else b"half")
            f.flush()
            raise exc()
    assert target.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["report.txt"]


def test_a_failing_rename_leaves_nothing(tmp_path, monkeypatch):
    def replace(src, dst):
        assert os.path.getsize(src) == 4  # the whole data was in the temporary file
        raise OSError("disk gone")

    monkeypatch.setattr(atomic.os, "replace", replace)
    with pytest.raises(OSError, match="disk gone"):
        serq_report.write_atomic(tmp_path / "x", b"data")
    assert os.listdir(tmp_path) == []


def test_a_failing_fsync_leaves_nothing(tmp_path, monkeypatch):
    def fsync(fd):
        raise OSError("fsync failed")

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    with pytest.raises(OSError, match="fsync failed"):
        serq_report.write_atomic(tmp_path / "x", b"data")
    assert os.listdir(tmp_path) == []


def test_dump_interrupted_mid_file(report, tmp_path, monkeypatch):
    """The samples fail to format after the first chunk has been written: no ttft.csv, no temp file."""
    n = 100
    report._observes["ttft"] = (np.arange(n, dtype=float), np.arange(n), np.zeros(n, dtype=int), np.ones(n))
    monkeypatch.setattr(dump_module, "CHUNK", 10)
    real = dump_module.format_column
    calls = 0

    def format_column(a):
        nonlocal calls
        calls += 1
        if calls > 4 * 3:  # the fourth chunk
            raise Boom()
        return real(a)

    monkeypatch.setattr(dump_module, "format_column", format_column)
    with pytest.raises(Boom):
        serq_report.dump(report, tmp_path)
    assert os.listdir(tmp_path) == []


def test_dump_fails_on_a_later_file(report, tmp_path, monkeypatch):
    """A dump is all or nothing (serq.files.renamed_together): the files written before the failure are
    removed with it, and the gauge folder it made (the dump's folder was there before it)."""

    def gauge(name):
        raise Boom()

    monkeypatch.setattr(report, "gauge", gauge)
    with pytest.raises(Boom):
        serq_report.dump(report, tmp_path)
    assert os.listdir(tmp_path) == []


# -- what each kind of target gets (serq.files' rules) ---------------------------------------------------


posix = pytest.mark.skipif(os.name != "posix", reason="POSIX files: FIFOs, symbolic links, /dev")


@posix
def test_a_fifo_is_written_through_not_replaced(tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    serq_report.write_atomic(fifo, "through the pipe\n")
    reader.join(10)
    assert got == [b"through the pipe\n"]
    assert os.path.exists(fifo) and not os.path.isfile(fifo)  # still a FIFO
    assert os.listdir(tmp_path) == ["pipe"]  # no temporary file left


@posix
def test_a_character_device_is_written_through(tmp_path):
    # through a link in tmp_path, so that a writer that renamed over its target would replace the link
    # and never the device itself
    (tmp_path / "null").symlink_to("/dev/null")
    before = os.stat("/dev/null")
    serq_report.write_atomic(tmp_path / "null", "gone\n")
    after = os.stat("/dev/null")
    assert os.readlink(tmp_path / "null") == "/dev/null"
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)
    assert os.listdir(tmp_path) == ["null"]


@posix
def test_a_symlink_stays_a_link_and_its_target_is_written(tmp_path):
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "link").symlink_to("real.txt")
    serq_report.write_atomic(tmp_path / "link", "new\n")
    assert os.readlink(tmp_path / "link") == "real.txt"
    assert (tmp_path / "real.txt").read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == ["link", "real.txt"]


@posix
def test_a_dangling_symlink_creates_its_target(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to("sub/made.txt")
    serq_report.write_atomic(tmp_path / "link", "x")
    assert os.path.islink(tmp_path / "link")
    assert (tmp_path / "sub" / "made.txt").read_text() == "x"


@posix
def test_replacing_a_file_keeps_its_permissions(tmp_path):
    f = tmp_path / "secret.txt"
    f.write_text("old")
    f.chmod(0o600)
    old = os.umask(0o022)
    try:
        serq_report.write_atomic(f, "new")
    finally:
        os.umask(old)
    assert f.read_text() == "new" and f.stat().st_mode & 0o777 == 0o600


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(atomic.OutputError, match="is a folder"):
        serq_report.write_atomic(tmp_path, "x")


def test_an_input_is_never_written_by_any_path(tmp_path):
    prog = tmp_path / "prog.sq"
    prog.write_text("program\n")
    with pytest.raises(atomic.OutputError, match="refusing to write over an input"):
        serq_report.write_atomic(prog, "report", inputs=[str(prog)])
    if os.name == "posix":
        (tmp_path / "alias").symlink_to("prog.sq")
        os.link(prog, tmp_path / "hard")
        for other in ("alias", "hard"):
            with pytest.raises(atomic.OutputError, match=r"\(it is .*prog\.sq\)"):
                serq_report.write_atomic(tmp_path / other, "report", inputs=[str(prog)])
    assert prog.read_text() == "program\n"
    serq_report.write_atomic(tmp_path / "new.txt", "fine", inputs=[str(prog)])  # another path is fine
    assert (tmp_path / "new.txt").read_text() == "fine"


def test_dump_refuses_to_write_over_an_input_before_writing_anything(report, tmp_path):
    victim = tmp_path / "hit.csv"  # the trace the run read, say
    victim.write_text("session,turn\n")
    with pytest.raises(atomic.OutputError, match="refusing"):
        serq_report.dump(report, tmp_path, inputs=[str(victim)])
    assert victim.read_text() == "session,turn\n"
    assert os.listdir(tmp_path) == ["hit.csv"]


@posix
def test_a_file_serq_names_itself_is_never_written_through_a_link_or_a_fifo(tmp_path):
    from serq.files import OutputError, open_own_append

    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    (tmp_path / "link").symlink_to(victim)
    os.mkfifo(tmp_path / "pipe")
    for name in ("link", "pipe"):
        with pytest.raises(OutputError, match="serq names this file itself"):
            serq_report.write_atomic(tmp_path / name, "x", own=True)
        with pytest.raises(OutputError, match="serq names this file itself"):
            open_own_append(tmp_path / name)  # returns at once: a FIFO is never opened
    assert victim.read_text() == "keep\n" and os.path.islink(tmp_path / "link")
    serq_report.write_atomic(tmp_path / "new", "a", own=True)  # new and regular files are written
    serq_report.write_atomic(tmp_path / "new", "b", own=True)
    with open_own_append(tmp_path / "new") as f:
        f.write("c")
    assert (tmp_path / "new").read_text() == "b\nc"  # an append starts a line (a journal's torn line)


@posix
@pytest.mark.parametrize("through_link", [False, True])
def test_a_missing_path_under_dev_is_not_created(tmp_path, through_link):
    # every path under /dev is written through, never created: a name there that does not exist
    # (`--records /dev/null.csv`), named directly or through a link, is refused and nothing appears
    missing = f"/dev/serq-test-missing-{os.getpid()}-{int(through_link)}.csv"
    target = missing
    if through_link:
        (tmp_path / "link").symlink_to(missing)
        target = str(tmp_path / "link")
    try:
        with pytest.raises(atomic.OutputError, match="never created"):
            serq_report.write_atomic(target, "x\n")
        assert not os.path.lexists(missing)
        assert not any(n.startswith(f".serq-test-missing-{os.getpid()}") for n in os.listdir("/dev"))
    finally:
        for leftover in [missing, *(f"/dev/{n}" for n in os.listdir("/dev")
                                    if n.startswith(f".serq-test-missing-{os.getpid()}"))]:
            if os.path.lexists(leftover):
                os.unlink(leftover)
