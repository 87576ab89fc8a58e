"""An eighth conformance audit: the language spec's own examples, written out as the smallest programs that
complete them, each run on the tier serQ picks and on the general engine (byte-identical reports) and held
to what the spec's words give by hand. The earlier rounds (test_conformance_hand.py … _audit7.py) check
most of §3's rules on programs of their own; these are the examples the spec itself shows that no test ran
as written:

(a) pool-reference's complete program (in this dialect: its items at the top level, the workload's session
    requesting the server);
(b) §2 "A KV transfer": the two holds in a row, a store-and-forward link, and the lease written for NIXL,
    `transfer on egress, ingress (…) from kvP to kvD (…)`;
(c) §3 "Gauges": the time fraction some decoder is full, and the spread of a family's used;
(d) program-reference "A finite run": `arrive renewal(~h2(2, 4))` with `run { … arrivals 1000; }`.
"""

from __future__ import annotations

from conform import at, close, pool, run, stage


def test_the_pool_references_complete_program(monkeypatch):
    """pool-reference "Examples": reqs { cap 2; }, a delay stage, arrive batch(3), the server holding reqs
    (1) around run svc (2), run with --horizon 10. s0 and s1 are admitted at 0 and done at 2; s2 waits for
    s0's slot and runs [2, 4]: responses 2, 2, 4. reqs: used 2 on [0, 2), 1 on [2, 4): 6 / 10; queue 1 on
    [0, 2): 0.2; waits 0, 0, 2. svc: present as used, some job on [0, 4): 0.4, three completions."""
    r, o = run("""
pool reqs { cap 2; }
stage svc : delay;
workload {
  arrive batch(3);
  session { request; }
}
server {
  set t0 = now;
  hold reqs (1) { run svc (2); }
  observe response = now - t0;
}
run { horizon 10; }
""", monkeypatch)
    assert at(o["response"]) == [(0, 2.0), (1, 2.0), (2, 4.0)]
    assert [v for _, _, v in o["response"]] == [2.0, 2.0, 4.0]
    p = pool(r, "reqs")
    assert (p.used, p.queue, p.holders, p.admissions) == (0.6, 0.2, 0.6, 3)
    assert close(p.wait, 2 / 3)
    s = stage(r, "svc")
    assert (s.present, s.utilisation, s.completions, s.service) == (0.6, 0.4, 3, 2.0)


def test_two_holds_in_a_row_are_a_store_and_forward_link(monkeypatch):
    """§2 "A KV transfer": `hold memP (T) { prefill (n + K); run link (T / 100); } cache (T); hold memD (T) {
    decode (o); }`: "a session holds the prefill instance's memory through the transfer and queues for the
    decode instance's afterwards". memP and memD hold one session's T = 40 each; prefill a fifo, link
    ps(1), decode a delay; n + K = 2, o = 3.

    s0: prefill [0, 2), link [2, 2.4) (40 / 100), memP released at 2.4, memD [2.4, 5.4): done 5.4. s1
    waits for memP until 2.4 (the link's end, not the prefill's), evicting s0's 40 cached there; prefill
    [2.4, 4.4), link [4.4, 4.8); memD is s0's until 5.4: decode [5.4, 8.4). memP: used 40 on [0, 4.8):
    19.2; cached s1's 40 on [4.8, 10]: 20.8; queue [0, 2.4): 0.24, waits 0, 2.4. memD: used [2.4, 8.4):
    24, queue [4.8, 5.4): 0.06."""
    r, o = run("""
pool memP { cap 40; }
pool memD { cap 40; }
stage prefill : fifo;
stage link : ps(1);
stage decode : delay;
workload { arrive batch(2); init { set T = 40; set n = 1; set K = 1; set o = 3; } }
session {
  hold memP (T) { prefill (n + K); run link (T / 100); } cache (T);
  hold memD (T) { decode (o); }
  observe done = now;
}
run { horizon 10; }
""", monkeypatch)
    assert at(o["done"]) == [(0, 5.4), (1, 8.4)]
    p, d = pool(r, "memP"), pool(r, "memD")
    assert close(p.used, 19.2) and close(p.cached, 20.8) and close(p.queue, 0.24) and close(p.wait, 1.2)
    assert (p.evicted_units, p.admissions) == (40.0, 2)
    assert close(d.used, 24.0) and close(d.queue, 0.06) and d.cached == 0
    assert (stage(r, "prefill").present, stage(r, "decode").present) == (0.4, 0.6)
    assert close(stage(r, "link").present, 0.008 * 10)


