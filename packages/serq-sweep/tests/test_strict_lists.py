"""A sweep's lists and ranges, its seeds, --over and --find read numbers in serQ's syntax (serq.numbers), and
a list has no empty item: `serq sweep --set x=1,,2` swept 1 and 2, dropping the empty item silently (so did
a leading or trailing comma, and `--seeds 1,,2`), and `--set x=1_000` swept 1000, `--set x=١٢` 12. Each is
now one message naming the option and the item, status 1 (the status of every bad --set/--seeds value), no
traceback; `--find 'x <= 1.2.3'` ended in a ValueError traceback. The forms the docs show still work.

The refusals are checked on serq.cli.main in the test's process (serq_in_process, as a shell runs the command);
the first empty item of sweep and of compare, the sweep over a list and the plots run ``serq`` as a child
process, as a shell does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq.numbers import NUMBER_HINT, WHOLE_HINT
from serq_sweep.axes import parse_range, parse_seeds
from serq_sweep.search import parse_condition

SERQ = str(Path(sys.executable).parent / "serq")
ROOT = Path(__file__).resolve().parents[3]
MG1 = str(ROOT / "examples/single-turn/mg1.sq")
EMPTY = "(a list is 1,2,4: no empty item before, between or after its commas)"


def _serq(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=120, cwd=cwd,
                          stdin=subprocess.DEVNULL)


def _refused(r, status: int, message: str) -> None:
    assert r.returncode == status and r.stdout == "", (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and r.stderr == message + "\n", r.stderr


@pytest.mark.parametrize("value, k, n", [("1,,2", 2, 3), (",1", 1, 2), ("1,", 2, 2), ("1,2,", 3, 3), (",", 1, 2)])
@pytest.mark.parametrize("cmd", ["sweep", "compare"])
def test_an_empty_item_of_a_list_is_named(serq_in_process, cmd, value, k, n):
    serq = _serq if value == "1,,2" else serq_in_process  # (a child process for one value a command)
    r = serq(cmd, MG1, "--set", f"lambda={value}", "--horizon", "100", "--workers", "0", "--no-progress")
    _refused(r, 2, f"error: --set lambda: {value!r}: item {k} of {n} is empty {EMPTY}")


@pytest.mark.parametrize("seeds, k, n", [("1,,2", 2, 3), (",1", 1, 2), ("1..3,", 2, 2)])
def test_an_empty_seed_is_named(serq_in_process, seeds, k, n):
    r = serq_in_process("sweep", MG1, "--seeds", seeds, "--horizon", "100", "--workers", "0", "--no-progress")
    _refused(r, 2, f"error: --seeds: {seeds!r}: item {k} of {n} is empty {EMPTY}")


@pytest.mark.parametrize("value, bad", [("1_000", "1_000"), ("0.5,\u0661", "\u0661"), ("0.5, +0.6", "+0.6"),
                                        ("+0.5", "+0.5"), ("0.1:0.3:0.1_0", "0.1_0"), ("\uff10.5", "\uff10.5")])
def test_a_number_python_would_read_is_refused(serq_in_process, value, bad):
    r = serq_in_process("sweep", MG1, "--set", f"lambda={value}", "--horizon", "100", "--workers", "0", "--no-progress")
    _refused(r, 2, f"error: --set lambda: {bad!r} is not a number ({NUMBER_HINT})")


@pytest.mark.parametrize("seeds, part", [("1_0", "1_0"), ("\u0661..3", "\u0661..3"), ("1, +2", "+2"), ("+1", "+1")])
def test_a_seed_python_would_read_is_refused(serq_in_process, seeds, part):
    r = serq_in_process("sweep", MG1, "--seeds", seeds, "--horizon", "100", "--workers", "0", "--no-progress")
    _refused(r, 2, f"error: --seeds {seeds}: {part!r} is not a seed or a range A..B of seeds ({WHOLE_HINT})")


@pytest.mark.parametrize("args, message", [
    (("--find", "observes.response.mean <= 1_0", "--over", "lambda", "0.1:0.5"),
     f"error: --find 'observes.response.mean <= 1_0': '1_0' is not a number ({NUMBER_HINT}); expected FIGURE OP "
     "NUMBER, OP one of <= < >= > == != (e.g. 'ttft.p99 <= 1')"),
    (("--find", "observes.response.mean <= 1.2.3", "--over", "lambda", "0.1:0.5"),  # was a traceback
     "error: --find 'observes.response.mean <= 1.2.3': '1.2.3' is not a number; expected FIGURE OP NUMBER, OP one "
     "of <= < >= > == != (e.g. 'ttft.p99 <= 1')"),
    (("--find", "observes.response.mean <= 2", "--over", "lambda", "0.1:\u0660.5"),
     f"error: --over lambda: '\u0660.5' is not a number ({NUMBER_HINT})"),
])
def test_find_and_over(serq_in_process, args, message):
    _refused(serq_in_process("sweep", MG1, *args, "--horizon", "100", "--workers", "0", "--no-progress"), 2, message)


def test_the_forms_the_docs_show_still_read():
    assert parse_range("0.1:0.3:0.1", "x") == [0.1, 0.2, 0.3]
    assert parse_range("1,2,4", "x") == [1, 2, 4] and parse_range("8192,512", "x") == [8192, 512]
    assert parse_range("2:8:2", "x") == [2, 4, 6, 8] and parse_range("-3", "x") == [-3]
    assert parse_range("inf", "x") == [float("inf")] and parse_range("1e9,.5,3.", "x") == [1e9, 0.5, 3.0]
    assert parse_seeds("1..3,10") == [1, 2, 3, 10] and parse_seeds("1..20") == list(range(1, 21))
    assert parse_condition("requests.ttft.p99 <= 1") == ("requests.ttft.p99", "<=", 1.0)
    assert parse_condition("x > 2e3") == ("x", ">", 2000.0) and parse_condition("x < inf")[2] == float("inf")
    with pytest.raises(UserError, match="'' is not a number"):
        parse_range("", "--set x")


def test_a_sweep_over_a_list_runs_every_item():
    r = _serq("sweep", MG1, "--set", "lambda=0.5,0.6", "--seeds", "1,2", "--horizon", "100", "--warmup", "0",
              "--workers", "0", "--no-progress")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("point,lambda,seed,") and len(lines) == 5
    assert [line.split(",")[1:3] for line in lines[1:]] == [["0.5", "1"], ["0.5", "2"], ["0.6", "1"], ["0.6", "2"]]


def test_a_dump_cell_python_would_read_is_refused(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.csv").write_text("time,session,turn,value\n1,0,0,2\n2,0,0,1_000\n")
    r = _serq("plot", "d", "--cdf", "x", "-o", "f.svg", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr and not (tmp_path / "f.svg").exists(), r.stderr
    assert r.stderr.endswith(f"x.csv:3:7: error: the row has no number under time or value ('2,0,0,1_000'): '1_000' "
                             f"is not a number ({NUMBER_HINT})\n  2,0,0,1_000\n        ^\n"), r.stderr
    (tmp_path / "d" / "x.csv").write_text("time,session,turn,value\n1,0,0,2\n2,0,0,1e-05\n3,0,0,nan\n4,0,0,inf\n")
    r = _serq("plot", "d", "--cdf", "x", "-o", "f.svg", cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "f.svg").exists(), r.stderr  # what serq run --dump writes


@pytest.mark.parametrize("group, k, n", [("lambda,,x", 2, 3), (",lambda", 1, 2), ("lambda,", 2, 2)])
def test_an_empty_name_of_a_zip_group_is_named(serq_in_process, group, k, n):
    # it was dropped: --zip lambda,,x zipped lambda with x
    r = serq_in_process("sweep", MG1, "--set", "lambda=0.1,0.2", "--zip", group, "--horizon", "100", "--workers",
                        "0", "--no-progress")
    _refused(r, 2, f"error: --zip {group!r}: name {k} of {n} is empty (a group is a,b: no empty name)")
