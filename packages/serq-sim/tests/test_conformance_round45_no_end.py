"""A run with no end is told what ends it, and only what its program takes (found by conformance round 45).

language.txt §2: "run { arrivals N; } requires exactly N open-workload arrivals"; program-reference.txt: arrivals
"Only with an open workload (poisson or renewal)". `serq run` of a program whose horizon is inf and whose
workload never stops starting sessions warns that the run has no end (bounded by --max-events or --max-wall)
or refuses it (bounded by neither), and said to every such program "give --arrivals N (or `arrivals N;` in the
run block)": to a closed workload too, which the run then refuses ("`arrivals` needs an open workload").
serq_sim.notes now offers the count only to an open workload; a closed one is told a finite horizon, the
bounds, and that M sessions n at a time are a batch behind a pool of n slots.

Each test follows the advice the message gives and checks that the run it describes is the one that happens.
"""

from __future__ import annotations

import pytest

PROGRAM = """stage f : delay;
pool slots {{ cap 2; }}
workload {{ arrive {arrive}; }}
session {{ hold slots (1) {{ run f (1); }} }}
run {{ horizon inf; }}
"""


def serq(argv, capsys) -> tuple[int, str, str]:
    from serq.cli import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


def _program(tmp_path, arrive: str) -> str:
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM.format(arrive=arrive))
    return str(p)


@pytest.mark.parametrize("flags", [[], ["--max-events", "30"]], ids=["refused", "warned"])
def test_a_closed_workload_is_not_told_to_give_a_count_of_arrivals(flags, tmp_path, capsys):
    path = _program(tmp_path, "closed(2)")
    code, _out, err = serq(["run", path, "--no-progress", *flags], capsys)
    assert code == (1 if not flags else 3), err
    assert "the run has no end: horizon inf and a closed workload" in err
    assert "--arrivals" not in err and "arrivals N" not in err, err
    assert "give a finite horizon" in err and "`arrive batch(M);` behind a pool of n slots" in err, err
    # the count, had it been offered, is refused
    code, _out, err = serq(["run", path, "--no-progress", "--arrivals", "5"], capsys)
    assert code == 1 and "needs an open workload" in err, err
    # what it is told works: a finite horizon (two slots, runs of 1 on a delay stage: 2 sessions a second, 20 by t = 10)
    code, out, err = serq(["run", path, "--no-progress", "--horizon", "10", "--json"], capsys)
    assert code == 0, err
    import json

    doc = json.loads(out)
    assert (doc["end"], doc["ended"]) == (10.0, 20)


def test_the_batch_the_closed_workload_is_told_of_ends_on_its_own(tmp_path, capsys):
    """`arrive batch(M);` behind the pool of n slots: M sessions n at a time, and `--horizon inf` ends it when
    they have: 6 sessions, 2 slots, runs of 1 on a delay stage: the last ends at 3."""
    code, out, err = serq(["run", _program(tmp_path, "batch(6)"), "--no-progress", "--json"], capsys)
    assert code == 0, err
    import json

    doc = json.loads(out)
    assert (doc["end"], doc["ended"]) == (3.0, 6)


@pytest.mark.parametrize("arrive", ["poisson(2)", "renewal(0.5)"])
def test_an_open_workload_is_still_told_to_give_a_count_and_the_count_ends_it(arrive, tmp_path, capsys):
    path = _program(tmp_path, arrive)
    code, _out, err = serq(["run", path, "--no-progress"], capsys)
    assert code == 1 and "give --arrivals N (or `arrivals N;` in the run block), a finite horizon" in err, err
    code, out, err = serq(["run", path, "--no-progress", "--arrivals", "7", "--json"], capsys)
    assert code == 0, err
    import json

    doc = json.loads(out)
    assert (doc["arrivals"], doc["ended"]) == (7, 7)
