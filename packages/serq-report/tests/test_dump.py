from __future__ import annotations

import os

import numpy as np
import pytest
import serq_report
from serq_report import csv as dump_module
from serq_report.csv import format_column


def read(path) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8")


def test_files_and_content(report, tmp_path):
    folder = tmp_path / "new" / "dump"  # created with its parents
    written = serq_report.dump(report, folder)
    names = ["ttft.csv", "hit.csv", "price.csv", "empty.csv", "gauge/full.csv", "gauge/spread.csv"]
    assert written == [os.path.join(folder, n) for n in names]
    assert sorted(os.listdir(folder)) == sorted(["gauge", *names[:4]])
    assert read(folder / "ttft.csv") == (
        "time,session,turn,value\n100.5,1,0,0.1\n101.0,2,0,0.25\n101.0,2,1,1e-05\n250.125,17,3,12.0\n"
    )
    assert read(folder / "hit.csv") == "time,session,turn,value\n100.5,1,0,0\n300.0,3,2,1\n"
    assert (
        read(folder / "price.csv") == "time,session,turn,value\n0.30000000000000004,0,0,nan\n-0.0,1,0,-inf\n"
    )
    assert read(folder / "empty.csv") == "time,session,turn,value\n"
    assert read(folder / "gauge" / "full.csv") == "time,value\n0.0,0\n100.0,1\n123.456,0\n"
    assert read(folder / "gauge" / "spread.csv") == "time,value\n0.0,2.5\n1e-09,1e+300\n"


def test_no_gauge_folder_without_gauges(report, tmp_path):
    report.result.gauges = {}
    serq_report.dump(report, tmp_path)
    assert not (tmp_path / "gauge").exists()


def test_deterministic(report, tmp_path):
    serq_report.dump(report, tmp_path / "a")
    serq_report.dump(report, tmp_path / "b")
    for name in ["ttft.csv", "hit.csv", "price.csv", "empty.csv", "gauge/full.csv", "gauge/spread.csv"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_floats_round_trip_exactly():
    rng = np.random.default_rng(3)
    a = np.concatenate(
        [rng.standard_normal(1000) * 10.0 ** rng.integers(-300, 300, 1000), [0.0, -0.0, 5e-324]]
    )
    cells = format_column(a)
    assert cells == [repr(x) for x in a.tolist()]
    back = np.array([float(c) for c in cells])
    assert np.array_equal(back.view(np.uint64), a.view(np.uint64))


def test_integer_and_bool_columns():
    assert format_column(np.array([3, -1, 3, 2**62], dtype=np.int64)) == ["3", "-1", "3", str(2**62)]
    assert format_column(np.array([2**64 - 1], dtype=np.uint64)) == [str(2**64 - 1)]
    assert format_column(np.array([True, False])) == ["1", "0"]
    assert format_column(np.array([1.5], dtype=np.float32)) == ["1.5"]
    with pytest.raises(TypeError):
        format_column(np.array(["a"]))


def test_chunks_join_up(report, tmp_path, monkeypatch):
    n = 1000
    times = np.linspace(0.0, 1.0, n)
    report._observes["ttft"] = (times, np.arange(n), np.arange(n) % 7, times * 3)
    serq_report.dump(report, tmp_path / "whole")
    monkeypatch.setattr(dump_module, "CHUNK", 7)
    serq_report.dump(report, tmp_path / "chunked")
    whole = read(tmp_path / "whole" / "ttft.csv")
    assert whole == read(tmp_path / "chunked" / "ttft.csv")
    lines = whole.splitlines()
    assert len(lines) == n + 1
    assert lines[-1] == f"1.0,{n - 1},{(n - 1) % 7},3.0"


def test_columns_of_different_lengths(report, tmp_path):
    report._observes["ttft"] = ([1.0, 2.0], [1], [0, 0], [1.0, 2.0])
    with pytest.raises(ValueError, match="observe ttft: columns of different lengths"):
        serq_report.dump(report, tmp_path)
    assert not (tmp_path / "ttft.csv").exists()


def test_bad_names_are_refused_before_writing(report, tmp_path):
    report.result.observes = {"ok": report.result.observes["ttft"], "../x": report.result.observes["ttft"]}
    with pytest.raises(ValueError, match="not usable as a file name"):
        serq_report.dump(report, tmp_path / "d")
    assert not (tmp_path / "d").exists()


def test_a_bare_result_has_no_samples(result, tmp_path):
    with pytest.raises(TypeError, match="bare Result"):
        serq_report.dump(result, tmp_path)


def test_a_million_samples(report, tmp_path):
    n = 1_000_000
    rng = np.random.default_rng(0)
    times = np.cumsum(rng.exponential(0.01, n))
    report._observes["ttft"] = (
        times,
        rng.integers(0, 10**5, n),
        rng.integers(0, 50, n),
        rng.lognormal(size=n),
    )
    serq_report.dump(report, tmp_path)
    with open(tmp_path / "ttft.csv") as f:
        assert sum(1 for _ in f) == n + 1
