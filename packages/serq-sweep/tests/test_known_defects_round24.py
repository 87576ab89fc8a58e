"""Known defects of serq sweep, round 24.

``serq sweep --find … --over rte`` of a program of ``let lam`` and ``def rate()`` suggested only the lets
(here none: `rte` is close to no let), though the name meant was the definition's; the did-you-mean is now the
closest of the lets and the expression definitions (serq.errors.knob_hint), a definition said to be one, as
``--set rte`` of the program says too. A let is suggested as before.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError, knob_hint

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 0.5;
def rate() = lam * 2;
stage svc : fifo;
workload { arrive poisson(rate()); }
session { set t0 = now; run svc (~exp(1)); observe response = now - t0; end; }
run { horizon 50; }
"""


def _serq(tmp_path, args, here=None):
    """``serq ARGS`` in ``tmp_path``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said and written, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=100)


def _sweep(tmp_path, name, file="p.sq", here=None):
    return _serq(tmp_path, ["sweep", file, "--find", "response.mean <= 2", "--over", name, "0.1:0.9"], here)


@pytest.mark.parametrize("name, meant", [("rte", "`rate`, an expression definition given with --def rate"),
                                         ("Rate", "`rate`, an expression definition given with --def rate"), ("lan", "`lam`"), ("lamb", "`lam`")])
def test_over_of_a_misspelt_name_suggests_a_let_or_a_definition_saying_which(tmp_path, serq_in_process, name,
                                                                           meant):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _sweep(tmp_path, name, here=None if name == "rte" else serq_in_process)  # (the first as a child process)
    assert r.returncode == 1
    assert r.stderr == (f"error: p.sq: --over {name}: the program has no `let {name}` (did you mean {meant}?) (the "
                        "knob --find searches is a let)\n")


def test_a_name_near_nothing_suggests_nothing(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _sweep(tmp_path, "zzz", here=serq_in_process)
    assert r.stderr == "error: p.sq: --over zzz: the program has no `let zzz` (the knob --find searches is a let)\n"


def test_the_python_api_says_it_too(tmp_path):
    from serq_sweep import find

    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError) as e:
        find(str(tmp_path / "p.sq"), "response.mean <= 2", over=("rte", "0.1:0.9"), workers=0, progress=False)
    assert ("(did you mean `rate`, an expression definition given with defs['rate']?) (the knob find searches "
            "is a let)") in str(e.value)


def test_the_set_of_the_program_says_it_alike(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--set", "rte=1"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=100)
    assert r.returncode == 1
    assert r.stderr == ("p.sq: error: --set rte: the program has no `let rte` (did you mean `rate`, an expression "
                        "definition given with --def rate?)\n")


def test_knob_hint():
    assert knob_hint("rte", ["lam"], ["rate"]) == " (did you mean `rate`, an expression definition given with --def rate?)"
    assert knob_hint("lan", ["lam"], ["rate"]) == " (did you mean `lam`?)"
    assert knob_hint("xyz", ["lam"], ["rate"]) == ""
    assert knob_hint("rate", ["lam"], ["rate"]) == ""  # (the name itself is no suggestion)


# ``--zip 'a, b'`` took blanks after its commas and ``--set 'a=1, 2'`` refused ' 2' as no number: one splitter
# (axes.split_list) for every list of the command line now, the blanks around a comma the list's


@pytest.mark.parametrize("spaced, plain", [("1, 2, 4", "1,2,4"), (" 1 ,2", "1,2"), ("0.5,\t1e3", "0.5,1e3"),
                                           ("1,  inf", "1,inf")])
def test_a_list_of_values_takes_blanks_around_its_commas(spaced, plain):
    from serq_sweep.axes import parse_range, parse_seeds

    assert parse_range(spaced, "--set b") == parse_range(plain, "--set b")
    if "." not in plain and "inf" not in plain:
        assert parse_seeds(spaced) == parse_seeds(plain) == [int(x) for x in plain.split(",")]


@pytest.mark.parametrize("text, said", [
    ("1, ,2", "--set b: '1, ,2': item 2 of 3 is empty"),
    ("1, ", "--set b: '1, ': item 2 of 2 is empty"),
    (" 2", "--set b: ' 2' is not a number"),  # a value alone keeps its blanks
    ("1, 2 000", "--set b: '2 000' is not a number"),  # blanks inside an item are the item's
])
def test_blanks_are_no_item_and_no_part_of_a_number(text, said):
    from serq.errors import UsageError
    from serq_sweep.axes import parse_range

    with pytest.raises(UsageError) as e:
        parse_range(text, "--set b")
    assert str(e.value).startswith("error: " + said), str(e.value)


ZIPPED = """let a = 1;
let b = 2;
stage svc : fifo;
workload { arrive poisson(0.5); }
session { run svc (~exp(a * b / 4)); observe x = a + b; }
run { horizon 5; }
"""


def test_set_and_zip_both_take_a_list_with_blanks(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(ZIPPED)

    def sweep(*args, here=None):
        r = _serq(tmp_path, ["sweep", "p.sq", *args, "--workers", "0", "--no-progress", "--seeds", "1, 2",
                             "--show", "observes.x.mean"], here)
        assert r.returncode == 0, r.stderr
        return r.stdout

    # (the list with blanks as a child process, the one without in this process)
    spaced = sweep("--set", "a=1, 2", "--set", "b=3,  4", "--zip", "a, b")
    assert spaced == sweep("--set", "a=1,2", "--set", "b=3,4", "--zip", "a,b", here=serq_in_process)
    rows = [line.split() for line in spaced.splitlines()]
    # the zipped points (a, b) = (1, 3) and (2, 4): x = a + b, 4 and 6, each of the two seeds
    assert [r[:3] + r[-1:] for r in rows[1:]] == [["1", "3", "2", "4±0"], ["2", "4", "2", "6±0"]], spaced


# a resumed table whose columns were reordered by hand (figures before key): the resume took the figures to be
# the columns after key, so a run whose events stood before key was said to have "no number under events",
# pointing at a cell that held one; it reads the table by its columns' names now


def _table(path):
    import csv

    with open(path, newline="") as f:
        return list(csv.reader(f))


@pytest.mark.parametrize("order", ["key-last", "reversed", "figures-first"])
def test_a_table_of_reordered_columns_is_resumed_by_their_names(tmp_path, serq_in_process, order):
    import csv

    (tmp_path / "p.sq").write_text(PROGRAM)
    args = ["sweep", "p.sq", "--set", "lam=0.1,0.2,0.3", "--workers", "0", "--no-progress", "-o", "r.csv"]
    here = None if order == "key-last" else serq_in_process  # (the first order's sweeps as child processes)
    r = _serq(tmp_path, args, here)
    assert r.returncode == 0, r.stderr
    written = (tmp_path / "r.csv").read_bytes()
    rows = _table(tmp_path / "r.csv")
    head = rows[0]
    k = head.index("key")
    if order == "key-last":
        perm = [i for i in range(len(head)) if i != k] + [k]
    elif order == "reversed":
        perm = list(range(len(head)))[::-1]
    else:
        perm = list(range(k + 1, len(head))) + list(range(k + 1))
    with open(tmp_path / "r.csv", "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([[row[i] for i in perm] for row in rows])
    assert (tmp_path / "r.csv").read_bytes() != written
    r = _serq(tmp_path, args, here)
    assert r.returncode == 0, r.stderr
    assert "(0 run now, 3 resumed)" in r.stderr, r.stderr
    # every run resumed with every figure it had, each cell as it was: the table written again is the first
    # one, its columns in their order (FIXED and the swept names first, the figures in the order read)
    again = _table(tmp_path / "r.csv")
    assert [dict(zip(again[0], row)) for row in again[1:]] == [dict(zip(head, row)) for row in rows[1:]]
    assert again[0][:k + 1] == head[:k + 1]
    if order != "reversed":
        assert (tmp_path / "r.csv").read_bytes() == written