def test_the_lease_of_the_prefiller_until_the_decoders_read(monkeypatch):
    """§2 "A KV transfer", the NIXL form: the prefiller's hold ends with `cache (prompt) lease kvP (inf)`,
    and the decoder's `hold kvD (prompt) reserve (prompt), reqsD (0) reserve (1) { run setup (x0);
    transfer on egress, ingress (prompt - c) from kvP to kvD (prompt - 1 - c); hold reqsD (1) { prefill
    on D (1) growing kvD; decode on D (o - 1) growing kvD; } } cache (prompt + o)`. prompt 8, o 3, block
    4, both engines budget 16 and cost 1, setup x0 = 0.5, egress and ingress ps(10), maxmin.

    P's iteration [0, 1) prefills 8; the slot goes, kvP's 8 stay leased. kvD and reqsD (0, reserving 1)
    are admitted at 1; setup [1, 1.5); the read over both NICs at 10: [1.5, 2.3), loads 7 into kvD and
    ends the lease (kvP caches 8). D: the prefill token [2.3, 3.3) (position 8), decodes [3.3, 4.3) and
    [4.3, 5.3), the first growing kvD to 12: done 5.3. kvP: used 8 on [0, 2.3): 0.184, cached 8 after:
    7.816. kvD: 8 on [1, 3.3), 12 on [3.3, 5.3): 0.424; caches min(11, 10) = 10, rounded down to 8:
    7.576. reqsD: the outer hold of 0 units on [1, 5.3) and the inner one on [2.3, 5.3): used 0.03,
    holders 0.073, two admissions."""
    r, o = run("""
let bs = 4;
pool reqsP { cap 2; admit via P; }
pool kvP { cap 64; block bs; evict lru; preempt lifo; }
pool kvD { cap 64; block bs; evict lru; preempt lifo; }
pool reqsD { cap 2; admit via D; }
stage P : step { budget 16; cost 1; memory kvP; }
stage D : step { budget 16; cost 1; memory kvD; }
stage setup : delay;
stage egress : ps(10);
stage ingress : ps(10);
share maxmin;
workload { arrive batch(1); init { set prompt = 8; set o = 3; set x0 = 0.5; } }
session {
  hold reqsP (1), kvP (prompt) {
    set c = cached;
    prefill on P (prompt - c) growing kvP;
  } cache (prompt) lease kvP (inf);
  observe leased = used(kvP);
  hold kvD (prompt) reserve (prompt), reqsD (0) reserve (1) {
    run setup (x0);
    transfer on egress, ingress (prompt - c) from kvP to kvD (prompt - 1 - c);
    observe read = now;
    hold reqsD (1) { prefill on D (1) growing kvD; decode on D (o - 1) growing kvD; }
  } cache (prompt + o);
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["leased"] == [(0, 1.0, 8.0)]
    assert at(o["read"]) == [(0, 2.3)]
    assert at(o["done"]) == [(0, 5.3)]
    kvp, kvd, reqsd = pool(r, "kvP"), pool(r, "kvD"), pool(r, "reqsD")
    assert close(kvp.used, 0.184) and close(kvp.cached, 7.816)
    assert close(kvd.used, 0.424) and close(kvd.cached, 7.576)
    assert close(reqsd.used, 0.03) and close(reqsd.holders, 0.073) and reqsd.admissions == 2
    assert (stage(r, "P").iterations, stage(r, "D").iterations) == (1, 3)
    assert close(stage(r, "egress").present, 0.008) and close(stage(r, "ingress").utilisation, 0.008)


def test_the_gauges_of_a_full_decoder_and_of_the_spread(monkeypatch):
    """§3 Gauges: "the time fraction some decoder is full is gauge full = max j in N (free(reqs[j]) == 0);,
    the spread max j in N (used(kv[j])) - min j in N (used(kv[j]))". N = 2 slots of one: reqs[0] held on
    [0, 2), reqs[1] on [1, 4), horizon 5. full: 1 on [0, 4): 0.8; spread: 1 on [0, 1) and [2, 4): 0.6;
    every one full (min instead of max) on [1, 2): 0.2. Each is 0 and 1 for a positive time."""
    r, _ = run("""
let N = 2;
pool reqs[N] { cap 1; }
stage d : delay;
gauge full = max j in N (free(reqs[j]) == 0);
gauge spread = max j in N (used(reqs[j])) - min j in N (used(reqs[j]));
gauge all = min j in N (free(reqs[j]) == 0);
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold reqs[0] (1) { run d (2); } }
  else { run d (1); hold reqs[1] (1) { run d (3); } }
}
run { horizon 5; }
""", monkeypatch)
    g = r.result.gauges
    assert [(g[k].mean, g[k].min, g[k].max) for k in ("full", "spread", "all")] == [
        (0.8, 0.0, 1.0), (0.6, 0.0, 1.0), (0.2, 0.0, 1.0)]


def test_the_finite_run_example(monkeypatch):
    """program-reference "A finite run": `workload { arrive renewal(~h2(2, 4)); … } run { horizon 1e5;
    warmup 0; arrivals 1000; }`: "the run ends when the N-th session has arrived and every session has
    ended … The report gives the time the run ended as end, and its rates and time averages are over end −
    warmup". So 1000 arrivals, 1000 sessions ended, end far below the horizon (1000 gaps of mean 2: the
    sum's standard deviation is sqrt(1000 · 4 · 2²) ≈ 126, so within 2000 ± 500), and the stage's
    throughput is its 1000 completions over end."""
    r, _ = run("""
