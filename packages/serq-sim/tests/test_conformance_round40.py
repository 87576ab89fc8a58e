"""Conformance of language.txt §3 and §7 (and pool-reference.txt, program-reference.txt) by hand, round 40:
the stages other than step (fifo with several servers and what its report counts, ps with arrivals and
departures in mid-service and a capacity that reads `present`, delay, runs of zero work, the order of equal
finish tags), routing over families with `choose`, `branch` and `loop` and what an observe and a gauge
report at the warm-up's edge, the report's figures on tiny runs (an observe's nearest-rank quantiles and
batch-means CI, a record table's interpolated percentiles, the hit rate and throughputs), §7's rules one at a
time on lib/vllm.sq's engine (budget, chunk, max_seqs, block round-up, the hit of whole blocks, LIFO
preemption and the recompute of what was generated), and the later dialect's `preempt by … requeue`,
`reserve held`, `queue by` with `waited` and `run { arrivals }`.

§3, Stages: "fifo(c): c servers, jobs in arrival order at rate 1. ps(φ): every job at once, each at
φ(present)/present. delay: every job on its own at rate 1 … A run of zero work completes at once."
§3, Ties: "jobs of a ps stage with equal finish tags finish in the order they started"; "choose: the keys,
in order, then the smallest index".

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value)
and the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import math

import pytest
from conform import check_by_hand

inf = math.inf
nan = math.nan

# ---------------------------------------------------------------------------------------------------------
# Stages other than step
# ---------------------------------------------------------------------------------------------------------

STAGES = [
    # ps(1), a job arriving twice in mid-service: s0 (4) alone on [0,1] (3 left); s1 (2) from 1: both at
    # 1/2 until 2 (s0 2.5, s1 1.5 left); s2 (3) from 2: three at 1/3, s1 done after 1.5 * 3 = 4.5 s, at
    # 6.5 (s0 2.5 - 1.5 = 1, s2 3 - 1.5 = 1.5 left); two at 1/2: s0 done after 2 s at 8.5 (s2 0.5 left);
    # s2 alone: 9. r = now - t0: s1 5.5, s0 8.5, s2 7. ps present: 1·1 + 2·1 + 3·4.5 + 2·2 + 1·0.5 = 21
    # over 10; some job present on [0,9]: 0.9; 3 runs, service (5.5 + 8.5 + 7) / 3 = 7. The delay: s1 on
    # [0,1], s2 on [0,2] (s0's run of 0 is no job): present 3 / 10, utilisation 2 / 10, 2 completions.
    ("ps_arrivals_in_mid_service", """
stage s : ps(1);
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial);
  set t0 = now;
  run s (serial == 0 ? 4 : serial == 1 ? 2 : 3);
  observe r = now - t0;
}
run { horizon 10; }
""", {"r": [(1, 6.5, 5.5), (0, 8.5, 8.5), (2, 9.0, 7.0)]},
     {("s", None): {"present": 2.1, "utilisation": 0.9, "completions": 3, "throughput": 0.3, "wait": 0.0,
                    "service": 7.0},
      ("d", None): {"present": 0.3, "utilisation": 0.2, "completions": 2, "wait": 0.0, "service": 1.5}}),
    # ps(min(present, 2)): three jobs of 2, 2, 4 each at 2/3 until 3 (s0, s1 done); s2 has 4 - 2 = 2 left
    # at min(1, 2) / 1 = 1: done at 5. present (3·3 + 1·2) / 10 = 1.1; utilisation 5 / 10.
    ("ps_capacity_reads_present", """
stage s : ps(min(present, 2));
workload { arrive batch(3); }
session { run s (serial == 2 ? 4 : 2); observe f = now; }
run { horizon 10; }
""", {"f": [(0, 3.0, 3.0), (1, 3.0, 3.0), (2, 5.0, 5.0)]},
     {("s", None): {"present": 1.1, "utilisation": 0.5, "completions": 3, "service": 11 / 3}}),
    # ps(present): every job at present / present = 1, as a delay: 1 and 3 end at 1 and 3.
    ("ps_of_present_is_rate_one_each", """
