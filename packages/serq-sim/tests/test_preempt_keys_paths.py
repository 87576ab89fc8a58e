"""``preempt by (keys)`` on a step stage's memory pool, for keys that read neither ``admission`` nor
``position``, walks the candidates as the pool holds them (``PreemptByKeys._engine_victim``) instead of
building their list in admission order at every victim asked for (a program thrashing under memory
pressure spent most of its time sorting candidates: 1 000 sessions, 115 000 preemptions, 26 s). Both ways
must choose the same victim: the least keys, a tie to the last admitted, a NaN key as inf. Checked byte
for byte against the list's way on programs built to have ties, NaN keys, the decoding key and several
engines, each with preemptions."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim.policies.preemption import PreemptByKeys

TEMPLATE = """
pool kv {{ cap {cap}; block 8; evict lru; preempt by ({keys}) requeue {requeue}; }}
pool reqs {{ cap 40; admit via E; }}
stage E : step {{ budget 64; cost 0.01 + 0.001 * decoders; memory kv; }}
workload {{ arrive poisson(40); }}
session {{
  set pri = floor(~uniform(0, 3));
  set odd = pri == 1 ? 0 / 0 : pri;
  set t0 = now;
  hold reqs (1), kv (8) {{
    run E prefill (floor(~uniform(10, 120))) growing kv;
    run E decode (floor(~uniform(5, 80))) growing kv;
  }}
  observe response = now - t0;
  end;
}}
run {{ horizon 30; seed {seed}; }}
"""

CASES = [
    ("pri", "tail"),            # ties among equal priorities: the last admitted
    ("-pri, t0", "head"),
    ("odd", "tail"),            # NaN keys (compare as inf)
    ("decoding, -pri", "tail"),  # the decoding key
    ("0", "head"),              # every key equal: the last admitted, as lifo
]


def _run(src, monkeypatch, listed):
    if listed:
        built = PreemptByKeys.__init__

        def listing(self, *args):  # the policy without the walk: it asks for the candidates' list
            built(self, *args)
            self.walk = None

        monkeypatch.setattr(PreemptByKeys, "__init__", listing)
    else:
        monkeypatch.undo()
    r = serq_sim.run(serq_frontend.compile(source=src))
    return encode_json(r), r


@pytest.mark.parametrize("keys, requeue", CASES)
@pytest.mark.parametrize("seed", [1, 2])
def test_the_walk_chooses_the_victim_the_list_chooses(monkeypatch, keys, requeue, seed):
    src = TEMPLATE.format(cap=600, keys=keys, requeue=requeue, seed=seed)
    walked, r = _run(src, monkeypatch, listed=False)
    listed, _ = _run(src, monkeypatch, listed=True)
    assert walked == listed
    kv = next(p for p in r.result.pools if p.name == "kv")
    assert kv.preemptions > 20, kv.preemptions  # the comparison covers many victims
