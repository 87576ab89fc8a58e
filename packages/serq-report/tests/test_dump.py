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
    names = ["ttft.csv", "hit.csv", "price.csv", "empty.csv", "first_token.csv", "done.csv", "gauge/full.csv",
             "gauge/spread.csv"]  # the instants' samples after the observes'
    assert written == [os.path.join(folder, n) for n in names] + [os.path.join(folder, "serq-dump.json")]
    assert sorted(os.listdir(folder)) == sorted(["gauge", *names[:6], "serq-dump.json"])
    assert read(folder / "done.csv") == "time,session,turn,value\n101.0,1,0,101.0\n"
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


def _unescape(text: str) -> str:
    """The name a file name (not a hashed one) stands for: each ``%XX`` is a UTF-8 byte."""
    if text == "%":
        return ""
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "%":
            out.append(int(text[i + 1 : i + 3], 16))
            i += 3
        else:
            out += text[i].encode()
            i += 1
    return out.decode("utf-8", "surrogatepass")


NAMES = {  # a name, its file name
    "ttft": "ttft",
    "P.ttft": "P.ttft",
    "a-b_c.9": "a-b_c.9",
    "a/b": "a%2Fb",
    "a\\b": "a%5Cb",
    "..": "%2E.",
    ".hidden": "%2Ehidden",
    "": "%",
    "nul\0x": "nul%00x",
    "100%": "100%25",
    "~": "%7E",
    "con": "%63on",
    "Nul.txt": "%4Eul.txt",
    "com1": "%63om1",
    "console": "console",
    "é t": "%C3%A9%20t",
    "a:b*c?": "a%3Ab%2Ac%3F",
}


def test_file_names_of_awkward_names():
    got = dump_module.file_names(NAMES)
    assert got == NAMES
    for name, file in got.items():
        assert _unescape(file) == name


def test_names_differing_only_in_case_get_distinct_files():
    assert dump_module.file_names(["X", "x", "Ab", "aB", "ab", "Y"]) == {
        "X": "%58", "x": "x", "Ab": "%41b", "aB": "a%42", "ab": "ab", "Y": "Y"}


def test_a_very_long_name_is_cut_and_hashed():
    import hashlib

    long = "x" * 300
    other = "x" * 299 + "y"
    slashes = "/" * 300
    got = dump_module.file_names([long, other, slashes, "x" * 200, "x" * 201])
    assert got["x" * 200] == "x" * 200  # at the limit: kept whole
    assert got[long] == "x" * 183 + "~" + hashlib.sha256(long.encode()).hexdigest()[:16]
    assert got[other] == "x" * 183 + "~" + hashlib.sha256(other.encode()).hexdigest()[:16]
    # an escape is never cut: 61 whole escapes (183 characters), then the hash
    assert got[slashes] == "%2F" * 61 + "~" + hashlib.sha256(slashes.encode()).hexdigest()[:16]
    assert all(len(f) <= 200 for f in got.values()) and len(set(got.values())) == 5


def test_any_names_map_to_distinct_safe_file_names():
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    chars = st.sampled_from(list("aAbB.%~/\\\0 -_:éЖ😀") + ["\ud800"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.text(chars, max_size=80), max_size=8, unique=True))
    def check(names):
        got = dump_module.file_names(names)
        files = list(got.values())
        assert len({f.lower() for f in files}) == len(names)  # distinct, even ignoring case
        for name, f in got.items():
            assert re.fullmatch(r"[A-Za-z0-9_.%~-]+", f) and not f.startswith(".") and len(f) <= 200
            assert f.split(".", 1)[0].upper() not in ("CON", "PRN", "AUX", "NUL")
            if "~" not in f:
                assert _unescape(f) == name

    check()


def test_awkward_names_dump_inside_the_folder(report, tmp_path):
    stats = report.result.observes["ttft"]
    names = ["../x", "a/b", "..", "", "nul\0", "X", "x", "y" * 300]
    report.result.observes = {n: stats for n in names}
    report.result.instants = {}
    report.result.gauges = {"../g": report.result.gauges["full"]}
    report._observes = {n: ([1.0], [i], [0], [float(i)]) for i, n in enumerate(names)}
    report._gauges = {"../g": ([0.0], [1.0])}
    folder = tmp_path / "d"
    written = serq_report.dump(report, folder)
    files = dump_module.file_names(names)
    assert written == [os.path.join(folder, f"{files[n]}.csv") for n in names] + [
        os.path.join(folder, "gauge", "%2E.%2Fg.csv"), os.path.join(folder, "serq-dump.json")]
    assert sorted(os.listdir(tmp_path)) == ["d"]
    assert sorted(os.listdir(folder)) == sorted(["gauge", "serq-dump.json", *(f"{files[n]}.csv" for n in names)])
    for i, n in enumerate(names):
        assert read(folder / f"{files[n]}.csv") == f"time,session,turn,value\n1.0,{i},0,{float(i)!r}\n"
    assert read(folder / "gauge" / "%2E.%2Fg.csv") == "time,value\n0.0,1.0\n"


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
