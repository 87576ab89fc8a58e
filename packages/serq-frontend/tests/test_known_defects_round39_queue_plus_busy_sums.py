"""The ``queue(s) + busy(s)`` warning looks at the terms of a whole sum: ``2 * K + queue(s) + busy(s)`` is
``(2 * K + queue(s)) + busy(s)``, whose two sides are no queue and busy, and was not warned of; nor were
``queue(s) + 1 + busy(s)`` and ``queue(s) + (busy(s) + 1)``. Each is warned of once, at its first term of the
two. A difference or two members stay silent. The IR is as written."""

from __future__ import annotations

import json

import pytest
import serq_frontend
from serq_ir.codec import encode

BODY = """let K = 1;
stage s : fifo;
stage t : fifo;
stage f[2] : fifo;
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
    ("gauge g = 2 * K + queue(s) + busy(s);", 19, "s"),
    ("gauge g = queue(s) + 1 + busy(s);", 11, "s"),
    ("gauge g = busy(t) + queue(s) + 2 + busy(s);", 21, "s"),
    ("gauge g = 1 + busy(f[1]) + K + queue(f[1]);", 15, "f[1]"),
    ("gauge g = queue(s) + (busy(s) + 1);", 11, "s"),
])
def test_a_longer_sum_is_warned_of_at_its_first_term(capsys, tmp_path, gauge, col, shown):
    prog, err = compiled(gauge, capsys, tmp_path)
    lines = err.splitlines()
    assert lines[0] == (f"g.sq:5:{col}: warning: `queue({shown})` already counts the jobs in service at `{shown}` "
                        f"(it is every job there, served or waiting: the stage's present), so `+ busy({shown})` "
                        f"counts them twice; the jobs waiting are `queue({shown}) - busy({shown})`")
    assert lines[1] == "  " + gauge and lines[2] == "  " + " " * (col - 1) + "^" and len(lines) == 3
    # the IR is as written: a sum whose terms hold the two observables
    value = json.loads(encode(prog))["gauges"][0]["value"]
    names = []

    def terms(v):
        if v.get("kind") == "Binary" and v["op"] == "+":
            terms(v["lhs"])
            terms(v["rhs"])
        elif v.get("kind") == "Observable":
            names.append(v["name"])

    terms(value)
    assert "queue" in names and "busy" in names


@pytest.mark.parametrize("gauge", [
    "gauge g = 2 * K + queue(s) - busy(s);",        # the jobs waiting, plus a number
    "gauge g = 1 + queue(s) + busy(t);",            # two stations
    "gauge g = 1 + queue(f[0]) + busy(f[1]);",      # two members
    "gauge g = queue(s) + 2 * busy(s) + 1;",        # busy(s) is no term: a product
    "gauge g = queue(s) + 1 + queue(s);",
])
def test_other_longer_sums_are_silent(capsys, tmp_path, gauge):
    _, err = compiled(gauge, capsys, tmp_path)
    assert err == ""


def test_a_sum_with_the_pair_inside_is_warned_of_once(capsys, tmp_path):
    _, err = compiled("gauge g = queue(s) + busy(s) + 1 + K;", capsys, tmp_path)
    assert err.count("warning:") == 1 and err.startswith("g.sq:5:11: warning:")