stage s : ps(present);
workload { arrive batch(2); }
session { run s (1 + 2 * serial); observe f = now; }
run { horizon 10; }
""", {"f": [(0, 1.0, 1.0), (1, 3.0, 3.0)]},
     {("s", None): {"present": 0.4, "utilisation": 0.3, "service": 2.0}}),
    # ps(2 * present - 1): capacity 1 alone, 3 with two (each at 3/2): s0 (3) and s1 (3) at 3/2 each: both
    # done at 2, s0 first (started first; the same instant).
    ("ps_capacity_more_than_one_per_job", """
stage s : ps(2 * present - 1);
workload { arrive batch(2); }
session { run s (3); observe f = now; }
run { horizon 10; }
""", {"f": [(0, 2.0, 2.0), (1, 2.0, 2.0)]}, {("s", None): {"utilisation": 0.2, "service": 2.0}}),
    # ps ties finish in start order: s1 starts at 0 with 3, s0 at 1 with 2 (s1 has 2 left then); both at
    # 1/2 end at 5. s1 started first, so it finishes first and is the first in p's queue: admitted at 5,
    # s0 after s1's run of 1, at 6.
    ("ps_equal_finish_tags_finish_in_start_order", """
pool p { cap 1; }
stage s : ps(1);
stage d : delay;
stage f : fifo;
workload { arrive batch(2); }
session {
  run d (serial == 0 ? 1 : 0);
  run s (serial == 0 ? 2 : 3);
  hold p (1) { observe a = now; run f (1); }
}
run { horizon 10; }
""", {"a": [(1, 5.0, 5.0), (0, 6.0, 6.0)]}, {("p", None): {"wait": 0.5, "admissions": 2}}),
    # fifo(2), jobs of 3, 1, 2: s0 and s1 served at 0, s1 done at 1, s2 from 1 to 3, s0 done at 3. Waits
    # 0, 0, 1 (1/3), services 3, 1, 2 (2); busy servers 2 on [0,3]: 6 / (2·10); present 3 on [0,1], 2 on
    # [1,3]: 7 / 10 = throughput 0.3 × (1/3 + 2).
    ("fifo_two_servers", """
stage s : fifo(2);
workload { arrive batch(3); }
session { run s (serial == 0 ? 3 : serial == 1 ? 1 : 2); observe f = now; }
run { horizon 10; }
""", {"f": [(1, 1.0, 1.0), (0, 3.0, 3.0), (2, 3.0, 3.0)]},
     {("s", None): {"present": 0.7, "utilisation": 0.3, "completions": 3, "throughput": 0.3,
                    "wait": 1 / 3, "service": 2.0}}),
    # the same under warmup 2: over [2,10] two jobs on both servers until 3: present 2 / 8, utilisation
    # 2 / (2·8); completions at or after 2: s0 and s2 at 3 (wait 0 and 1: 0.5, service 3 and 2: 2.5); s1's
    # at 1 is not, nor its sample.
    ("fifo_two_servers_under_a_warmup", """
stage s : fifo(2);
workload { arrive batch(3); }
session { run s (serial == 0 ? 3 : serial == 1 ? 1 : 2); observe f = now; }
run { horizon 10; warmup 2; }
""", {"f": [(0, 3.0, 3.0), (2, 3.0, 3.0)]},
     {("s", None): {"present": 0.25, "utilisation": 0.125, "completions": 2, "throughput": 0.25,
                    "wait": 0.5, "service": 2.5}}),
    # fifo(3), works 1 … 5: s0 [0,1], s1 [0,2], s2 [0,3], s3 [1,5], s4 [2,7]. Waits 0,0,0,1,2 (0.6),
    # services 1 … 5 (3); busy servers 3 on [0,3], 2 on [3,5], 1 on [5,7]: 15 / (3·10); present 5,4,3 on
    # the first three seconds, 2 on [3,5], 1 on [5,7]: 18 / 10 = 0.5 × (0.6 + 3).
    ("fifo_three_servers", """
stage s : fifo(3);
workload { arrive batch(5); }
session { run s (serial + 1); observe f = now; }
run { horizon 10; }
""", {"f": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 3.0, 3.0), (3, 5.0, 5.0), (4, 7.0, 7.0)]},
     {("s", None): {"present": 1.8, "utilisation": 0.5, "completions": 5, "wait": 0.6, "service": 3.0}}),
    # fifo(inf): every job at once; utilisation 0 by the report's rule (busy / inf).
    ("fifo_infinite_servers", """
