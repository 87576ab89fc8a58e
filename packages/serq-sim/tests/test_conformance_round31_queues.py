"""Conformance of language.txt §2, Queues, by hand: one prefill and one decode queue (families of one), a
gateway, and the pull relation "D pull P latency x0 share maxmin": "Inside an entry of D called from P[i], a
transfer without on is the read: the kernel's run D.nic.latency[j] (x0); run P.nic[i], D.nic[j] (…); load
D.kv[j] (…); release P.kv[i];", the prefiller's "cache (prompt) lease kv (inf)" held until the decoder's read
takes it, and "mark first_token;, read afterwards as D.first_token".

The program runs on the tier serQ picks and on the general engine (conform.run); the pools' and stages'
figures are asserted as the JSON report reads them.
"""

from __future__ import annotations

import pytest
from conform import pool_json, report_json, run

PD = """
use "vllm.sq";
let bs = 4;
queue P[1] : prefill {
  pool reqs { cap 4; admit via P; }
  pool kv { cap 100; block bs; evict lru; preempt lifo; }
  serve step { budget 16; cost 1; memory kv; }
  nic ps(4);
  prefill (prompt) {
    hold reqs (1), kv (min(prompt, hit + budget_left(P))) reserve (prompt) reuse (hit)
         at admission (hit = min(cachedin(kv), reusable(prompt, bs))) {
      set c = cached;
      prefill (prompt - c) growing kv;
    } cache (prompt) lease kv (inf);
  }
}
queue D[1] : decode {
  pool reqs { cap 4; admit via D; }
  pool kv { cap 100; block bs; evict lru; preempt lifo; admit via D; }
  serve step { budget 16; cost 1; memory kv; }
  nic ps(2);
  decode (prompt) from src {
    hold kv (prompt) reserve (prompt), reqs (0) reserve (1) reuse (hit)
         at admission (hit = min(cachedin(kv), reusable(prompt, bs))) {
      set c = cached;
      transfer (prompt - c) from src to kv (prompt - 1 - c);
      hold reqs (1) {
        prefill (1) growing kv;
        mark first_token;
        decode (o - 1) growing kv;
      }
    } cache (prompt + o);
  }
}
D pull P latency 0.5 share maxmin;
queue gw : gateway {
  serve delay;
  route {
    set t0 = now;
    set prompt = n;
    P[0].prefill (prompt);
    observe pf = now;
    D[0].decode (prompt) from P[0];
    observe ttft = D.first_token - t0;
    observe response = now - t0;
  }
}
workload {
  arrive batch(1);
  hidden o;
  turn { set n = 8; set o = 3; }
  session { turn; request gw; }
}
run { horizon 20; }
"""


def _stage(r, name) -> dict:
    return next(s for s in report_json(r)["stages"] if s["name"] == name)


def test_a_prefill_then_a_pulled_read_then_the_decode(monkeypatch):
    """One request, prompt 8, 3 out, blocks of 4, cost 1 an iteration. P admits it at 0 (no hit; min(8, 0 +
    16) = 8 units) and prefills 8 over [0, 1]: the entry returns at 1 (pf), its slot freed, its 8 units
    leased. D admits the decode's hold (kv 8 reserving 8, a slot reserved) at 1; the read waits the
    latency 0.5 on D.nic.latency, then runs over P.nic (ps(4)) and D.nic (ps(2)) at once, max-min fair:
    the rate is 2 (D's NIC fills), 8 tokens take 4 s, [1.5, 5.5]; then 7 tokens load into D.kv and `release`
    takes P's lease, which caches its 8. The slot is admitted at D's iteration at 5.5: one token of prefill
    (position 8) over [5.5, 6.5], the mark (first token 6.5), two decodes (position 9 takes a third block)
    to 8.5; the hold caches min(11, 10) = 10, rounded down to 8.

    P.kv: 8 on [0, 5.5] (held, then leased): 44 over 20; cached 8 from 5.5: 116. D.kv: 8 on [1, 6.5], 12
    on [6.5, 8.5]: 68; cached 8 from 8.5: 92. D.reqs: 1 unit on [5.5, 8.5]; its holders the reserving hold
    on [1, 8.5] and the slot on [5.5, 8.5]: 10.5. P.nic carries 2 of 4 for 4 s: utilisation 2 over 20,
    present 4; D.nic 2 of 2: 4. D: three iterations of one token (tokens 1), two completions (the prefill
    token and the decode), busy 3."""
    r, obs = run(PD, monkeypatch)
    assert (obs["pf"], obs["ttft"], obs["response"]) == ([(0, 1.0, 1.0)], [(0, 8.5, 6.5)], [(0, 8.5, 8.5)])
    want = {
        ("P.kv", 0): {"used": 2.2, "cached": 5.8, "admissions": 1},
        ("D.kv", 0): {"used": 3.4, "cached": 4.6, "admissions": 1},
        ("D.reqs", 0): {"used": 0.15, "holders": 0.525, "admissions": 2},
        ("P.reqs", 0): {"used": 0.05, "admissions": 1},
    }
    for (name, index), fields in want.items():
        got = pool_json(r, name, index)
        assert {k: got[k] for k in fields} == pytest.approx(fields, rel=1e-12), name
    stages = {n: _stage(r, n) for n in ("P.nic", "D.nic", "D.nic.latency", "D", "P")}
    assert (stages["P.nic"]["utilisation"], stages["P.nic"]["present"], stages["P.nic"]["service"]) == \
        pytest.approx((0.1, 0.2, 4.0), rel=1e-12)
    assert (stages["D.nic"]["utilisation"], stages["D.nic.latency"]["service"]) == pytest.approx((0.2, 0.5))
    assert {k: stages["D"][k] for k in ("iterations", "tokens", "completions", "utilisation")} == \
        {"iterations": 3, "tokens": 1.0, "completions": 2, "utilisation": 0.15}
    assert (stages["P"]["iterations"], stages["P"]["tokens"]) == (1, 8.0)
