"""``serq_report.render`` and ``serq_report.dump`` check the type of their arguments at the call, a
TypeError naming the argument: ``render(report, 3)`` said "unknown report format 3" (a UserError, as if a
format's name were misspelt), ``dump(report, 3)`` was ``os.fspath``'s TypeError naming nothing, and
``dump(..., inputs="p.sq")`` took the letters of the path for the files the run read (``inputs=3``:
"'int' object is not iterable"). ``format_number`` takes a real number."""

from __future__ import annotations

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq_report import dump, format_number, render

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (0.5); observe y = now - t0; }
run { horizon 10; warmup 0; seed 1; arrivals 3; }
"""


@pytest.fixture(scope="module")
def report():
    return serq_sim.run(serq_frontend.compile(source=PROGRAM))


@pytest.mark.parametrize("call, said", [
    (lambda r, d: render(r, 3), "fmt must be a report format's name (a str), not int"),
    (lambda r, d: render(r, None), "fmt must be a report format's name (a str), not NoneType"),
    (lambda r, d: dump(r, 3), "dump's folder is a path (str or os.PathLike), not int"),
    (lambda r, d: dump(r, str(d), inputs=3), "dump's inputs are a list of paths, not int"),
    (lambda r, d: dump(r, str(d), inputs="p.sq"), "dump's inputs are a list of paths, not str"),
])
def test_a_wrong_type_is_a_type_error_naming_it(report, tmp_path, call, said):
    with pytest.raises(TypeError) as info:
        call(report, tmp_path / "d")
    assert str(info.value) == said
    assert not (tmp_path / "d").exists()  # refused before anything is written


@pytest.mark.parametrize("x, kind, said", [
    ("1.5", TypeError, "format_number takes a real number, not str"),
    ("x", TypeError, "format_number takes a real number, not str"),
    (None, TypeError, "format_number takes a real number, not NoneType"),
    (True, TypeError, "format_number takes a real number, not bool"),
    (10**400, ValueError, "format_number: an integer of 1329 bits is beyond the doubles"),
])
def test_format_number_takes_a_real_number(x, kind, said):
    # float() read "1.5" and True as numbers, said "could not convert string to float" of "x", and an int
    # beyond the doubles was its OverflowError
    with pytest.raises(kind) as info:
        format_number(x)
    assert type(info.value) is kind and str(info.value) == said


def test_format_number_of_numbers():
    assert [format_number(v) for v in (np.float32(0.5), np.int64(3), -0.0, 1234567.0, float("nan"))] == [
        "0.5", "3", "0", "1.23457e+06", "nan"]