stage s : fifo(inf);
workload { arrive batch(3); }
session { run s (2); observe f = now; }
run { horizon 10; }
""", {"f": [(0, 2.0, 2.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]},
     {("s", None): {"present": 0.6, "utilisation": 0.0, "wait": 0.0, "service": 2.0}}),
    # delay, two jobs of 1 and 3 at once: some job present on [0,3]; present (1 + 3) / 10.
    ("delay_utilisation_is_some_job_present", """
stage d : delay;
workload { arrive batch(2); }
session { run d (1 + 2 * serial); observe f = now; }
run { horizon 10; }
""", {"f": [(0, 1.0, 1.0), (1, 3.0, 3.0)]},
     {("d", None): {"present": 0.4, "utilisation": 0.3, "completions": 2, "service": 2.0}}),
    # a run of zero work at a busy fifo(1) completes at once, ahead of nothing and behind nothing: s1's
    # sample at 0; it is no job (1 completion, s0's).
    ("zero_work_at_a_busy_fifo_completes_at_once", """
stage s : fifo;
workload { arrive batch(2); }
session { run s (serial == 0 ? 2 : 0); observe f = now; }
run { horizon 10; }
""", {"f": [(1, 0.0, 0.0), (0, 2.0, 2.0)]},
     {("s", None): {"completions": 1, "present": 0.2, "utilisation": 0.2, "service": 2.0}}),
    # fifo(1) order is arrival order at the stage: s1 comes to the stage at 1 (after its delay), s0 at 2:
    # s2 (no delay) [0,2]; s1 [2,4]; s0 [4,6]. Waits 0, 1, 2.
    ("fifo_order_is_arrival_at_the_stage", """
stage s : fifo;
stage d : delay;
workload { arrive batch(3); }
session { run d (serial == 0 ? 2 : serial == 1 ? 1 : 0); run s (2); observe f = now; }
run { horizon 10; }
""", {"f": [(2, 2.0, 2.0), (1, 4.0, 4.0), (0, 6.0, 6.0)]}, {("s", None): {"wait": 1.0, "service": 2.0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in STAGES], ids=[c[0] for c in STAGES])
def test_stages_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# Routing over families, branch and loop, observes and gauges at the warm-up's edge
# ---------------------------------------------------------------------------------------------------------

FLOW = [
    # choose j in 3 by (queue(s[j])): each session's job is at its stage when the next chooses. s0: 0,0,0 →
    # 0; s1: 1,0,0 → 1; s2 → 2; s3: 1,1,1 → 0 (the smallest index). s[0] serves s0 [0,10], s3 [10,20]: its
    # waits 0 and 10.
    ("choose_by_queue_ties_to_the_smallest_index", """
stage s[3] : fifo;
workload { arrive batch(4); }
session { choose j in 3 by (queue(s[j])); observe c = j; run s[j] (10); }
run { horizon 100; }
""", {"c": [(0, 0.0, 0.0), (1, 0.0, 1.0), (2, 0.0, 2.0), (3, 0.0, 0.0)]},
     {("s", 0): {"completions": 2, "wait": 5.0, "service": 10.0}, ("s", 1): {"completions": 1}}),
    # a second key breaks the first's ties: (queue, -j): s0 → 2, s1 → 1, s2 → 0, s3 (1,1,1) → 2.
    ("choose_second_key_breaks_ties", """
stage s[3] : fifo;
workload { arrive batch(4); }
session { choose j in 3 by (queue(s[j]), -j); observe c = j; run s[j] (10); }
run { horizon 100; }
""", {"c": [(0, 0.0, 2.0), (1, 0.0, 1.0), (2, 0.0, 0.0), (3, 0.0, 2.0)]},
     {("s", 2): {"completions": 2, "wait": 5.0}}),
    # choose by work left: s0 (0,0) → 0 with 4; s1 (4,0) → 1 with 1; then at 2 (s2 after a delay of 2):
    # s[0] has 2 left, s[1] is empty (done at 1) → 1; s3 at 3 (delay 3): s[0] 1 left, s[1] 2 - 1 = ... s2's
    # job of 3 from 2 has 2 left at 3 → 0. Samples c at 0, 0, 2, 3.
    ("choose_by_work_left", """