stage s : fifo;
workload { arrive renewal(~h2(2, 4)); }
session { run s (~exp(1)); }
run { horizon 1e5; warmup 0; arrivals 1000; }
""", monkeypatch)
    res = r.result
    assert (res.horizon, res.arrivals, res.ended) == (1e5, 1000, 1000)
    assert 1500 < res.end < 2500
    s = stage(r, "s")
    assert s.completions == 1000 and close(s.throughput, 1000 / res.end)


ORDERS = """
pool reqs { cap 16; admit via E; }
pool kv { cap 150; block 4; evict lru; preempt lifo; }
stage E : step { budget 16; cost 0.01 + 0.001 * tokens; memory kv; SERVE }
workload { arrive poisson(6); hidden o; init { set n = 1 + floor(~exp(25)); set o = 1 + floor(~exp(8)); } }
session {
  set t0 = now;
  hold reqs (1), kv (min(n, budget_left(E))) reserve (n) {
    run E prefill (n) growing kv;
    observe ttft = now - t0;
    run E decode (o - 1) growing kv;
  } cache (n + o);
  observe resp = now - t0;
}
run { horizon 10; seed 3; }
"""


def test_serving_in_admission_order_is_serving_decode_first_without_a_chunk(monkeypatch):
    """§3 Stages: "Without a per-request chunk cap, serving in admission order is serving decode-first": a
    vLLM-shaped engine (every request prefills, then decodes, in one admission; no `chunk`) under load,
    with preemptions (the victims re-admitted), gives every session the same first token and end under
    `serve admission` as under `serve decode first`, on both tiers. Serving prefills first does not: the
    orders differ on this load."""
    runs = {}
    for serve in ("serve admission;", "serve decode first;", "serve by (decoding ? 1 : 0);"):
        r, o = run(ORDERS.replace("SERVE", serve), monkeypatch)
        runs[serve] = (o["ttft"], o["resp"], pool(r, "kv").preemptions)
    assert runs["serve admission;"] == runs["serve decode first;"]
    assert runs["serve admission;"][2] > 0 and len(runs["serve admission;"][1]) > 50
    assert runs["serve by (decoding ? 1 : 0);"][:2] != runs["serve admission;"][:2]
