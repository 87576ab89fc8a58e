"""Known defects of serq-sweep, each found wrong by hand, then fixed at its cause.

The Python API (serq_sweep.sweep, compare, find) names what its caller gave by the argument
(serq.loading.argument_given: ``horizon=5``), the command by its option (serq.loading.option_given:
``--horizon 5``): one rule, ``given(setting, text)``, handed down to every message. The seeds given as text
(``seeds="1..0"``) and the count of workers were told as the command's ``--seeds 1..0`` and ``--workers 30``
to a caller that gave no option (serq_sweep.axes.parse_seeds and serq_sweep.engines named their options
always)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.errors import UsageError, UserError
from serq_sweep import engines

pytestmark = pytest.mark.timeout(120)

PROGRAM = """let x = 1;
stage s : delay;
workload { arrive batch(2); }
session { run s (x); }
run { horizon 10; }
"""


@pytest.fixture
def prog(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    return str(p)


SEEDS = [
    ("x", "seeds=x: 'x' is not a seed or a range A..B of seeds"),
    ("5..1", "seeds=5..1: '5..1' ends before it starts"),
    ("1,2,1", "seeds=1,2,1: seed 1 is given twice"),
    ("1,,2", "seeds: '1,,2': item 2 of 3 is empty (a list is 1,2,4: no empty item before, between or after its "
             "commas)"),
    ("", "seeds='': no seed"),
]


@pytest.mark.parametrize("seeds, message", SEEDS, ids=[s for s, _ in SEEDS])
def test_seeds_given_as_text_are_named_by_the_argument(prog, seeds, message):
    with pytest.raises(UsageError) as e:
        serq_sweep.sweep(prog, seeds=seeds, workers=0, progress=False)
    assert str(e.value) == f"error: {message}"
    with pytest.raises(UsageError) as e:
        serq_sweep.find(prog, "completions >= 1", over=("x", "1:2"), seeds=seeds, workers=0, progress=False)
    assert str(e.value) == f"error: {message}"


def test_compare_asks_for_seeds_by_its_argument(prog):
    # (arrivals that draw: arms that draw nothing are told that one seed is exact, test_messages_round1_compare_one_seed)
    with open(prog, "w") as f:
        f.write(PROGRAM.replace("batch(2)", "poisson(1)"))
    with pytest.raises(UsageError) as e:
        serq_sweep.compare(prog, sets={"x": [1, 2]}, seeds="1", workers=0, progress=False)
    assert str(e.value) == "error: compare() needs two or more seeds (seeds=1..10) for its CIs"


def test_workers_out_of_range_are_named_by_the_argument(prog):
    with pytest.raises(UserError) as e:
        serq_sweep.sweep(prog, seeds="1", workers=-1, progress=False)
    assert str(e.value) == f"error: workers=-1: a sweep runs on 0 to {engines.MAX_WORKERS} worker processes"


def test_workers_beyond_the_open_files_are_named_by_the_argument(prog, monkeypatch):
    # 40 files left under a limit of 64: (40 - SPARE_FILES) // FILES_PER_WORKER workers fit, as the command's
    # message says them (test_hostile_round8_open_files.py: 8 of 30)
    monkeypatch.setattr(engines, "files_left", lambda: (40, 64))
    fit = (40 - engines.SPARE_FILES) // engines.FILES_PER_WORKER
    with pytest.raises(UserError) as e:
        serq_sweep.sweep(prog, seeds="1..30", workers=30, progress=False)  # 30 runs: 30 to start
    assert str(e.value) == (f"error: workers=30: 30 worker processes need about "
                            f"{30 * engines.FILES_PER_WORKER + engines.SPARE_FILES} open files, and this process may "
                            f"open 40 more (its limit, ulimit -n, is 64): give workers={fit} or fewer, or raise the "
                            "limit")


def test_the_command_names_its_options_as_before(prog):
    serq = str(Path(sys.executable).parent / "serq")
    r = subprocess.run([serq, "sweep", prog, "--seeds", "5..1", "--no-progress"], capture_output=True, text=True,
                       timeout=60)
    assert (r.returncode, r.stderr) == (2, "error: --seeds 5..1: '5..1' ends before it starts\n"), r


# ``sets`` and ``defs`` are mappings of names, so a name's values are named by its key of the argument
# (serq.loading.KEYED_ARGUMENTS: sets['x'], defs['f']), and a group of ``zip`` by the argument with the group's
# names; the command names --set x, --def f and --zip x,y (test_the_command_names_its_options_as_before).
NAMED = [
    (dict(sets={"x": "1:0"}), "sets['x']: '1:0': the range ends before it starts"),
    (dict(sets={"x": []}), "sets['x']: no value"),
    (dict(defs={"f": 3}), "defs['f']: 3 is not an expression (a string) or a list of them"),
    (dict(defs={"f": []}), "defs['f']: no value"),
    (dict(sets={"x": [1, 2]}, zip=[["x", "y"]]), "zip=x,y: y is not a swept name (swept: x)"),
    (dict(sets={"x": [1, 2]}, zip=[["x", "x"]]), "zip: x is given twice in the group x,x"),
    (dict(sets={"x": [1, 2], "y": [1]}, zip=[["x", "y"]]),
     "zip=x,y: the zipped names have different numbers of values (x: 2, y: 1)"),
]


@pytest.mark.parametrize("kw, message", NAMED, ids=[m.partition(":")[0] + str(i) for i, (_, m) in enumerate(NAMED)])
def test_sets_defs_and_zip_are_named_by_the_arguments(prog, kw, message):
    with pytest.raises(UsageError) as e:
        serq_sweep.sweep(prog, seeds="1", workers=0, progress=False, **kw)
    assert str(e.value) == f"error: {message}"


def test_a_definition_spelt_twice_is_named_by_its_key(prog):
    # ``1+1`` and `` 1 + 1`` are one body as serq fmt writes it: one point given twice
    src = Path(prog).read_text().replace("let x = 1;", "def f() { run s (1); }").replace("run s (x);", "f();")
    Path(prog).write_text(src)
    with pytest.raises(UsageError) as e:
        serq_sweep.sweep(prog, defs={"f": ["{ run s (1 + 1); }", "{ run s (1+1); }"]}, seeds="1", workers=0,
                         progress=False)
    assert "is given twice: defs['f'] '{ run s (1+1); }' is '{ run s (1 + 1); }' written otherwise" in str(e.value)


@pytest.mark.parametrize("args, message", [
    (["--set", "x=1:0"], "--set x: '1:0': the range ends before it starts"),
    (["--set", "x=1,2", "--zip", "x,x"], "--zip: x is given twice in the group x,x"),
])
def test_the_command_names_set_and_zip_as_before(prog, args, message):
    serq = str(Path(sys.executable).parent / "serq")
    r = subprocess.run([serq, "sweep", prog, *args, "--no-progress"], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (2, f"error: {message}\n"), r


# compare() says why there are no arms in its own arguments too (serq compare's words: test_hostile_round7_api.py)
CMP_HEAD = ("compare() compares two or more programs, or one program under two or more values of one name of sets or "
            "defs: ")


@pytest.mark.parametrize("kw, said", [
    (dict(sets={"x": 0.5}), "sets={'x': 0.5} gives one value, a setting of the one arm there is, so there is nothing "
                            "to compare it with; give a name two or more values to compare them (sets={'x': [0.5, "
                            "VALUE]}), or give two or more programs"),
    (dict(), "one program and no sets or defs is one arm, with nothing to compare it with; give two or more "
             "programs, or a name two or more values (sets={'B': [8192, 512]})"),
])
def test_compare_says_why_there_are_no_arms_in_its_arguments(prog, kw, said):
    with pytest.raises(UsageError) as e:
        serq_sweep.compare(prog, workers=0, progress=False, **kw)
    assert str(e.value) == f"error: {CMP_HEAD}{said}"


def test_compare_names_a_grid_of_arms_by_the_arguments(tmp_path, prog):
    other = tmp_path / "q.sq"
    other.write_text(PROGRAM)
    with pytest.raises(UsageError) as e:
        serq_sweep.compare([prog, str(other)], sets={"x": [1, 2]}, workers=0, progress=False)
    assert str(e.value) == (f"error: {CMP_HEAD}here 2 things each have two or more values (the programs, "
                            "sets['x']), a grid of arms; compare one at a time (give the others one value each)")
