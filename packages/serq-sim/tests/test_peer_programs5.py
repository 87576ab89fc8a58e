"""Programs of a fifth round of users (peer_programs5/*.sq), of kinds the earlier rounds lack: a fleet of
engines each spilling its KV evictions to a CPU tier and a PCIe link of its own (a pool family's `spill`
paired member for member with a tier family and a link family), and a speculative-decoding cost model
(a step cost reading `tokens` and `decoders`) on lib/vllm.sq's request, and a closed population replaying
a hand-made trace in order (a byte-order mark, CRLF, quoted notes), traced by hand; and a machine-repairman
model with fixed think times and a PS server of hyperexponential service, whose figures are the exponential
model's (BCMP insensitivity), against mean value analysis. Each runs on the
tier serQ picks and on the general engine, which must agree byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_ir
from conform import both_tiers

HERE = Path(__file__).resolve().parent / "peer_programs5"


def both(name: str, monkeypatch, **kw):
    return both_tiers(HERE / name, monkeypatch, **kw)


def one(report, name: str) -> float:
    (v,) = report.observe(name).values.tolist()
    return v


def test_a_pool_family_spills_to_its_own_member_of_a_tier_family_over_its_own_link(monkeypatch):
    # fleet_offload.sq, traced by hand in its header: kv[1]'s two evicted blocks reach cpu[1] over pcie[1]
    # (usable at 3 and 4), nothing reaches cpu[0] or runs on pcie[0], and the read back ends at 6.5.
    r = both("fleet_offload.sq", monkeypatch)
    assert (one(r, "early1"), one(r, "late1"), one(r, "late0"), one(r, "done")) == (0.0, 32.0, 0.0, 6.5)
    p0, p1 = r.stage("pcie", 0), r.stage("pcie", 1)
    assert (p0.completions, p1.completions) == (0, 3)     # two block writes, one read of two blocks
    assert abs(p1.utilisation - 4 / 100) < 1e-12
    assert (r.pool("kv", 0).spills, r.pool("kv", 1).spills) == (0, 2)
    assert (r.pool("cpu", 0).admissions, r.pool("cpu", 1).admissions) == (0, 1)
    assert abs(r.pool("cpu", 1).used - 32 * 2 / 100) < 1e-12 and r.pool("cpu", 0).cached == 0


def spill_source(tier: str, link: str) -> str:
    return (f"pool kv[2] {{ cap 32; block 16; evict lru; spill {tier} via {link} (1) when (1); }}\n"
            "pool cpu[3] { cap 64; }\npool one { cap 64; }\nstage pcie[3] : fifo;\nstage bus : fifo;\n"
            "workload { arrive batch(1); }\nsession { hold kv[0] (1) { } end; }\nrun { horizon 1; }\n")


def test_a_spill_names_a_family_of_another_size_by_member_only():
    # a family of one is every member's (as `admit via` and `memory`), an indexed member is named as written;
    # an unindexed family of another size is one message saying how to pair, not a suggestion of `cpu[j]`
    # where no j exists
    for ok in (("one", "bus"), ("cpu[2]", "pcie[0]")):
        serq_frontend.compile(source=spill_source(*ok), sets={}, defs={})
    for tier, link, named in (("cpu", "bus", "cpu"), ("one", "pcie", "pcie")):
        with pytest.raises(serq_frontend.CompileError) as e:
            serq_frontend.compile(source=spill_source(tier, link), sets={}, defs={})
        msg = str(e.value).splitlines()[0]
        assert f"`{named}` a" in msg and "family of 3" in msg and f"`{named}[0]`" in msg, msg
    one = spill_source("cpu", "bus").replace("pool kv[2]", "pool kv").replace("kv[0]", "kv")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=one, sets={}, defs={})
    assert str(e.value).splitlines()[0].split(": error: ")[1].startswith(
        "`kv` is one pool and `cpu` a pool family of 3"), str(e.value)


def test_an_ir_files_spill_to_a_family_of_another_size_is_refused():
    # the IR of a spill to a family of one, its tier then made a family of 3 by hand: the simulator wrote
    # kv[1]'s evictions to the tier's first member; validation now refuses it at the spill's tier
    prog = serq_frontend.compile(source=spill_source("one", "bus"), sets={}, defs={})
    doc = json.loads(serq_ir.encode(prog))
    serq_ir.decode(json.dumps(doc).encode())
    tier = doc["pools"][0]["spill"]["tier"]["pool"]
    doc["pools"][tier]["size"] = 3
    with pytest.raises(serq_ir.IRError, match=r"cannot be paired.*spill\.tier"):
        serq_ir.decode(json.dumps(doc).encode())


def test_speculative_decoding_cost_on_the_vllm_request_by_hand(monkeypatch):
    # specdec.sq: budget 64, cost 0.01 + 0.0001 (tokens + 3 decoders) + 0.002 when anything decodes; A
    # (prompt 100) and B (40) at 0, 3 verification steps each:
    #   it1 A prefills 64                  0.0164 -> 0.0164
    #   it2 A 36, B admitted with 28       0.0164 -> 0.0328  A's first token
    #   it3 A decodes, B prefills 12       0.01 + 0.0013 + 0.0003 + 0.002 = 0.0136 -> 0.0464  B's first
    #   it4 A and B decode                 0.0128 -> 0.0592  A done
    #   it5 B decodes                      0.0124 -> 0.0716  B done
    r = both("specdec.sq", monkeypatch)
    rec = r.records()
    got = [tuple(float(rec[c][i]) for c in ("admitted", "first_token", "last_token")) for i in range(2)]
    want = [(0.0, 0.0328, 0.0592), (0.0164, 0.0464, 0.0716)]
    assert np.allclose(got, want, rtol=0, atol=1e-12), got
    e = r.stage("engine")
    assert (e.iterations, e.prefill_only, e.decode_only, e.mixed) == (5, 2, 2, 1)
    assert abs(e.tokens - 144 / 5) < 1e-12 and abs(e.batch - 8 / 5) < 1e-12
    assert abs(e.utilisation - 0.0716) < 1e-12
    q = r.result.requests
    assert abs(q.tpot.mean - (0.0132 + 0.0126) / 2) < 1e-12
    assert abs(q.itl.mean - (0.0136 + 0.0128 + 0.0128 + 0.0124) / 4) < 1e-12


#: a hand-made trace as a spreadsheet writes one: a byte-order mark, CRLF, a note column holding a comma and
#: a line end, rows out of order (session 20's second turn first)
HAND_CSV = (b'\xef\xbb\xbfsession,turn,new,out,think,forced,note\r\n'
            b'20,1,200,0,0,0,"the second turn, after a think"\r\n'
            b'10,0,100,10,0,0,\r\n'
            b'20,0,50,5,1,0,"multi\r\nline"\r\n')


def test_a_closed_population_replays_a_hand_made_trace_in_order(monkeypatch, tmp_path):
    # replay_closed.sq, traced by hand: cycles of 1.5 s from 0, 1.5, 3, 4.5, 6, each serving at +0.1,
    # +1.3 and +1.5 (session 20's two turns, then session 10's one); by the horizon 7 the fifth cycle has
    # served once and is in its think. Sessions start at every end: 9 arrivals, 8 ended, 13 turns; the GPU
    # is busy 0.5 a cycle and 0.1 of the last: 2.1 / 7; the client thinks 1 a cycle and 0.9 of the last.
    (tmp_path / "hand.csv").write_bytes(HAND_CSV)
    (tmp_path / "replay_closed.sq").write_text((HERE / "replay_closed.sq").read_text())
    r = both_tiers(tmp_path / "replay_closed.sq", monkeypatch)
    served = sorted(r.observe("served").times.tolist())
    want = sorted(c + d for c in (0, 1.5, 3, 4.5, 6) for d in (0.1, 1.3, 1.5) if c + d <= 7)
    assert np.allclose(served, want, rtol=0, atol=1e-9), served
    assert r.observe("served").sessions.tolist() == [0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8]
    res = r.result
    assert (res.arrivals, res.ended, res.turns) == (9, 8, 13)
    assert abs(r.stage("gpu").utilisation - 2.1 / 7) < 1e-9 and abs(r.stage("client").present - 4.9 / 7) < 1e-9


def mva(n: int, z: float, s: float) -> tuple[float, float, float]:
    """Exact mean value analysis of one queueing station of demand s and a delay z: (R, X, Q) at n."""
    q = 0.0
    for k in range(1, n + 1):
        r = s * (1 + q)
        x = k / (r + z)
        q = x * r
    return r, x, q


@pytest.mark.timeout(60)
def test_a_repairman_with_fixed_thinks_and_a_ps_server_is_insensitive(monkeypatch):
    # repair_det.sq: deterministic think 9, PS service h2(1, 4), 10 users: the exponential model's MVA
    r_, x, q = mva(10, 9.0, 1.0)
    assert abs(r_ - 3.0187) < 1e-4 and abs(x - 0.83204) < 1e-5
    r = both("repair_det.sq", monkeypatch)
    st = r.stats("response")
    assert abs(st.mean - r_) <= st.ci and st.ci < 0.04 * r_, (st.mean, st.ci)
    cpu = r.stage("cpu")
    assert abs(cpu.throughput - x) < 0.01 * x and abs(cpu.present - q) < 0.04 * q
    assert abs(r.stage("users").present - 9 * cpu.throughput) < 0.01 * 9 * x   # Little at the delay
    assert r.result.mean_live == 10
