"""Conformance of language.txt §2, Queues, by hand, in the small forms a port of the reference's tests brings:

* "The workload names its entry point with request gw;, where gw is a queue declared with the gateway role
  … then expands its route at the request site … The gateway is the exception on the session's side: its
  route reads the request's attributes as a server does and sets the ones the session reads back";
* "The deployment calls an entry where the request goes: P[i].prefill (prompt); and D[j].decode (prompt)
  from P[i]; … Inside the entry the from name is that pool", "transfer on L[k], M[l] (n) from S to P (m)
  names the stages itself, as a server does: link queues, or any ps stages", the prefiller's "cache
  (prompt) lease kv (inf)" ended by the decoder's transfer, and "mark first_token;, read afterwards as
  D.first_token";
* "latency x on a link's serve is the wait before such a transfer";
* "run (X) with no stage names the queue's own … self is the member's index in a family", the pools "P.kv
  from outside, kv within", one member each.

Each program runs on the tier serQ picks and on the general engine (conform.run: the same JSON reports and
samples); the observes are asserted as (session, time, value) and the pools' and stages' figures as the
JSON report reads them (time averages over the horizon 10). Every number is derived in the case's comment.
"""

from __future__ import annotations

import pytest
from conform import report_json, run

CASES = [
    # The gateway's route runs on the queue's own stage (a fifo): s0 [0, 1], s1 [1, 2]; it sets prompt,
    # which the session reads back: 5 + serial.
    ("gateway_route", """
queue gw : gateway {
  serve fifo;
  route { run (1); set prompt = 5 + serial; }
}
workload {
  arrive batch(2);
  session { request gw; observe p = prompt; observe t = now; }
}
run { horizon 10; }
""", {"p": [(0, 1.0, 5.0), (1, 2.0, 6.0)], "t": [(0, 1.0, 1.0), (1, 2.0, 2.0)]},
     {("gw", None): {"completions": 2, "wait": 0.5, "service": 1.0}}),
    # Prefill, lease, transfer, decode. Prompt 4, two sessions. P: both hold 4 of P.kv from 0 (cap 8); the
    # fifo runs s0 [0, 1], s1 [1, 2]; each leases its 4 on (holds until its decoder's read). D: s0 holds 4 of
    # D.kv at 1, reads over link (ps(1), alone) [1, 2], which loads 4 and ends s0's lease (P.kv caches 4
    # from 2), runs 2 on D's fifo [2, 4] and marks first_token 4; s1 holds at 2, reads [2, 3] (lease ended,
    # cached from 3), runs [4, 6]: first_token 6. P.kv: used 4 · 2 + 4 · 3 = 20, cached 4 · 8 + 4 · 7 = 60,
    # holders (leases included) 2 + 3; D.kv: used 4 · 3 + 4 · 4 = 28, cached min(4, 4 loaded) from 4 and 6:
    # 24 + 16; D: waits 0 and 1 (0.5), present s0's [2, 4] and s1's [3, 6] (waiting [3, 4]): 5 over 10.
    ("prefill_lease_transfer_decode", """
let bs = 2;
stage link : ps(1);
queue P[1] : prefill {
  pool kv { cap 8; block bs; }
  serve fifo;
  prefill (prompt) {
    hold kv (prompt) { run (prompt / 4); } cache (prompt) lease kv (inf);
  }
}
queue D[1] : decode {
  pool kv { cap 8; block bs; }
  serve fifo;
  decode (prompt) from src {
    hold kv (prompt) {
      transfer on link (1) from src to kv (prompt);
      run (2);
      mark first_token;
    } cache (prompt);
  }
}
workload { arrive batch(2); }
session {
  set prompt = 4;
  P[0].prefill (prompt);
  D[0].decode (prompt) from P[0];
  observe ft = D.first_token;
}
run { horizon 10; }
""", {"ft": [(0, 4.0, 4.0), (1, 6.0, 6.0)]},
     {("P.kv", 0): {"used": 2.0, "cached": 6.0, "holders": 0.5, "admissions": 2},
      ("D.kv", 0): {"used": 2.8, "cached": 4.0, "holders": 0.7},
      ("D", 0): {"completions": 2, "wait": 0.5, "present": 0.5, "service": 2.0},
      ("link", None): {"completions": 2, "service": 1.0}}),
    # A family of two and self: s0 and s2 go to P[0], s1 to P[1]. P[0]: both hold 2 + 0 of P.kv[0] from 0,
    # the fifo runs 1 + 0: s0 [0, 1] (used 4 then: u = 40), s2 [1, 2] (used 2: 20). P[1]: s1 holds 3, runs
    # 2: [0, 2] (u = 30 + 1). P.kv[0]: used 2 + 4 = 6, cached 2 from 1 and 2 from 2: 18 + 16; P.kv[1]: used 6,
    # cached min(2, 3) = 2 from 2: 16.
    ("family_and_self", """
queue P[2] : prefill {
  pool kv { cap 8; }
  serve fifo;
  prefill (prompt) {
    hold kv (prompt + self) { run (1 + self); observe u = used(kv) * 10 + self; } cache (prompt);
  }
}
workload { arrive batch(3); }
session {
  set prompt = 2;
  set j = serial % 2;
  P[j].prefill (prompt);
  observe t = now;
}
run { horizon 10; }
""", {"u": [(0, 1.0, 40.0), (1, 2.0, 31.0), (2, 2.0, 20.0)],
                          "t": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]},
     {("P.kv", 0): {"used": 0.6, "cached": 3.4, "admissions": 2}, ("P.kv", 1): {"used": 0.6, "cached": 1.6},
      ("P", 0): {"completions": 2, "wait": 0.5}, ("P", 1): {"completions": 1, "service": 2.0}}),
    # "latency x on a link's serve is the wait before such a transfer: a delay stage L.latency of the link's
    # own, which every transfer on naming the link runs first". Two sessions hold 4 of P over [0, 1] and
    # lease them; each then holds 4 of Q and transfers on L (2) from P to Q (3): L.latency [1, 1.5], then
    # both reads share ps(2), 1 each: [1.5, 3.5]; the load makes Q's position 3 and the release ends P's
    # lease. Q caches min(4, 3) = 3, P 4: c = 34. P: used 4 · 3.5 · 2 = 28, cached 8 · 6.5 = 52; Q: used 4
    # · 2.5 · 2 = 20, cached 6 · 6.5 = 39; L present 2 · 2, L.latency 2 · 0.5.
    ("a_links_latency_then_its_read", """
pool P { cap 8; }
pool Q { cap 8; }
stage d : delay;
queue L : link { serve ps(2) latency 0.5; }
workload { arrive batch(2); }
session {
  hold P (4) { run d (1); } cache (4) lease P (inf);
  hold Q (4) { transfer on L (2) from P to Q (3); observe t = now; } cache (4);
  observe c = cachedin(Q) * 10 + cachedin(P);
}
run { horizon 10; }
""", {"t": [(0, 3.5, 3.5), (1, 3.5, 3.5)], "c": [(0, 3.5, 34.0), (1, 3.5, 34.0)]},
     {("P", None): {"used": 2.8, "cached": 5.2}, ("Q", None): {"used": 2.0, "cached": 3.9},
      ("L", None): {"completions": 2, "present": 0.4, "service": 2.0},
      ("L.latency", None): {"completions": 2, "present": 0.1, "service": 0.5}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_queue_by_hand(monkeypatch, src, obs, figures):
    r, got = run(src, monkeypatch)
    for name, want in obs.items():
        assert got[name] == want, name
    js = report_json(r)
    for (name, index), want in figures.items():
        entry = next(e for e in js["stages"] + js["pools"] if e["name"] == name and e["index"] == index)
        assert {k: entry[k] for k in want} == pytest.approx(want, rel=1e-12), (name, index)
