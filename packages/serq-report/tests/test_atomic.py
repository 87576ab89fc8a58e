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
    """The files written before the failure are whole; the failing one is absent."""

    def gauge(name):
        raise Boom()

    monkeypatch.setattr(report, "gauge", gauge)
    with pytest.raises(Boom):
        serq_report.dump(report, tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["empty.csv", "gauge", "hit.csv", "price.csv", "ttft.csv"]
    assert os.listdir(tmp_path / "gauge") == []
    assert (tmp_path / "ttft.csv").read_text().count("\n") == 5
