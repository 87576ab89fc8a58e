"""``queue(s) + busy(s)`` of one stage member is warned of at its place: ``queue(s)`` is every job at ``s``,
served or waiting (language.md, "What a stage's observables and figures count"), so the sum counts the jobs
in service twice. A Jackson network's gauge of a station's number present so written
(peer_programs32/jackson3.sq, before its fix) read 1.06 where the M/M/1's 0.67 was meant, without a word.
The program's IR is as written: the warning changes nothing."""

from __future__ import annotations

import json

import pytest
import serq_frontend
from serq_ir.codec import encode

BODY = """
stage s : fifo;
stage t : fifo;
stage f[2] : fifo;
pool q { cap 1; admit via e; }
stage e : step { budget 8; cost 1; }
{gauge}
workload { arrive poisson(1); }
session { run s (0.5); run t (0.5); run f[0] (0.1); }
run { horizon 10; }
"""


def compiled(gauge: str, capsys, tmp_path):
    path = tmp_path / "g.sq"
    path.write_text(BODY.replace("{gauge}", gauge))
    prog = serq_frontend.compile(path=str(path))
    return prog, capsys.readouterr().err.replace(str(path), "g.sq")


@pytest.mark.parametrize(("gauge", "col", "shown"), [
    ("gauge g = queue(s) + busy(s);", 11, "s"),
    ("gauge g = busy(s) + queue(s);", 11, "s"),
    ("gauge g = 2 * (queue(f[1]) + busy(f[1]));", 16, "f[1]"),
])
def test_the_sum_is_warned_of_where_it_is(capsys, tmp_path, gauge, col, shown):
    prog, err = compiled(gauge, capsys, tmp_path)
    lines = err.splitlines()
    assert lines[0] == (f"g.sq:7:{col}: warning: `queue({shown})` already counts the jobs in service at `{shown}` "
                        f"(it is every job there, served or waiting: the stage's present), so `+ busy({shown})` "
                        f"counts them twice; the jobs waiting are `queue({shown}) - busy({shown})`")
    assert lines[1] == "  " + gauge and lines[2] == "  " + " " * (col - 1) + "^" and len(lines) == 3
    # the IR is as written: the sum of the two observables
    value = json.loads(encode(prog))["gauges"][0]["value"]
    if value["kind"] == "Binary" and value["op"] == "*":
        value = value["rhs"]
    assert value["op"] == "+" and {value["lhs"]["name"], value["rhs"]["name"]} == {"queue", "busy"}


def test_an_aggregate_is_warned_of_once_as_written(capsys, tmp_path):
    _, err = compiled("gauge g = sum j in 2 (busy(f[j]) + queue(f[j]));", capsys, tmp_path)
    assert err.count("warning:") == 1
    assert "`queue(f[j])` already counts the jobs in service at `f[j]`" in err


def test_a_step_stage_names_the_pool_its_requests_wait_in(capsys, tmp_path):
    _, err = compiled("gauge g = queue(e) + busy(e);", capsys, tmp_path)
    assert err.splitlines()[0].endswith("counts them twice; the requests waiting for it are `queued(P)` of the "
                                        "pool it admits from")


@pytest.mark.parametrize("gauge", [
    "gauge g = queue(s) + busy(t);",          # two stations
    "gauge g = queue(f[0]) + busy(f[1]);",    # two members
    "gauge g = queue(s) - busy(s);",          # the jobs waiting
    "gauge g = queue(s) + queue(t);",
    "gauge g = busy(s) + busy(s);",
])
def test_other_sums_are_silent(capsys, tmp_path, gauge):
    _, err = compiled(gauge, capsys, tmp_path)
    assert err == ""
