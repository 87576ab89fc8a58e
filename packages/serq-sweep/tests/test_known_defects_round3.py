"""Known defects of a sweep's inputs.

``max_events`` (and ``max_samples``) of the Python API are held to the command line's check of
``--max-events`` (serq.options.Integer.problem, one function): ``sweep(max_events=10**5000)`` compiled its
points and then failed inside the JSON of its runs' keys (``ValueError: Exceeds the limit (4300 digits) for
integer string conversion``), a whole number the command line cannot be given (``int()`` reads at most 4300
digits, ``sys.get_int_max_str_digits()``). The API's other numbers (seeds, horizon, warmup) are refused as one
message each."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep import compare, find, sweep

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """let a = 1;
let b = 2;
def f() = a + b;
stage s : fifo;
workload { arrive poisson(1); }
session { run s (~exp(f() / 10)); }
run { horizon 20; }
"""
#: what a whole number of more than 4300 digits is told (Python's default limit of int() and str())
TOO_LONG = "more than 4300 digits, the most a whole number is read or written with"


@pytest.fixture
def program(tmp_path):
    assert sys.get_int_max_str_digits() == 4300  # the interpreter's default, which the messages name
    (tmp_path / "p.sq").write_text(PROGRAM)
    return str(tmp_path / "p.sq")


@pytest.mark.parametrize("name, what", [("max_events", "events"), ("max_samples", "samples")])
def test_a_count_too_long_to_write_is_refused_by_the_command_lines_check(program, name, what):
    # 10**5000 is 5001 digits; its bits: floor(5000 * log2(10)) + 1 = floor(16609.64) + 1 = 16610
    with pytest.raises(UserError) as info:
        sweep(program, workers=0, progress=False, **{name: 10**5000})
    assert str(info.value) == (f"error: {name}: an integer of 16610 bits is not a positive whole number of {what}: "
                               f"{TOO_LONG}")


def test_the_command_line_says_the_same_of_the_same_number(program):
    r = subprocess.run([SERQ, "sweep", program, "--workers", "0", "--no-progress", "--max-events",
                        "1" + "0" * 5000], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("error: invalid value for '--max-events': 10000000000000000000… (5001 characters) is not a "
                        f"positive whole number of events: {TOO_LONG} (see 'serq sweep --help')\n")


def test_the_refusal_comes_before_any_point_is_compiled(tmp_path):
    with pytest.raises(UserError, match="max_events: an integer of 16610 bits"):  # (no such file: not read)
        sweep(str(tmp_path / "missing.sq"), workers=0, progress=False, max_events=10**5000)


def test_the_longest_count_the_command_line_reads_is_taken(program):
    # 10**4300 - 1 is 4300 nines: int() reads it, and it keys its runs; 10**4300 has 4301 digits
    table = sweep(program, workers=0, progress=False, max_events=10**4300 - 1)
    assert list(table["status"]) == ["ok"]
    # its bits: floor(4300 * log2(10)) + 1 = floor(14284.3) + 1 = 14285
    with pytest.raises(UserError, match=f"an integer of 14285 bits is not a positive whole number of events: "
                                        f"{TOO_LONG}"):
        sweep(program, workers=0, progress=False, max_events=10**4300)


def test_compare_and_find_hold_their_bound_to_it_too(program):
    with pytest.raises(UserError, match=f"max_events: an integer of 16610 bits .*{TOO_LONG}"):
        compare(program, defs={"f": ["1", "2"]}, workers=0, progress=False, max_events=10**5000)
    with pytest.raises(UserError, match=f"max_events: an integer of 16610 bits .*{TOO_LONG}"):
        find(program, ["response.mean < 1"], over=("a", "1:4"), workers=0, progress=False, max_events=10**5000)


@pytest.mark.parametrize("arg, said", [
    ("seeds", "seeds: a seed is an integer from 0 to 2**64 - 1 (18446744073709551615), not an integer of 16610 bits"),
    ("horizon", "(an integer of 16610 bits): is not a positive number of seconds, or inf"),
    ("warmup", "(an integer of 16610 bits): is not a finite number of seconds, at least 0"),
])
def test_the_other_numbers_of_the_api_are_one_message_each(program, arg, said):
    with pytest.raises(UserError) as info:
        sweep(program, workers=0, progress=False, **{arg: 10**5000})
    assert said in str(info.value)


# A definition's values are told apart by their canonical form (docs/sweep.md, Axes): `--def 'f=a+b'` and
# `--def 'f= a + b'` made two points of one program, two rows of the same results (one key).

SAME = "both are 'a + b'"


def test_two_spellings_of_one_definition_are_one_point_given_twice(program):
    r = subprocess.run([SERQ, "sweep", program, "--workers", "0", "--no-progress", "--def", "f=a+b", "--def",
                        "f= a + b"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("error: the point f= a + b is given twice: --def f ' a + b' is 'a+b' written otherwise "
                        f"({SAME}), which runs the same runs twice; give each definition once\n")


@pytest.mark.parametrize("other", ["a + b", "a +\n  b", "a + b // the sum", "  a+b  ", "a\t+b"])
def test_blanks_line_breaks_and_comments_make_no_other_definition(program, other):
    with pytest.raises(UserError, match=f"is given twice: .*{re.escape(SAME)}"):
        sweep(program, defs={"f": ["a+b", other]}, workers=0, progress=False)


def test_each_spelling_alone_is_the_same_program(program):
    # what the refusal rests on: every spelling compiles to one program, whose runs have one key
    keys = {sweep(program, defs={"f": v}, workers=0, progress=False)["key"][0] for v in ("a+b", "a +\n b // x")}
    assert len(keys) == 1


def test_other_definitions_are_other_points(program):
    # a product is another body (another program); a minus sign another token sequence
    table = sweep(program, defs={"f": ["a+b", "a*b", "a - -b"]}, workers=0, progress=False)
    assert list(table["f"]) == ["a+b", "a*b", "a - -b"] and len(set(table["key"])) == 2  # 1 + 2 == 1 - -2
    assert list(table["status"]) == ["ok"] * 3


def test_find_holds_its_points_to_it_and_compare_takes_them_as_arms(program):
    with pytest.raises(UserError, match=f"is given twice: .*{re.escape(SAME)}"):
        find(program, ["response.mean < 10"], over=("a", "1:4"), defs={"f": ["a+b", " a + b"]}, workers=0,
             progress=False)
    # serq compare's arms may repeat (an A/A test): two spellings compare as one program, every figure equal in
    # every run of both arms (such figures are left out of its table: none is left)
    diff = compare(program, defs={"f": ["a+b", " a + b"]}, seeds="1..3", workers=0, progress=False)
    assert diff.empty and "diff" in diff.columns