stage s[2] : fifo;
stage d : delay;
workload { arrive batch(4); }
session {
  run d (serial);
  choose j in 2 by (work(s[j]));
  observe c = j;
  run s[j] (serial == 0 ? 4 : serial == 1 ? 1 : 3);
}
run { horizon 100; }
""", {"c": [(0, 0.0, 0.0), (1, 1.0, 1.0), (2, 2.0, 1.0), (3, 3.0, 0.0)]}, {}),
    # loop with a counter and an end: runs of 1 end at 1, 2, 3, 4; warmup 2 keeps the samples at 2 (the
    # warm-up's own instant counts), 3 and 4. delay: completions at 2, 3, 4; busy on [2,4] of [2,10]: 2 / 8.
    # The gauge of queue(d): 1 on [0,4], so 2 / 8 over [2,10], least 0 and greatest 1.
    ("loop_samples_at_the_warmup_edge", """
stage d : delay;
workload { arrive batch(1); }
session {
  set i = 0;
  loop {
    run d (1);
    set i = i + 1;
    observe k = i;
    branch (i == 4) { end; }
  }
}
gauge g = queue(d);
run { horizon 10; warmup 2; }
""", {"k": [(0, 2.0, 2.0), (0, 3.0, 3.0), (0, 4.0, 4.0)]},
     {("d", None): {"completions": 3, "utilisation": 0.25, "present": 0.25, "throughput": 0.375},
      ("gauge", "g"): {"mean": 0.25, "min": 0.0, "max": 1.0}}),
    # branch (e) else: even serials run 2, odd run 1 then 3 in the else's nested branch (serial == 3):
    # s0 2, s1 1, s2 2, s3 1 + 3 = 4 (two runs). delay completions 5.
    ("branch_else_nested", """
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial % 2 == 0) { run d (2); }
  else { run d (1); branch (serial == 3) { run d (3); } }
  observe f = now;
}
run { horizon 10; }
""", {"f": [(1, 1.0, 1.0), (0, 2.0, 2.0), (2, 2.0, 2.0), (3, 4.0, 4.0)]},
     {("d", None): {"completions": 5, "service": 9 / 5}}),
    # a gauge is read at the end of an instant: used(p) goes 1 → 0 → 1 at 2 (s0 releases, s1 is admitted
    # in that settle), so it is 1 on [0,4] and 0 after: 4 / 10; the 0 at 2 is held for no time and is not
    # its least value; 0 after 4 is.
    ("gauge_reads_the_end_of_an_instant", """
pool p { cap 1; }
stage d : delay;
workload { arrive batch(2); }
session { hold p (1) { run d (2); } }
gauge u = used(p);
gauge q = queued(p);
run { horizon 10; }
""", {}, {("gauge", "u"): {"mean": 0.4, "min": 0.0, "max": 1.0},
          ("gauge", "q"): {"mean": 0.2, "min": 0.0, "max": 1.0},
          ("p", None): {"used": 0.4, "queue": 0.2, "holders": 0.4, "wait": 1.0, "admissions": 2}}),
    # a gauge over a warm-up that ends mid-hold: used(p) 1 on [0,4] (two holds back to back), over [3,10]:
    # 1 / 7; the pool's admissions at or after 3: none (s1's at 2), its wait a mean over none.
    ("gauge_and_pool_under_a_warmup_mid_hold", """
pool p { cap 1; }
stage d : delay;
workload { arrive batch(2); }
session { hold p (1) { run d (2); } }
gauge u = used(p);
run { horizon 10; warmup 3; }
""", {}, {("gauge", "u"): {"mean": 1 / 7, "min": 0.0, "max": 1.0},
          ("p", None): {"used": 1 / 7, "admissions": 0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in FLOW], ids=[c[0] for c in FLOW])
def test_flow_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# The report's figures: an observe's statistics, a record table's metrics, a pool's time averages
# ---------------------------------------------------------------------------------------------------------


def test_observe_nearest_rank_quantiles_and_batch_ci_forty_samples(monkeypatch):
    """docs/simulator.md, Statistics: p50 … p99 are the ⌈q n⌉-th smallest; the CI is 2.093 × the standard
    deviation of 20 batch means of ⌊n / 20⌋ samples in the order taken, over √20; cv² the sample variance
    over mean². Samples 0 … 39 (serial, taken at 0 in serial order): p50 the 20th smallest (19), p90 the
    36th (35), p95 the 38th (37), p99 the ⌈39.6⌉ = 40th (39); mean 19.5; the batch means 0.5, 2.5, …, 38.5
    are 0.5 + 2k, whose sample variance is 4 · 20 · 21 / 12 = 140; the sample variance of 0 … 39 is
    40 · 41 / 12."""
    src = """
