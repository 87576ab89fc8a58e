"""``serq metrics --by`` of a column of mixed cells: numbers, -0.0, NaN, infinities, texts differing by case or
blanks.

A group is what ``--where`` keeps: a number by its value (0, 0.0 and -0.0 one group; ``--where g=0`` keeps the
three), NaN and missing cells one group, a text by its canonical form, as ``--where`` matches one (`` a`` and
``a`` one group, as ``--where g=a`` keeps both: they were two groups), case kept (``A`` and ``a`` two, as
``--where`` tells them apart). In the JSON an infinite group is the text "inf" or "-inf", as the IR's JSON writes
one: as null, the groups inf, -inf and NaN were three rows of one label. Truth: the cells counted by hand."""

from __future__ import annotations

import json

from serq_sweep import metrics

HEADER = "sent,first_token,last_token,output,g\n"
CELLS = ["0.0", "-0.0", "0", "nan", "", "inf", "-inf", "a", " a", "A", " 0"]


def _file(tmp_path, cells):
    p = tmp_path / "req.csv"
    p.write_text(HEADER + "".join(f"0,1,2,3,{c}\n" for c in cells))
    return p


def _count(rows):
    return {json.dumps(r.group.get("g"), default=str) if r.group else "all": r.requests.completed for r in rows}


def test_groups_are_what_where_keeps(tmp_path):
    p = _file(tmp_path, CELLS)
    rows = metrics(p, by="g")
    # numbers first, in increasing order (-inf, 0, inf), then NaN, then texts by their form (" 0" is a text: the
    # blank makes it no number, as --where g=0 does not keep it)
    assert [r.group.get("g") for r in rows[:3]] == [float("-inf"), 0, float("inf")]
    counts = _count(rows)
    assert counts == {"-Infinity": 1, "0": 3, "Infinity": 1, "NaN": 2, '" 0"': 1, '"A"': 1, '"a"': 2, "all": 11}
    for value, kept in (("0", 3), ("-0.0", 3), ("a", 2), (" a", 2), ("A", 1), ("inf", 1), ("-inf", 1)):
        (whole,) = metrics(p, where={"g": value})
        assert whole.requests.completed == kept, value


def test_a_definitions_spellings_are_one_group(tmp_path):
    p = tmp_path / "req.csv"
    p.write_text("sent,first_token,last_token,output,d\n0,1,2,3,~exp(1)\n0,1,2,3,~exp( 1 )\n0,1,2,3,~exp(2)\n")
    rows = metrics(p, by="d")
    assert [(r.group, r.requests.completed) for r in rows] == [({"d": "~exp(1)"}, 2), ({"d": "~exp(2)"}, 1), ({}, 3)]


def test_a_runs_own_column_groups_as_written(tmp_path):
    p = tmp_path / "req.csv"
    p.write_text("sent,first_token,last_token,output,status\n0,1,2,3,ok\n0,1,2,3, ok\n")
    rows = metrics(p, by="status")
    assert [(r.group, r.requests.completed) for r in rows] == [({"status": " ok"}, 1), ({"status": "ok"}, 1), ({}, 2)]


def test_json_tells_infinities_and_nan_apart(tmp_path, serq_in_process):
    p = _file(tmp_path, ["inf", "-inf", "1e999", "nan", "2"])
    r = serq_in_process("metrics", str(p), "--by", "g", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [(row["group"], row["requests"]["completed"]) for row in doc["rows"]] == [
        ({"g": "-inf"}, 1), ({"g": 2}, 1), ({"g": "inf"}, 2), ({"g": None}, 1), ({}, 5)]


def test_groups_bounded_at_once(tmp_path, serq_in_process):
    # the bound is said at the group past it, before the rest of the rows are grouped (a column of a distinct text
    # a row, 300 000 rows, was grouped whole, 6 s, to say so): rows of 9 999 groups and the whole are 10 000
    from serq_sweep.served import MAX_GROUPS

    p = tmp_path / "req.csv"
    p.write_text(HEADER + "".join(f"0,1,2,3,t{i}\n" for i in range(MAX_GROUPS - 1)))
    rows = metrics(p, by="g")
    assert len(rows) == MAX_GROUPS and rows[-1].requests.completed == MAX_GROUPS - 1
    with p.open("a") as f:
        f.write("".join(f"0,1,2,3,u{i}\n" for i in range(3)))
    r = serq_in_process("metrics", str(p), "--by", "g")
    assert r.returncode == 1
    assert r.stderr == (f"error: --by g: {MAX_GROUPS} groups or more in one run of {p}; serq metrics makes "
                        f"{MAX_GROUPS} rows at most: group by a column of few values (a replica, a tenant, a class)\n")
