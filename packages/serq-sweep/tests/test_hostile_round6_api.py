"""What a sweep is given, on the command line or through the Python API, is one message naming it when it
is no value of its kind.

``--set x=0:1e308:1e-308`` (finite bounds and step whose count leaves the doubles) was an OverflowError
traceback from counting the range (``math.floor(inf)``). Through ``serq_sweep.sweep``: a bool or None for a
``sets`` value was ``'bool' object is not iterable``, an int beyond the doubles an OverflowError, an int for
a ``defs`` value ``'int' object is not iterable``; ``seeds=[1.5]`` and ``seeds=[True]`` ran the seed 1
(``int()``), which ``serq_sim.run`` refuses; a str horizon or warmup was a TypeError of a comparison and
``arrivals=2.5`` msgspec's ValidationError of the IR (serq.loading.apply_run_overrides, which every command
shares, now checks the types).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq.loading import apply_run_overrides
from serq_sweep.axes import def_axes, parse_range, seed_values, set_axes
from serq_sweep.core import plan

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 20; seed 1; }
"""


@pytest.mark.parametrize("text", ["0:1e308:1e-308", "-1e308:1e308:1", "-1e308:1e308"])
def test_a_range_whose_count_leaves_the_doubles_is_one_message(text):
    with pytest.raises(UserError) as info:
        parse_range(text, "--set x")
    assert str(info.value) == (f"error: --set x: {text!r}: more values than a double counts, more than "
                               "1000000")


@pytest.mark.timeout(60)
def test_the_command_says_it_without_a_traceback(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--set", "lam=0:1e308:1e-308", "--workers", "0", "--no-progress"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stderr  # as any bad range (0:1:0): a usage error
    assert "Traceback" not in r.stderr
    assert r.stderr.strip() == ("error: --set lam: '0:1e308:1e-308': more values than a double counts, more "
                                "than 1000000")


def test_ranges_within_the_doubles_still_count():
    assert parse_range("0:1:0.25", "--set x") == [0.0, 0.25, 0.5, 0.75, 1.0]
    with pytest.raises(UserError, match="about 1.0e\\+300 values"):
        parse_range("0:1:1e-300", "--set x")


@pytest.mark.parametrize("value, said", [
    (True, "--set x: True is not a number"),
    (None, "--set x: None is not a number"),
    ([0.5, None], "--set x: None is not a number"),
    (10**400, "--set x: an integer of 1329 bits is beyond the doubles (at most about 1.8e308)"),
    ([1, 10**400], "--set x: an integer of 1329 bits is beyond the doubles (at most about 1.8e308)"),
    (math.nan, "--set x: NaN is not a value to sweep"),
])
def test_a_sets_value_that_is_no_number_is_one_message(value, said):
    with pytest.raises(UserError) as info:
        set_axes({"x": value})
    assert str(info.value) == f"error: {said}"


def test_numbers_lists_and_ranges_are_taken():
    import numpy as np

    assert set_axes({"x": 2})[0].values == (2.0,)
    assert set_axes({"x": np.float64(0.5)})[0].values == (0.5,)
    assert set_axes({"x": [1, "2:3", np.int64(7)]})[0].values == (1.0, 2.0, 3.0, 7.0)
    assert set_axes({"x": (v for v in (1, 2))})[0].values == (1.0, 2.0)


def test_a_defs_value_that_is_no_text_is_one_message():
    with pytest.raises(UserError) as info:
        def_axes({"svc": 3})
    assert str(info.value) == "error: --def svc: 3 is not an expression (a string) or a list of them"
    assert def_axes({"svc": ["~exp(1)", "~det(1)"]})[0].values == ("~exp(1)", "~det(1)")


@pytest.mark.parametrize("seeds", [[1.5], [True], [1.0], ["1"], 2.5, [-1], [2**64]])
def test_a_seed_that_is_no_whole_number_is_refused_not_truncated(seeds):
    with pytest.raises(UserError, match="a seed is an integer from 0 to 2\\*\\*64 - 1"):
        seed_values(seeds)


def test_whole_seeds_are_taken():
    import numpy as np

    assert seed_values([3, 1, np.int64(7)]) == [3, 1, 7]
    assert seed_values(5) == [5]
    with pytest.raises(UserError, match="seed 3 is given twice"):
        seed_values([3, 3])


@pytest.mark.parametrize("kw, said", [
    ({"horizon": "10"}, "--horizon '10': is not a positive number of seconds, or inf"),
    ({"horizon": True}, "--horizon True: is not a positive number of seconds, or inf"),
    ({"horizon": 10**400}, "--horizon (an integer of 1329 bits): is not a positive number of seconds, or inf"),
    ({"warmup": "1"}, "--warmup '1': is not a finite number of seconds, at least 0"),
    ({"arrivals": 2.5}, "--arrivals 2.5: must be a positive integer"),
    ({"arrivals": True}, "--arrivals True: must be a positive integer"),
])
def test_run_settings_of_the_wrong_type_are_one_message(tmp_path, kw, said):
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError) as info:
        plan([str(tmp_path / "p.sq")], **kw)
    assert str(info.value) == f"error: {said}"


def test_run_settings_of_the_right_type_apply(tmp_path):
    import numpy as np
    import serq_frontend

    program = serq_frontend.compile(source=PROGRAM)
    run = apply_run_overrides(program, horizon=5, warmup=1, arrivals=np.int64(3)).run
    assert (run.horizon, run.warmup, run.arrivals) == (5.0, 1.0, 3)
    assert type(run.arrivals) is int
    assert apply_run_overrides(program, horizon=math.inf).run.horizon == "inf"