workload { arrive batch(40); }
session { observe x = serial; }
run { horizon 10; }
"""
    _, js = check_by_hand(monkeypatch, src, {}, {})
    x = js["observes"]["x"]
    assert x["count"] == 40 and x["mean"] == 19.5
    assert (x["p50"], x["p90"], x["p95"], x["p99"]) == (19.0, 35.0, 37.0, 39.0)
    assert x["ci"] == pytest.approx(2.093 * math.sqrt(140 / 20), rel=1e-12)
    assert x["cv2"] == pytest.approx((40 * 41 / 12) / 19.5 ** 2, rel=1e-12)


def test_observe_quantiles_forty_one_samples_last_outside_every_batch(monkeypatch):
    """41 samples 0 … 40: p50 the ⌈20.5⌉ = 21st smallest (20), p90 the ⌈36.9⌉ = 37th (36), p95 the ⌈38.95⌉
    = 39th (38), p99 the ⌈40.59⌉ = 41st (40); the mean is over all 41 (20), the CI over the 20 batches of
    the first 40 (the same 140 as with 40 samples); 39 samples have no quantiles and no CI."""
    src = """
workload { arrive batch(N); }
session { observe x = serial; }
run { horizon 10; }
"""
    _, js = check_by_hand(monkeypatch, src.replace("N", "41"), {}, {})
    x = js["observes"]["x"]
    assert (x["count"], x["mean"]) == (41, 20.0)
    assert (x["p50"], x["p90"], x["p95"], x["p99"]) == (20.0, 36.0, 38.0, 40.0)
    assert x["ci"] == pytest.approx(2.093 * math.sqrt(140 / 20), rel=1e-12)
    _, js = check_by_hand(monkeypatch, src.replace("N", "39"), {}, {})
    x = js["observes"]["x"]
    assert (x["count"], x["mean"]) == (39, 19.0)
    assert (x["ci"], x["p50"], x["p99"]) == (None, None, None)


def test_observe_quantiles_in_value_order_not_sample_order(monkeypatch):
    """Samples 39 - serial … taken in serial order (39, 38, …, 0): the same quantiles as 0 … 39 (nearest
    rank of the sorted values), and the batch means 38.5, 36.5, …, 0.5: the same CI."""
    src = """
