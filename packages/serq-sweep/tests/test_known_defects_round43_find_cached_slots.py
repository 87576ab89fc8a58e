"""``serq sweep --find … --over M LO:HI`` of a let that is the cap of a pool of request slots held, as vLLM's
``max_num_seqs`` is in lib/vllm.sq, in the request's hold with its KV under a ``cache`` clause now gets the
whole-number hint a pool of slots alone gets (test_find_whole_pool_cap): serq_sweep.search.whole_unit_pools
took every pool of a hold with a ``cache`` clause out. A cached prefix never blocks an admission (language.txt
§3) and what such a hold caches on the slots is at most its whole unit, so a cap of 2.5 admits, and caches, what
2 does; the simulator's reports at the two caps are the same (below). A ``cache`` written as a constant fraction
of a unit still takes the pool out."""

from __future__ import annotations

import json

import pytest
from serq_sweep.search import find

pytestmark = pytest.mark.timeout(150)

# one request slot and 10 units of KV per session, held for 1 s and cached at the end (1 on the slots, 10 on
# kv); arrivals at rate 1: the response is 1 s with room, more without
PROGRAM = """let M = 1;
pool reqs {{ cap M; evict lru; }}
pool kv {{ cap 100; evict lru; }}
stage svc : delay;
workload {{ arrive poisson(1); }}
session {{ set t0 = now; hold reqs (1), kv (10) {{ run svc (1); }} cache ({cache}); observe response = now - t0; end; }}
run {{ horizon 100; seed 1; }}
"""
HINT = ("warning: over=('M', '1:8'): at M=4.5 the cap of pool reqs is 4.5, and its holds take whole units, so it "
        "admits what a cap of 4 does: a value found between two whole caps says no more than the whole one below "
        "it; a knob of whole numbers is searched on a grid, over=('M', '1:8:1')\n")


def _find(tmp_path, capsys, cache: str):
    (tmp_path / "p.sq").write_text(PROGRAM.format(cache=cache))
    _cols, rows = find(str(tmp_path / "p.sq"), "response.mean <= 1.5", ("M", "1:8"), workers=0)
    return rows, capsys.readouterr().err


@pytest.mark.parametrize("cache", ["10", "1", "M * 10"])
def test_a_cached_slot_pool_gets_the_hint(tmp_path, capsys, cache):
    rows, err = _find(tmp_path, capsys, cache)
    assert err == HINT
    assert rows[0]["outcome"] == "found_smallest"


def test_a_constant_fraction_cached_is_no_whole_pool(tmp_path, capsys):
    # 0.5 of a unit cached on the slots: an entry a cap of 2.5 keeps beside two holders and a cap of 2 does not
    rows, err = _find(tmp_path, capsys, "0.5")
    assert "warning" not in err
    assert rows[0]["outcome"] == "found_smallest" and rows[0]["evaluations"] > 2  # (it bisected)


def _report(cap: float, cache: str) -> dict:
    import serq_frontend
    import serq_report
    import serq_sim

    src = PROGRAM.format(cache=cache).replace("let M = 1;", f"let M = {cap};")
    data = json.loads(serq_report.render(serq_sim.run(serq_frontend.compile(source=src)), "json"))
    data.pop("program")  # (its source's digest: the cap as written)
    return data


def test_the_hint_holds_on_the_simulator():
    # the claim the hint makes, with the cache clause: 2.5 admits and caches what 2 does, 3 does not
    assert _report(2.5, "10") == _report(2, "10")
    assert _report(3, "10") != _report(2, "10")
    # and where a fraction of a unit is cached it does not: the entry of 0.5 fits beside two holders at 2.5
    assert _report(2.5, "0.5") != _report(2, "0.5")
