"""``--find … --over C LO:HI`` of a let that is the cap of a pool of whole units (request slots) says that the
bisection's fractions of it admit what the whole cap below does, and gives the grid to search on.

A fifo count is refused at a fraction, with the grid to give (docs/sweep.md); a pool's cap is not, and a
cap of 2.09375 of a pool each hold takes 1 of admits two (``used + 1 <= cap`` at used 0 and 1: §3, "used + r
≤ cap"), as a cap of 2 does. The search reported 2.09375 without a word. It now warns once, naming the
value, the pool and its cap, and the grid ``--over C LO:HI:1``.
"""

from __future__ import annotations

import pytest
from serq_sweep.search import find

pytestmark = pytest.mark.timeout(120)

# one request slot per session held for 1 s; arrivals at rate 1: the response is 1 s with room, more without
PROGRAM = """let Cap = 1;
pool slots {{ cap {cap}; }}
stage svc : delay;
workload {{ arrive poisson(1); }}
session {{ set t0 = now; hold slots({units}) {{ run svc (1); }} observe response = now - t0; end; }}
run {{ horizon 100; seed 1; }}
"""


def _find(tmp_path, capsys, spec: str, cap: str = "Cap", units: str = "1"):
    (tmp_path / "p.sq").write_text(PROGRAM.format(cap=cap, units=units))
    cols, rows = find(str(tmp_path / "p.sq"), "response.mean <= 1.5", ("Cap", spec), workers=0)
    return rows, capsys.readouterr().err


def test_a_bisection_through_fractions_of_a_slot_cap_warns_once_with_the_grid(tmp_path, capsys):
    rows, err = _find(tmp_path, capsys, "1:8")
    # the first value between the ends is the midpoint (1 + 8) / 2 = 4.5: a cap of 4.5 admits as 4 does
    assert err == ("warning: over=('Cap', '1:8'): at Cap=4.5 the cap of pool slots is 4.5, and its holds take whole units, "
                   "so it admits what a cap of 4 does: a value found between two whole caps says no more than the "
                   "whole one below it; a knob of whole numbers is searched on a grid, over=('Cap', '1:8:1')\n")
    assert rows[0]["outcome"] == "found_smallest"


def test_a_cap_the_knob_sets_through_an_expression_is_named_with_its_own_value(tmp_path, capsys):
    rows, err = _find(tmp_path, capsys, "1:8", cap="Cap / 2")
    # at LO the cap is 0.5, below a hold's 1 (rejected: no response, the condition fails), at HI 4 (it holds);
    # at the midpoint 4.5 the cap is 2.25, which admits what 2 does
    assert rows[0]["outcome"] == "found_smallest" and rows[0]["evaluations"] > 2
    assert err == ("warning: over=('Cap', '1:8'): at Cap=4.5 the cap of pool slots is 2.25, and its holds take whole "
                   "units, so it admits what a cap of 2 does: a value found between two whole caps says no more "
                   "than the whole one below it; a knob of whole numbers is searched on a grid, "
                   "over=('Cap', '1:8:1')\n" + NO_RESPONSE_AT_1)


@pytest.mark.parametrize("spec, units", [
    ("1:8:1", "1"),     # a grid of whole values: no fraction is tried
    ("1:8", "1.5"),     # a hold of a fraction of a unit: a fractional cap admits differently
])
def test_no_warning_where_the_fraction_matters_or_none_is_tried(tmp_path, capsys, spec, units):
    rows, err = _find(tmp_path, capsys, spec, units=units)
    assert rows[0]["outcome"] == "found_smallest" and rows[0]["evaluations"] > 2  # (the search bisected)
    # (a hold of 1.5 at a cap of 1 is rejected: no response at LO, which the search says, and no word of a fraction)
    assert err == ("" if units == "1" else NO_RESPONSE_AT_1)


# LO's runs rejected every hold (a cap below it): the condition failed there for want of a value, which is said
# (test_peer_programs_round42_find_bare_point.py)
NO_RESPONSE_AT_1 = ("warning: conditions: a condition's figure had no value in any run at some values evaluated (no "
                    "sample of it: an observe that took none, a request metric of a run that completed no request "
                    "after the warm-up), so its conditions failed there for want of one, not on one: "
                    "observes.response.mean at Cap=1 (1 run)\n")


# A pool of blocks: every hold of 3 takes one block of 4, so a cap of 18 (4.5 blocks) admits four holds, as a cap
# of 16 does (16 + 4 > 18), and a cap of 20 five. Arrivals at rate 4, each held 1 s: more than four at once often.
BLOCKS = """pool kv {{ cap {cap}; block 4; }}
stage svc : delay;
workload {{ arrive poisson(4); }}
session {{ set t0 = now; hold kv (3) {{ run svc (1); }} observe response = now - t0; end; }}
run {{ horizon 200; seed 1; }}
"""


def _report(cap: float) -> dict:
    import json

    import serq_frontend
    import serq_report
    import serq_sim

    data = json.loads(serq_report.render(serq_sim.run(serq_frontend.compile(source=BLOCKS.format(cap=cap))), "json"))
    data.pop("program")  # (its source's digest: the cap as written)
    return data


def test_a_cap_of_a_fraction_of_blocks_admits_what_the_whole_blocks_below_do():
    # the warning's claim, on the simulator: a block pool allocates whole blocks, so 18 is 16 and 20 is not
    assert _report(18) == _report(16) == _report(16.5)
    assert _report(20) != _report(16)


def test_a_bisection_through_fractions_of_blocks_warns_once_with_the_grid(tmp_path, capsys):
    (tmp_path / "p.sq").write_text("let Cap = 4;\n" + BLOCKS.format(cap="Cap"))
    cols, rows = find(str(tmp_path / "p.sq"), "response.mean <= 1.05", ("Cap", "4:32"), workers=0)
    err = capsys.readouterr().err
    # the first midpoint is 18, a whole number of units but 4.5 blocks: it admits what 4 blocks (16) do. The
    # search went on to a fraction of a block (it said nothing: the pool takes no whole units, a KV pool's
    # `--over blocks 100:2000` found 782.8125 blocks without a word)
    assert err == ("warning: over=('Cap', '4:32'): at Cap=18 the cap of pool kv is 18, 4.5 blocks of 4, and it "
                   "allocates whole blocks, so it admits what a cap of 4 blocks (16) does: a value found between "
                   "two caps of whole blocks says no more than the whole blocks below it; a knob of whole numbers "
                   "is searched on a grid, over=('Cap', '4:32:1')\n")
    assert rows[0]["outcome"] == "found_smallest"


@pytest.mark.parametrize("cap, spec", [
    ("Cap", "4:32:4"),       # a grid: no fraction of a block is tried
    ("Cap * 4", "1:8:1"),    # a grid of whole blocks, the knob their count
])
def test_no_warning_where_every_cap_tried_is_whole_blocks(tmp_path, capsys, cap, spec):
    (tmp_path / "p.sq").write_text("let Cap = 4;\n" + BLOCKS.format(cap=cap))
    cols, rows = find(str(tmp_path / "p.sq"), "response.mean <= 1.05", ("Cap", spec), workers=0)
    assert rows[0]["outcome"] == "found_smallest" and rows[0]["evaluations"] > 2
    assert "warning" not in capsys.readouterr().err