workload { arrive batch(40); }
session { observe x = 39 - serial; }
run { horizon 10; }
"""
    _, js = check_by_hand(monkeypatch, src, {}, {})
    x = js["observes"]["x"]
    assert (x["p50"], x["p90"], x["p95"], x["p99"]) == (19.0, 35.0, 37.0, 39.0)
    assert x["ci"] == pytest.approx(2.093 * math.sqrt(140 / 20), rel=1e-12)


RECORD = """
stage d : delay;
workload { arrive batch(5); }
session {
  set t0 = now;
  run d (serial == 4 ? 10 : serial + 1);
  set f = now;
  run d (serial + 1);
  record request { sent = t0; first_token = f; last_token = now; output = OUT; prompt = 10; cached = serial; }
}
run { horizon 100; }
"""


def test_record_metrics_interpolate_linearly(monkeypatch):
    """docs/language.md: the median and percentiles of a request metric are numpy's (virtual index
    (n - 1) q / 100, linear interpolation). TTFT 1, 2, 3, 4, 10: mean 4, std √((9 + 4 + 1 + 0 + 36) / 5) =
    √10, median 3, p90 at index 3.6: 4 + 0.6 · 6 = 7.6, p95 (3.8) 8.8, p99 (3.96) 9.76. E2EL 2, 4, 6, 8,
    15 (the second run serial + 1): median 6, p90 8 + 0.6 · 7 = 12.2, p95 13.6, p99 14.72. TPOT (E2EL -
    TTFT) / (output - 1) = (serial + 1) / (serial + 1) = 1. Throughputs over end - warmup = 100: 5 / 100
    requests, output 2 + 3 + 4 + 5 + 6 = 20 / 100, total (50 + 20) / 100; hit rate Σ cached / Σ prompt =
    10 / 50."""
    _, js = check_by_hand(monkeypatch, RECORD.replace("OUT", "2 + serial"), {}, {})
    q = js["requests"]
    assert (q["completed"], q["duration"], q["total_input_tokens"], q["total_output_tokens"]) == (5, 100.0, 50.0,
                                                                                                  20.0)
    assert (q["request_throughput"], q["output_throughput"], q["total_token_throughput"]) == pytest.approx(
        (0.05, 0.2, 0.7), rel=1e-12)
    t = q["ttft"]
    assert (t["count"], t["mean"], t["median"]) == (5, 4.0, 3.0)
    assert (t["std"], t["p90"], t["p95"], t["p99"]) == pytest.approx((math.sqrt(10), 7.6, 8.8, 9.76), rel=1e-12)
    e = q["e2el"]
    assert (e["mean"], e["median"]) == (7.0, 6.0)
    assert (e["p90"], e["p95"], e["p99"]) == pytest.approx((12.2, 13.6, 14.72), rel=1e-12)
    assert (q["tpot"]["count"], q["tpot"]["mean"]) == (5, 1.0)
    assert q["prefix_cache_hit_rate"] == pytest.approx(0.2, rel=1e-12)


def test_record_metrics_even_count_median_and_one_token_requests(monkeypatch):
    """Four requests (batch 4), output 1 for serials 0 and 1, 2 + serial for the others: TTFT 1, 2, 3, 4,
    median of an even count (2 + 3) / 2 = 2.5, p90 at index 2.7: 3 + 0.7 · 1 = 3.7. TPOT only for the
    requests of more than one token, serials 2 and 3: 3 / 3 and 4 / 4, count 2, mean 1; output 1 + 1 + 4 +
    5. Under warmup 0.5 every row is out: each is sent at 0, before the warm-up's end (the rows are kept
    by `sent`, not by when they end): no value, count 0 and a null mean."""
    src = RECORD.replace("OUT", "serial < 2 ? 1 : 2 + serial").replace("batch(5)", "batch(4)")
    _, js = check_by_hand(monkeypatch, src, {}, {})
    q = js["requests"]
    assert (q["ttft"]["median"], q["ttft"]["count"]) == (2.5, 4)
    assert q["ttft"]["p90"] == pytest.approx(3.7, rel=1e-12)
    assert (q["tpot"]["count"], q["tpot"]["mean"]) == (2, 1.0)
    assert q["total_output_tokens"] == 1 + 1 + 4 + 5
    _, js = check_by_hand(monkeypatch, src.replace("horizon 100;", "horizon 100; warmup 0.5;"), {}, {})
    q = js["requests"]
    assert q["completed"] == 0 and q["ttft"]["count"] == 0 and q["ttft"]["mean"] is None


def test_pool_time_averages_with_block_rounding_and_reuse(monkeypatch):
    """cap 8, block 2: two holds of 3 round up to 4 each (used 8 on [0,1]); each caches min(3, computed 4)
    = 3 rounded down to 2; the second hold, reuse (4), consumes its own 2 (cached 2, the cache empty on
    [1,2]) and allocates 4 each (used 8 on [1,2]), then caches 4 each: cached 8 on [2,10]. used 16 / 10,
    cached 64 / 10, holders 2 · 2 / 10, four admissions, no wait."""
    src = """
pool kv { cap 8; block 2; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold kv (3) { run d (1); } cache (3);
  hold kv (4) reuse (4) { observe c = cached; run d (1); } cache (4);
}
run { horizon 10; }
"""
    check_by_hand(monkeypatch, src, {"c": [(0, 1.0, 2.0), (1, 1.0, 2.0)]},
                  {("kv", None): {"used": 1.6, "cached": 6.4, "holders": 0.4, "queue": 0.0, "wait": 0.0,
                                  "admissions": 4, "evicted_entries": 0}})


def test_mean_live_is_the_time_average_of_live_sessions(monkeypatch):
    """Sessions alive on [0,1], [0,2], [0,3] (runs of 1 + serial at a delay): (1 + 2 + 3) / 10 = 0.6; under
    warmup 1.5: (0.5 + 1.5) / 8.5."""
    src = """
stage d : delay;
workload { arrive batch(3); }
session { run d (1 + serial); }
run { horizon 10; }
"""
    _, js = check_by_hand(monkeypatch, src, {}, {})
    assert js["mean_live"] == pytest.approx(0.6, rel=1e-12)
    _, js = check_by_hand(monkeypatch, src.replace("horizon 10;", "horizon 10; warmup 1.5;"), {}, {})
    assert js["mean_live"] == pytest.approx(2 / 8.5, rel=1e-12)
