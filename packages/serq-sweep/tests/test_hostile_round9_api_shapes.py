"""The Python API's sweep, compare and find take their program, sets, defs and zip by one rule each
(serq_sweep.axes: program_files, named_values, zip_groups), and say at the call what is of the wrong shape;
``workers`` is a whole number (engines.engine): ``True`` ran one worker, ``1.5`` was a TypeError of range().

``compare(Path("p.sq"))`` and ``find(Path("p.sq"), …)`` iterated the path (``'PosixPath' object is not
iterable``), which ``sweep`` takes; ``sweep(b"p.sq")`` took the bytes for a list of ints (``expected str,
bytes or os.PathLike object, not int``); ``sets=[("B", 512)]`` was an AttributeError of ``.items()``; and
``zip=["a", "b"]``, one group written without its brackets, was read as groups of letters (``--zip
a,…: a is not a swept name``), ``zip=[3]`` as ``'int' object is not iterable``.
"""

from __future__ import annotations

import pytest
from serq_sweep import compare, find, sweep

PROGRAM = """let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (0.5); observe y = now - t0; }
run { horizon 100; warmup 0; seed 1; arrivals 5; }
"""


@pytest.mark.parametrize("call", [
    lambda p: sweep(p, workers=0, progress=False),
    lambda p: compare(p, sets={"lam": [0.2, 0.4]}, workers=0, progress=False),
    lambda p: find(p, "y.mean < 3", ("lam", "0.1:0.9"), workers=0, progress=False),
])
@pytest.mark.parametrize("program, said", [
    (b"p.sq", "program must be a path (str or os.PathLike) or a list of them, not bytes"),
    (3, "program must be a path (str or os.PathLike) or a list of them, not int"),
    ({"p.sq": 1}, "program must be a path (str or os.PathLike) or a list of them, not dict"),
    ([b"p.sq"], "program: each program is a path (str or os.PathLike), not bytes"),
    (["p.sq", None], "program: each program is a path (str or os.PathLike), not NoneType"),
])
def test_a_program_of_the_wrong_type_is_one_type_error(tmp_path, monkeypatch, call, program, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(TypeError) as info:
        call(program)
    assert str(info.value) == said


@pytest.mark.timeout(60)
def test_a_path_is_a_program_of_compare_and_find_as_of_sweep(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    d = compare(tmp_path / "p.sq", sets={"lam": [0.2, 0.4]}, seeds="1..2", workers=0, progress=False)
    # one arm (lam=0.4) against the base (lam=0.2), figure by figure
    assert set(d["arm"]) == {"lam=0.4"} and set(d["base"]) == {"lam=0.2"} and "observes.y.mean" in set(d["figure"])
    # a missing file named by a Path is the compile's error about that file, not a TypeError of the Path
    with pytest.raises(Exception) as info:
        find(tmp_path / "missing.sq", "y.mean < 3", ("lam", "0.1:0.9"), workers=0, progress=False)
    assert not isinstance(info.value, TypeError) and "missing.sq" in str(info.value)


@pytest.mark.parametrize("kw, said", [
    ({"sets": [("lam", 0.2)]}, 'sets must be a mapping of names to values (sets={"B": [512, 8192]}), not list'),
    ({"defs": "svc=~exp(1)"}, 'defs must be a mapping of names to values (defs={"B": [512, 8192]}), not str'),
    ({"sets": {"lam": [0.2, 0.4]}, "zip": "lam"}, 'zip must be a list of groups of names (zip=[["a", "b"]]), not str'),
    ({"sets": {"lam": [0.2, 0.4]}, "zip": ["lam"]},
     """zip: a group is a list of names (zip=[["a", "b"]]), not the str 'lam'"""),
    ({"sets": {"lam": [0.2, 0.4]}, "zip": [3]}, 'zip: a group is a list of names (zip=[["a", "b"]]), not int'),
    ({"sets": {"lam": [0.2, 0.4]}, "zip": [["lam", 3]]},
     """zip: a group is a list of names (zip=[["a", "b"]]), not ['lam', 3]"""),
])
def test_sets_defs_and_zip_of_the_wrong_shape_are_one_type_error(tmp_path, kw, said):
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(TypeError) as info:
        sweep(str(tmp_path / "p.sq"), workers=0, progress=False, **kw)
    assert str(info.value) == said


@pytest.mark.timeout(60)
def test_a_zip_group_of_names_still_zips(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM.replace("run s (0.5)", "run s (svc)").replace(
        "let lam = 0.5;", "let lam = 0.5;\nlet svc = 0.5;"))
    t = sweep(str(tmp_path / "p.sq"), sets={"lam": [0.2, 0.4], "svc": [0.1, 0.3]}, zip=[["lam", "svc"]],
              workers=0, progress=False)
    # zipped: two points (0.2, 0.1) and (0.4, 0.3), not the grid's four
    assert sorted(zip(t["lam"], t["svc"])) == [(0.2, 0.1), (0.4, 0.3)]


@pytest.mark.parametrize("workers", [True, 1.5, 2.0, "2"])
def test_workers_of_the_wrong_type_are_one_type_error(tmp_path, workers):
    # True ran one worker; 1.5 and 2.0 were TypeErrors of range(), "2" one of a comparison
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(TypeError) as info:
        sweep(str(tmp_path / "p.sq"), workers=workers, progress=False)
    assert str(info.value) == f"workers must be a whole number of processes (0: in this process), not {workers!r}"


@pytest.mark.timeout(60)
def test_a_numpy_count_of_workers_is_taken(tmp_path):
    import numpy as np

    (tmp_path / "p.sq").write_text(PROGRAM)
    t = sweep(str(tmp_path / "p.sq"), workers=np.int64(0), seeds="1..2", progress=False)
    assert list(t["seed"]) == [1, 2] and set(t["status"]) == {"ok"}
