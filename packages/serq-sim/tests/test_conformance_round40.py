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

import json
import math

import pytest
from conform import check_by_hand, pool_json, report_json, request_rows, run, run_error, vllm_engine
from serq_vllm.scenarios import ORACLE, answer_path, read_scenario, run_scenario

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


# ---------------------------------------------------------------------------------------------------------
# What a stage's observables read in mid-service
# ---------------------------------------------------------------------------------------------------------

MIDSERVICE = [
    # work(s) at a ps(1) is the work its jobs have left: at 1, s0 (4) has run alone for 1 s: 3; at 2, s0 has
    # 3 - 0.5 = 2.5 and s1 (2 from 1) 1.5: 4. busy(s) is every job present: 0, 1, 2. Under warmup 4 the
    # samples (all before 4) are out; over [4,20] the stage holds 3 jobs until 6.5, 2 until 8.5, 1 until 9:
    # 7.5 + 4 + 0.5 = 12 over 16; some job on [4,9]: 5 / 16; all three runs end after 4 and count whole
    # (service 7). The delay's two runs end at 1 and 2: none counted, nothing present after 4.
    ("ps_work_left_in_mid_service", """
stage s : ps(1);
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial);
  observe w = work(s);
  observe b = busy(s);
  run s (serial == 0 ? 4 : serial == 1 ? 2 : 3);
}
gauge g = queue(s);
run { horizon 20; warmup W; }
""", {"w": [(0, 0.0, 0.0), (1, 1.0, 3.0), (2, 2.0, 4.0)], "b": [(0, 0.0, 0.0), (1, 1.0, 1.0), (2, 2.0, 2.0)]},
     {("s", None): {"completions": 3, "service": 7.0, "present": 21 / 20, "utilisation": 9 / 20},
      ("gauge", "g"): {"mean": 21 / 20, "min": 0.0, "max": 3.0}}),
    # fifo(2): work(f) counts the jobs in service by what they have left and the waiting whole. s0 (3) and
    # s1 (3 from 1) in service, s2 at 2: 1 + 2 = 3; s3 at 2.5 (s2 waiting with 3): 0.5 + 1.5 + 3 = 5.
    # busy(f) 2, queue(f) 3 at 2.5 (two served, one waiting).
    ("fifo_two_servers_work_left", """
stage f : fifo(2);
stage d : delay;
workload { arrive batch(4); }
session {
  run d (serial == 3 ? 2.5 : serial);
  observe w = work(f);
  observe b = busy(f);
  observe q = queue(f);
  run f (3);
}
run { horizon 20; warmup W; }
""", {"w": [(0, 0.0, 0.0), (1, 1.0, 2.0), (2, 2.0, 3.0), (3, 2.5, 5.0)],
      "b": [(0, 0.0, 0.0), (1, 1.0, 1.0), (2, 2.0, 2.0), (3, 2.5, 2.0)],
      "q": [(0, 0.0, 0.0), (1, 1.0, 1.0), (2, 2.0, 2.0), (3, 2.5, 3.0)]},
     {("f", None): {"completions": 4, "wait": (0 + 0 + 1 + 1.5) / 4, "service": 3.0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in MIDSERVICE], ids=[c[0] for c in MIDSERVICE])
def test_observables_in_mid_service(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src.replace("W", "0"), obs, figures)


def test_ps_under_a_warmup_after_every_sample(monkeypatch):
    """MIDSERVICE's first program under warmup 4: see its comment."""
    src = MIDSERVICE[0][1].replace("W", "4")
    check_by_hand(monkeypatch, src, {"w": [], "b": []},
                  {("s", None): {"completions": 3, "service": 7.0, "present": 0.75, "utilisation": 0.3125,
                                 "throughput": 3 / 16},
                   ("d", None): {"completions": 0, "present": 0.0, "utilisation": 0.0},
                   ("gauge", "g"): {"mean": 0.75, "min": 0.0, "max": 3.0}})


# ---------------------------------------------------------------------------------------------------------
# The later dialect: queue by with waited and budget_left, preempt by … requeue, reserve held, run { arrivals }
# ---------------------------------------------------------------------------------------------------------

EXTRAS = [
    # pool-reference.txt's priority lanes, verbatim: queue by (immediate ? 0 : prompt > 128 && waited >= 3 ?
    # 1 : prompt <= 128 ? 2 : 3, serial). s0 holds p for 5; s1 (long) queues at 0, s2 (short) at 1, s3
    # (long) at 3. At 5: s1 waited 5 (lane 1), s2 lane 2, s3 waited 2 (lane 3): s1. At 6 (s1's hold of 1
    # done; no timer before): s3 waited 3, lane 1, ahead of s2 (lane 2): s3, then s2 at 7. Waits 0, 5, 3
    # (6 - 3), 6 (7 - 1): 3.5; queued s1 on [0,5], s2 on [1,7], s3 on [3,6]: 14 / 100.
    ("queue_by_priority_lanes_with_aging", """
pool p { cap 1; queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3, serial); }
stage d : delay;
workload { arrive batch(4); }
session {
  set immediate = 0;
  set prompt = serial == 2 ? 100 : 200;
  run d (serial == 2 ? 1 : serial == 3 ? 3 : 0);
  hold p (1) { observe a = now; run d (serial == 0 ? 5 : 1); }
}
run { horizon 100; }
""", {"a": [(0, 0.0, 0.0), (1, 5.0, 5.0), (3, 6.0, 6.0), (2, 7.0, 7.0)]},
     {("p", None): {"wait": 3.5, "queue": 0.14, "admissions": 4, "used": 0.08}}),
    # queue by (-waited): the longest waiter first, s2 (queued at 0.5) before s1 (at 1) though s1 has the
    # smaller serial; both wait for s0's release at 3.
    ("queue_by_minus_waited_longest_first", """
pool p { cap 1; queue by (-waited); }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 1 ? 1 : serial == 2 ? 0.5 : 0);
  hold p (1) { observe a = now; run d (serial == 0 ? 3 : 1); }
}
run { horizon 100; }
""", {"a": [(0, 0.0, 0.0), (2, 3.0, 3.0), (1, 4.0, 4.0)]}, {("p", None): {"wait": (0 + 2.5 + 3) / 3}}),
    # With admit via, a queue key reading budget_left is evaluated again after each admission (budget 8):
    # all three keys 0 at first (6, 3, 2 ≤ 8): s0 (serial) takes 6 tokens; then 2 are left: s1 (3 > 2) key
    # 1, s2 (2) key 0: s2 takes the 2; none left. s1 at the next iteration, [1,2].
    ("queue_key_reads_budget_left_after_each_admission", """
pool q { cap 8; admit via e; queue by (prompt > budget_left(e) ? 1 : 0, serial); }
stage e : step { budget 8; cost 1; }
workload { arrive batch(3); }
session {
  set prompt = serial == 0 ? 6 : serial == 1 ? 3 : 2;
  hold q (1) { observe a = now; run e prefill (prompt); }
  observe f = now;
}
run { horizon 100; }
""", {"a": [(0, 0.0, 0.0), (2, 0.0, 0.0), (1, 1.0, 1.0)], "f": [(0, 1.0, 1.0), (2, 1.0, 1.0), (1, 2.0, 2.0)]},
     {("q", None): {"admissions": 3, "wait": 1 / 3}, ("e", None): {"iterations": 2}}),
    # preempt by (admission) requeue tail on a pool no stage names (candidates: the holders in a hold
    # scope). cap 6: s0 holds 2 (run 10), s1 2; s2 (5) queues at 0.5. At 1 s1 grows by 3 (7 > 6): the
    # least key is s0's (admitted first): it leaves its run, gives its 2 back, and goes to the tail, behind
    # s2; s1 grows to 5. At 2 s1 ends: s2 (5) is the head and fits; s0 (2) does not beside it until 3; s0
    # runs its 10 again: 13. Used 2 + 2 + 5 + 5 + 20 = 34 / 100; waits 0, 0, 1.5, 2 (s0 from 1 to 3).
    ("preempt_by_admission_requeue_tail", """
pool p { cap 6; preempt by (admission) requeue WHERE; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold p (2) { observe a = now; run d (10); } }
  else {
    branch (serial == 1) { hold p (2) { observe a = now; run d (1); grow p (3); run d (1); } }
    else { run d (0.5); hold p (5) { observe a = now; run d (1); } }
  }
  observe f = now;
}
run { horizon 100; }
""".replace("WHERE", "tail"), {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 2.0, 2.0), (0, 3.0, 3.0)],
                                "f": [(1, 2.0, 2.0), (2, 3.0, 3.0), (0, 13.0, 13.0)]},
     {("p", None): {"used": 0.34, "wait": 0.875, "admissions": 4, "preemptions": 1, "queue": 0.035}}),
    # requeue head: s0 goes back ahead of s2, fits at 2 (2 of 6) and blocks s2 (5) until 12. Waits 0, 0,
    # 1 (s0 from 1 to 2), 11.5 (s2 from 0.5): 3.125; queued s2 on [0.5,12], s0 on [1,2]: 12.5 / 100.
    ("preempt_by_admission_requeue_head", """
pool p { cap 6; preempt by (admission) requeue WHERE; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold p (2) { observe a = now; run d (10); } }
  else {
    branch (serial == 1) { hold p (2) { observe a = now; run d (1); grow p (3); run d (1); } }
    else { run d (0.5); hold p (5) { observe a = now; run d (1); } }
  }
  observe f = now;
}
run { horizon 100; }
""".replace("WHERE", "head"), {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (0, 2.0, 2.0), (2, 12.0, 12.0)],
                                "f": [(1, 2.0, 2.0), (0, 12.0, 12.0), (2, 13.0, 13.0)]},
     {("p", None): {"used": 0.34, "wait": 3.125, "admissions": 4, "preemptions": 1, "queue": 0.125}}),
    # reserve held, and cached prefixes evicted when units are allocated, not when reserved. cap 10: s0
    # caches 6 at 1. s1 at 2: 0 + 8 ≤ 10, allocates 2 (2 + 6 cached = 8: no eviction); free(p) = 10 - 2 -
    # the 6 unallocated = 2 (cached units are room). s2 (1) at 3: used 2 + 6 + 1 = 9 fits. s1 grows by 6 at
    # 4 within its reservation: 3 + 0 + 6 ≤ 10, and the allocation (9 + 6 cached > 10) evicts s0's entry
    # whole (no block). used: 6, 0, 2, 3, 9 on the first five seconds, then s2's 1 until 13: 28 / 100;
    # cached 6 on [1,4]. free(p): 4, 10, 2, 1, 1, then 9 until 13 and 10: 960 / 100, least 1.
    ("reserve_held_and_cache_evicted_at_allocation", """
pool p { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold p (6) { run d (1); } cache (6); }
  else {
    branch (serial == 1) {
      run d (2);
      hold p (2) reserve (8) { observe fr = free(p); run d (2); grow p (6); observe g = used(p); run d (1); }
    }
    else { run d (3); hold p (1) { observe a = now; run d (10); } }
  }
}
gauge fg = free(p);
run { horizon 100; }
""", {"fr": [(1, 2.0, 2.0)], "g": [(1, 4.0, 9.0)], "a": [(2, 3.0, 3.0)]},
     {("p", None): {"used": 0.28, "cached": 0.18, "evicted_entries": 1, "evicted_units": 6.0, "wait": 0.0},
      ("gauge", "fg"): {"mean": 9.6, "min": 1.0, "max": 10.0}}),
    # reserve held: s0 holds 2 of a reservation of 8 (6 unallocated); s1 (2): 2 + 6 + 2 = 10 fits; s2 (1):
    # 4 + 6 + 1 = 11 waits. At 2 s0 grows by 4 (4 + 0 + 4 ≤ 10: its own reservation is room): 6 left, 2
    # of them unallocated. At 3 s1 ends: 6 + 2 + 1 = 9: s2 admitted. used 4, 8, 7, 6 on [0,5]: 29 / 100;
    # holders 2 on [0,4], 1 on [4,5]: 9 / 100; s2 queued on [0,3].
    ("reserve_held_unallocated_reservation_blocks_a_newcomer", """
pool p { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold p (2) reserve (8) { run d (2); grow p (4); observe g = now; run d (3); } }
  else {
    branch (serial == 1) { hold p (2) { run d (3); } }
    else { hold p (1) { observe a = now; run d (1); } }
  }
}
run { horizon 100; }
""", {"a": [(2, 3.0, 3.0)], "g": [(0, 2.0, 2.0)]},
     {("p", None): {"used": 0.29, "holders": 0.09, "queue": 0.03, "wait": 1.0, "admissions": 3}}),
    # the same without reserve held: the reservation is checked at admission only, and s2 goes in at 0.
    ("without_reserve_held_the_reservation_is_checked_once", """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold p (2) reserve (8) { run d (2); grow p (4); observe g = now; run d (3); } }
  else {
    branch (serial == 1) { hold p (2) { run d (3); } }
    else { hold p (1) { observe a = now; run d (1); } }
  }
}
run { horizon 100; }
""", {"a": [(2, 0.0, 0.0)], "g": [(0, 2.0, 2.0)]}, {("p", None): {"queue": 0.0, "wait": 0.0}}),
    # run { arrivals 3 } with renewal(2): arrivals at 2, 4, 6 (the first after one gap), each a run of 1;
    # the run ends when the third session does, at 7: end 7, time averages over [1, 7]: present and
    # mean_live 3 / 6, throughput 3 / 6.
    ("arrivals_end_the_run_when_drained", """
workload { arrive renewal(2); }
stage d : delay;
session { run d (1); observe f = now; }
gauge q = queue(d);
run { horizon 100; warmup 1; arrivals 3; }
""", {"f": [(0, 3.0, 3.0), (1, 5.0, 5.0), (2, 7.0, 7.0)]},
     {"end": 7.0, "horizon": 100.0, "mean_live": 0.5, "arrivals": 3, "ended": 3,
      ("d", None): {"present": 0.5, "throughput": 0.5, "completions": 3}, ("gauge", "q"): {"mean": 0.5}}),
    # the deadline is inclusive: the third session ends at 7 = horizon: drained; runs of 0 end at their
    # arrivals, the last at 6: end 6 under horizon 7.
    ("arrivals_drained_at_the_horizon", """
workload { arrive renewal(2); }
stage d : delay;
session { run d (1); observe f = now; }
run { horizon 7; arrivals 3; }
""", {"f": [(0, 3.0, 3.0), (1, 5.0, 5.0), (2, 7.0, 7.0)]}, {"end": 7.0, "mean_live": 3 / 7}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in EXTRAS], ids=[c[0] for c in EXTRAS])
def test_later_dialect_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


@pytest.mark.parametrize("run_block, message", [
    # the third session arrives at 6 and is still in its run at 6.5
    ("run { horizon 6.5; arrivals 3; }", "at t=6.5: run { arrivals 3; }: 1 session still live at the horizon"),
    # the third arrival would be at 6
    ("run { horizon 5; arrivals 3; }", "at t=5: run { arrivals 3; }: only 2 arrivals by the horizon"),
    # drained at 7 = the warm-up's end: nothing to measure
    ("run { horizon 100; warmup 7; arrivals 3; }", "run { arrivals 3; }: drained at t=7, at or before the warmup 7"),
])
def test_arrivals_errors(monkeypatch, run_block, message):
    src = f"""
workload {{ arrive renewal(2); }}
stage d : delay;
session {{ run d (1); observe f = now; }}
{run_block}
"""
    assert message in run_error(src, monkeypatch)


# ---------------------------------------------------------------------------------------------------------
# §7 on lib/vllm.sq's engine (conform.VLLM_ENGINE: the step clock, cost 1, blocks of 4 tokens): rows
# (session, sent, admitted, first_token, last_token, cached, preemptions)
# ---------------------------------------------------------------------------------------------------------


def _engine(**kw) -> str:
    subs = dict(MAXSEQ="256", BLOCKS="100", B="32", CHUNK="", N="2", PROMPT="4", OUT="1",
                REQUEST="vllm_request(reqs, kv, engine, prompt, o, t0)")
    subs.update(kw)
    return vllm_engine(**subs)


VLLM = [
    # max_num_seqs = pool reqs { cap 1 }: s1 waits for s0's release. Budget 8, prompts 4, 2 out: [0,1] s0
    # prefills 4 (first token 1), [1,2] its one decode (done 2); s1 admitted by the iteration at 2, first
    # token 3, done 4. 4 iterations of 4, 1, 4, 1 tokens: 2.5 a step, 2.5 / 8 of the budget.
    ("max_seqs_one", _engine(MAXSEQ="1", B="8", OUT="2"),
     [(0, 0.0, 0.0, 1.0, 2.0, 0, 0), (1, 0.0, 2.0, 3.0, 4.0, 0, 0)],
     {"iterations": 4, "tokens": 2.5, "token_utilisation": 2.5 / 8, "prefill_only": 2, "decode_only": 2},
     {"reqs": {"wait": 1.0, "admissions": 2}}),
    # admission needs blocks for the whole prompt, rounded up: 3 blocks of 4, prompt 5 (2 blocks), 4 out.
    # s0 reserves and allocates 8, computes positions 0 … 7 (prefill 5, decodes 5, 6, 7 at [1,4]); s1's
    # reserve of 8 does not fit beside it (16 > 12). At 4 s0 caches min(9, 8) = 8, two blocks; s1 then
    # needs 8 next to the 8 cached in 12: one block of s0's entry goes, from its tail (4 units, the entry
    # not whole), at the admission's instant. s1: first token 5, done 8, and caches its own 8. kv used 8 on
    # [0,8]: 0.64; cached s0's 4 on [4,100] and s1's 8 on [8,100]: (384 + 736) / 100.
    ("reserve_whole_prompt_in_blocks", _engine(BLOCKS="3", B="16", PROMPT="5", OUT="4"),
     [(0, 0.0, 0.0, 1.0, 4.0, 0, 0), (1, 0.0, 4.0, 5.0, 8.0, 0, 0)],
     {"iterations": 8},
     {"kv": {"used": 0.64, "cached": 11.2, "evicted_units": 4.0, "evicted_entries": 0},
      "reqs": {"wait": 2.0}}),
    # chunk 3 and the budget shared in admission order: budget 8, prompts 5 (1 out). s0 admitted with
    # min(5, 0 + 8) = 5 units and prefills a chunk of 3; s1 with the 5 left: chunk 3. [1,2] both their
    # last 2: first tokens (and last) at 2. 6 and 4 tokens.
    ("chunk_caps_each_newcomer", _engine(CHUNK="chunk 3;", B="8", PROMPT="5"),
     [(0, 0.0, 0.0, 2.0, 2.0, 0, 0), (1, 0.0, 0.0, 2.0, 2.0, 0, 0)],
     {"iterations": 2, "tokens": 5.0, "prefill_only": 2}, {}),
    # LIFO preemption and the recompute of what was generated: 4 blocks, prompts 4, 8 out, budget 32. [0,1]
    # both prefill 4 (a block each), first tokens at 1; [1,2] both grow to a second block (4 in use); the
    # decodes of positions 5, 6, 7 at [2,5]. At 5 s0 (first in running order) needs a third block for
    # position 8: running[-1] is s1, preempted with 8 computed (5 outputs), its 2 full blocks cached; s0
    # takes s1's tail block. No admission at 5; s1's reserve (known 9: 3 blocks) does not fit beside s0's 3
    # until s0 ends at 8 (positions 8, 9, 10 at [5,8]). At 8 s1's hit is min(cachedin 4, floor(8 / 4) · 4)
    # = 4; it prefills 9 - 4 = 5 (its sixth token at 9) and decodes 8 - 1 - 5 = 2: done at 11. Evicted: s1's
    # tail at 5, s0's tail at 8 (s1 needs 12 beside its own 4 and s0's 8 cached): 8 units. 11 iterations,
    # the one of [5,6] among them.
    ("lifo_preemption_and_recompute", _engine(BLOCKS="4", PROMPT="4", OUT="8"),
     [(0, 0.0, 0.0, 1.0, 8.0, 0, 0), (1, 0.0, 0.0, 1.0, 11.0, 0, 1)],
     {"iterations": 11, "prefill_only": 2, "decode_only": 9},
     {"kv": {"preemptions": 1, "evicted_units": 8.0, "admissions": 3}}),
]


@pytest.mark.parametrize("src, rows, engine, pools", [c[1:] for c in VLLM], ids=[c[0] for c in VLLM])
def test_vllm_rules_by_hand(monkeypatch, src, rows, engine, pools):
    r, _ = run(src, monkeypatch)
    assert sorted(request_rows(r)) == rows
    js = report_json(r)
    e = next(s for s in js["stages"] if s["name"] == "engine")
    assert {k: e[k] for k in engine} == pytest.approx(engine, rel=1e-12)
    for name, want in pools.items():
        got = pool_json(r, name)
        assert {k: got[k] for k in want} == pytest.approx(want, rel=1e-12), name


# ---------------------------------------------------------------------------------------------------------
# Flows over several stages, the online estimates, a livelock's counts under a warm-up
# ---------------------------------------------------------------------------------------------------------

MORE = [
    # share maxmin: X runs a, b (2), Y runs a (2) (a flow too: a is held by a run with another). Rates
    # rise together to 1, where b (φ 1) fills: X stays at 1; Y takes the rest of a (3 - 1 = 2): Y done at 1;
    # X alone, still 1 at b: done at 2. a carries 3 / 3 on [0,1] and 1 / 3 on [1,2]: 4 / 3 over 10.
    ("share_maxmin_fills_the_tightest_stage_first", """
stage a : ps(3);
stage b : ps(1);
workload { arrive batch(2); }
session { branch (serial == 0) { run a, b (2); } else { run a (2); } observe f = now; }
share maxmin;
run { horizon 10; }
""", {"f": [(1, 1.0, 1.0), (0, 2.0, 2.0)]},
     {("a", None): {"utilisation": 4 / 30, "completions": 2, "service": 1.5},
      ("b", None): {"utilisation": 0.2, "service": 2.0}}),
    # share bottleneck: X at min(3 / 2, 1 / 1) = 1, Y at 3 / 2, leaving 0.5 of a unused: Y done at 4/3; X
    # has 2 - 4/3 = 2/3 left at min(3 / 1, 1 / 1) = 1: done at 2. a carries (1 + 1.5) / 3 for 4/3 s and 1 / 3
    # for 2/3 s: 10/9 + 2/9 = 4/3 over 10; a's present (2 · 4/3 + 2/3) / 10.
    ("share_bottleneck_leaves_capacity_unused", """
stage a : ps(3);
stage b : ps(1);
workload { arrive batch(2); }
session { branch (serial == 0) { run a, b (2); } else { run a (2); } observe f = now; }
share bottleneck;
run { horizon 10; }
""", {"f": [(1, 4 / 3, 4 / 3), (0, 2.0, 2.0)]},
     {("a", None): {"utilisation": 4 / 30, "present": 1 / 3, "service": 5 / 3},
      ("b", None): {"utilisation": 0.2}}),
    # docs/language.md, The online estimates (α = 0.01, the first service and wait set outright, the first
    # gap too): runs of 1, 2 and 1 start at 0, 1 and 4 (a delay of 1 before the third). After the first
    # completion λ̂ and ρ̂ read 0. After the second: gap 1, λ̂ 1, ŝ 0.99 · 1 + 0.01 · 2 = 1.01, ρ̂ min(1.01,
    # 0.99). After the third: gap 0.99 · 1 + 0.01 · 3 = 1.02, λ̂ 1 / 1.02, ŝ 0.99 · 1.01 + 0.01 · 1 = 1.0099,
    # ρ̂ min(1.0099 / 1.02, 0.99) = 0.99; Ŵ 0 (no run waited). price(s, 1, 2), s_m = 3: 2 + λ̂ (9 - 1) / (2 ·
    # 0.01) + 0.
    ("estimates_capped_rho", """
stage s : fifo;
stage d : delay;
workload { arrive batch(1); }
session {
  run s (1);
  observe l1 = est_lambda(s); observe r1 = est_rho(s); observe w1 = est_wait(s);
  run s (2);
  observe l2 = est_lambda(s); observe r2 = est_rho(s);
  run d (1);
  run s (1);
  observe l3 = est_lambda(s); observe r3 = est_rho(s);
  observe p3 = price(s, 1, 2);
}
run { horizon 100; }
""", {"l1": [(0, 1.0, 0.0)], "r1": [(0, 1.0, 0.0)], "w1": [(0, 1.0, 0.0)], "l2": [(0, 3.0, 1.0)],
      "r2": [(0, 3.0, 0.99)], "l3": [(0, 5.0, 1 / 1.02)], "r3": [(0, 5.0, 0.99)],
      "p3": [(0, 5.0, 2 + (1 / 1.02) * 8 / 0.02)]}, {}),
    # The estimates with a wait: two sessions at a fifo(1), runs of 1: s0 starts at 0, s1 at 1 (waited 1).
    # First completion (s0, at 1): ŝ 1, Ŵ 0. Second (s1, at 2): gap 1 (λ̂ 1), ŝ 1, Ŵ 0.01 · 1 = 0.01, ρ̂
    # min(1, 0.99). s1 reads after its run: price(s, 0, 1) = 1 + 1 · (1 - 0) / (2 · 0.01) + 1 · 0.01 · 1 /
    # 0.01 = 1 + 50 + 1.
    ("estimates_weighted_wait", """
stage s : fifo;
workload { arrive batch(2); }
session { run s (1); observe w = est_wait(s); observe p = price(s, 0, 1); }
run { horizon 100; }
""", {"w": [(0, 1.0, 0.0), (1, 2.0, 0.01)], "p": [(0, 1.0, 1.0), (1, 2.0, 52.0)]}, {}),
    # A hold that can never grow to what its body needs (prompt 4 + 10 decodes on a pool of 8, preempt
    # lifo, no block): every cycle prefills 4 ([t, t+1]), decodes positions 4 … 7 (growing to 8), and at
    # position 8 preempts itself in an iteration that only preempts ([t+5, t+6]); re-admitted at the next
    # event (docs/language.md: the victim of an iteration's growth on a pool no stage admits), t + 6.
    # Preemptions at 5, 11, 17: under warmup 6 two are counted; stuck 1. Iterations planned at 6 … 20
    # (the one planned at the horizon counts): 15: prefill-only at 6, 12, 18; decode-only [7,11], [13,17],
    # 19, 20: 10; the two preempting ones neither. Tokens 3 · 4 + 10 = 22 over 15; jobs 13 over 15. used:
    # 4 + 5 + 6 + 7 + 8 a cycle, twice, then 4 + 5: 69 over 14; the session at the stage 12 of 14 s; queued
    # [11,12] and [17,18]: 2 / 14, wait 1 (admissions at 12 and 18; the one at 6 waited since 5).
    ("livelock_counts_under_a_warmup", """
pool kv { cap 8; preempt lifo; }
stage e : step { budget 16; cost 1; memory kv; }
workload { arrive batch(1); }
session { hold kv (4) { observe a = now; run e prefill (4) growing kv; run e decode (10) growing kv; } }
run { horizon 20; warmup 6; }
""", {"a": [(0, 6.0, 6.0), (0, 12.0, 12.0), (0, 18.0, 18.0)]},
     {("kv", None): {"preemptions": 2, "stuck": 1, "admissions": 3, "used": 69 / 14, "queue": 2 / 14,
                     "wait": 1.0, "rejections": 0},
      ("e", None): {"iterations": 15, "prefill_only": 3, "decode_only": 10, "mixed": 0, "tokens": 22 / 15,
                    "batch": 13 / 15, "present": 12 / 14, "utilisation": 1.0, "completions": 3}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in MORE], ids=[c[0] for c in MORE])
def test_flows_estimates_livelock_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_vllm_metrics_of_a_preempted_request(monkeypatch):
    """VLLM's lifo_preemption_and_recompute, its request metrics by hand: s0's tokens at 1 … 8, s1's at 1 … 5
    and, after the preemption at 5 and its recompute at [8,9], at 9, 10, 11. ITL: s0's 7 gaps of 1, s1's 1,
    1, 1, 1, 4, 1, 1: 13 ones and a 4, mean 17 / 14, population std √((13 · (3/14)² + (39/14)²) / 14);
    numpy's percentiles over the sorted 14: p90 at index 11.7 (1), p95 at 12.35 (1 + 0.35 · 3), p99 at
    12.87 (1 + 0.87 · 3). TPOT (last - first) / (output - 1): 7 / 7 and 10 / 7, mean 17 / 14, std 3 / 14.
    E2EL 8 and 11: p90 8 + 0.9 · 3; TTFT 1 and 1. Queue (admitted - sent) 0 and 0."""
    r, _ = run(VLLM[3][1], monkeypatch)
    q = report_json(r)["requests"]
    itl = q["itl"]
    assert (itl["count"], itl["median"], itl["p90"]) == (14, 1.0, 1.0)
    assert (itl["mean"], itl["p95"], itl["p99"]) == pytest.approx((17 / 14, 2.05, 3.61), rel=1e-12)
    assert itl["std"] == pytest.approx(math.sqrt((13 * (3 / 14) ** 2 + (39 / 14) ** 2) / 14), rel=1e-12)
    assert (q["tpot"]["mean"], q["tpot"]["std"]) == pytest.approx((17 / 14, 3 / 14), rel=1e-12)
    assert (q["e2el"]["mean"], q["e2el"]["p90"]) == pytest.approx((9.5, 10.7), rel=1e-12)
    assert (q["ttft"]["mean"], q["ttft"]["std"], q["queue"]["mean"]) == (1.0, 0.0, 0.0)
    assert (q["completed"], q["total_output_tokens"], q["total_input_tokens"]) == (2, 16.0, 8.0)


def test_exclusive_prefill_displaced_decode_keeps_its_new_block(monkeypatch):
    """§3: "Displaced decodes keep any newly acquired allocation but neither execute nor advance computed
    KV." Budget 4, blocks of 4, serve exclusive prefill. s0 prefills 3 at [0,1] (one block) and decodes
    position 3 at [1,2]; s1 comes to the queue at 1.5. At 2 s0's decode of position 4 grows its hold to 8
    (a second block) and is tentative: s1's prefill fits and displaces it (s1's header sees used 8 + its 4:
    12). s1 prefills 4 alone at [2,3]; s0 decodes positions 4 and 5 at [3,5]. used(kv): 4 on [0,2], 12 on
    [2,3], 8 on [3,5]: 36 / 10; 5 iterations, 2 of them prefills."""
    src = """
pool reqs { cap 8; admit via e; }
pool kv { cap 100; block 4; }
stage e : step { budget 4; cost 1; serve exclusive prefill; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold reqs (1), kv (3) { run e prefill (3) growing kv; run e decode (3) growing kv; }
  } else {
    run d (1.5);
    hold reqs (1), kv (4) { observe u = used(kv); run e prefill (4) growing kv; }
  }
  observe f = now;
}
gauge g = used(kv);
run { horizon 10; }
"""
    check_by_hand(monkeypatch, src, {"u": [(1, 2.0, 12.0)], "f": [(1, 3.0, 3.0), (0, 5.0, 5.0)]},
                  {("gauge", "g"): {"mean": 3.6, "max": 12.0},
                   ("e", None): {"iterations": 5, "prefill_only": 2, "decode_only": 3, "mixed": 0},
                   ("kv", None): {"used": 3.6}})


@pytest.mark.parametrize("warmup, work, mean", [
    # 20 windows of 1 s over [0,20]: the job's 1 s is window 0's mean 1, the others 0: the windows' mean
    # m = 0.05, their sample variance ((1 - m)² + 19 m²) / 19 = 0.05; CI 2.093 √0.05 / √20.
    (0, 1, 0.05),
    # warm-up 1: 20 windows of 0.95 s over [1,20]; the job's 0.5 s in window 0 (mean 0.5 / 0.95 = 20 m with
    # m = 0.5 / 19 the gauge's mean): the windows' sample variance ((19 m)² + 19 m²) / 19 = 20 m², so the CI
    # is 2.093 √(20 m²) / √20 = 2.093 m.
    (1, 1.5, 0.5 / 19),
])
def test_gauge_ci_over_twenty_windows(monkeypatch, warmup, work, mean):
    """§3, Gauges: "the report gives its time average over [warmup, end], with a batch-means 95% CI over 20
    windows, and the least and greatest value held for a positive time"."""
    src = f"""
stage d : delay;
workload {{ arrive batch(1); }}
session {{ run d ({work}); }}
gauge g = queue(d);
run {{ horizon 20; warmup {warmup}; }}
"""
    _, js = check_by_hand(monkeypatch, src, {}, {("gauge", "g"): {"mean": mean, "min": 0.0, "max": 1.0}})
    want = 2.093 * math.sqrt(0.05) / math.sqrt(20) if warmup == 0 else 2.093 * mean
    assert js["gauges"]["g"]["ci"] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("n, expr, noted", [
    (40, "serial > 100", True),                 # a comparison, 0 over 40 samples
    (39, "serial > 100", False),                # 39 samples: too few to be noted
    (40, "serial < 100", False),                # a test that always held is not noted
    (40, "!(serial < 100)", True),              # outermost `!`
    (40, "serial > 100 || serial < 0", True),   # outermost `||`
    (40, "(serial > 100) * 1", False),          # outermost `*`: not a test
])
def test_constant_zero_test_observe_note(monkeypatch, n, expr, noted):
    """§3, Statistics: "An observe whose expression is a test (its outermost operator a comparison, &&, || or
    !) and that was 0 over 40 or more samples gets a line under the table"; "A test that always held is not
    noted"."""
    src = f"workload {{ arrive batch({n}); }}\nsession {{ observe h = {expr}; }}\nrun {{ horizon 10; }}\n"
    _, js = check_by_hand(monkeypatch, src, {}, {})
    notes = [x for x in js["notes"] if x.startswith("note: observe h is constant 0")]
    assert notes == ([f"note: observe h is constant 0 over {n} samples"] if noted else [])


LATER = [
    # pool-reference.txt, preempt by: "Candidates are holders resident in the stage whose memory is this
    # pool"; keys read position, "the position its hold has computed on the pool". cap 16, blocks of 4. s0
    # holds 4 (prefill 4, decode 8), s1 8 (prefill 8, decode 4): both admitted at 0 (12). [1,2]: s0 grows to
    # 8 for position 4 (16); s1 needs 12 for position 8: the least position is s0's 4 (lifo would take s1,
    # admitted last): s0 leaves, s1 grows to 12. s0 is admitted again at the next event, 2 (16), prefills at
    # [2,3]; at 3 it needs 8 for position 4 beside s1's 12: its 4 against s1's 10: s0 again (stuck: no
    # progress since its last preemption). Admitted at 4, prefills at [4,5] while s1 decodes its last
    # (done 5); then alone: positions 4 … 11 at [5,13]. used 12, 12, 16, 12, 16, then 8 · 4 and 12 · 4:
    # 148 / 100; waits 0, 0, 1, 1.
    ("preempt_by_position_on_an_engine_pool", """
pool kv { cap 16; block 4; preempt by (position) requeue head; }
stage e : step { budget 32; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (4) { observe a = now; run e prefill (4) growing kv; run e decode (8) growing kv; } }
  else { hold kv (8) { observe a = now; run e prefill (8) growing kv; run e decode (4) growing kv; } }
  observe f = now;
}
run { horizon 100; }
""", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (0, 2.0, 2.0), (0, 4.0, 4.0)], "f": [(1, 5.0, 5.0), (0, 13.0, 13.0)]},
     {("kv", None): {"preemptions": 2, "stuck": 1, "used": 1.48, "wait": 0.5, "admissions": 4},
      # the engine: completions the runs that completed, none a preemption took back (prefills of s1 and
      # s0 at 1, s0's again at 3 and 5, s1's decode at 5, s0's at 13): 6, their mean service (1 + 1 + 1 +
      # 1 + 4 + 8) / 6; 13 iterations, [0,1] prefills only, [2,3] and [4,5] mixed, the 10 others decodes
      # only ([1,2] and [3,4] s1's alone: s0 had preempted itself at their planning); tokens 12, 1, 5, 1,
      # 5 and 8 ones: 32 / 13; jobs 2, 1, 2, 1, 2 and 8 ones: 16 / 13; s0 at the stage but on [1,2] and
      # [3,4]: (11 + 5) / 100.
      ("e", None): {"completions": 6, "service": 16 / 6, "iterations": 13, "prefill_only": 1, "mixed": 2,
                    "decode_only": 10, "tokens": 32 / 13, "batch": 16 / 13, "present": 0.16,
                    "utilisation": 0.13}}),
    # reserve held: "Reservations end with the hold's scope, release or preemption; leases retain none".
    # cap 10. s0's hold (2, reserve 8) ends at 1 and leases its 2 until 6 (its session goes on); s1 (2,
    # reserve 8) waits until then (2 + 6 + 8 > 10), and at 1 fits beside the lease (2 + 0 + 8): the lease
    # keeps no reservation. s1 releases at 2: room 10 - 2 = 8; s2 (6, at 2, queued first that instant:
    # its delay's event was scheduled before s1's run's) is admitted in that settle: room 2 left.
    ("reserve_held_ends_at_release_and_leases_keep_none", """
pool p { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold p (2) reserve (8) { run d (1); } lease p (5); run d (10); }
  else {
    branch (serial == 1) { hold p (2) reserve (8) { run d (1); release p; observe r = free(p); run d (5); } }
    else { run d (2); hold p (6) { observe a = now; observe fr = free(p); run d (1); } }
  }
}
run { horizon 100; }
""", {"r": [(1, 2.0, 8.0)], "a": [(2, 2.0, 2.0)], "fr": [(2, 2.0, 2.0)]},
     {("p", None): {"used": 0.2, "holders": 0.08, "wait": 1 / 3, "admissions": 3}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in LATER], ids=[c[0] for c in LATER])
def test_later_dialect_on_engines_and_leases(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


REQUEUE_ON_ENGINE = """
pool reqs { cap 8; admit via e; queue by (-serial); }
pool kv { cap 8; block 4; preempt by (-admission) requeue WHERE; }
stage e : step { budget 16; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 2 ? 2 : 0);
  hold reqs (1), kv (serial == 2 ? 8 : 4) {
    observe a = now;
    run e prefill (serial == 2 ? 8 : 4) growing kv;
    run e decode (serial == 2 ? 0 : 4) growing kv;
  }
  observe f = now;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("where, obs, reqs", [
    # queue by (-serial) on the engine's queue: s1 is admitted before s0 at 0 (4 + 4 of 8); at [1,2] s1's
    # decode of position 4 needs a second block: the victim is the least -admission, s0 (admitted last),
    # which goes back to reqs' queue. requeue tail: as a newcomer, by its key 0; s2 (key -2) joins at 2 and
    # is the head; it needs 8 beside s1's 8 and blocks s0 until s1 ends at 5 (positions 4 … 7 at [1,5]). At
    # 5 s2 takes 8 (prefill [5,6], one token: done 6), s0 waits, then 4 at 6: [6,7] prefill, [7,11] decodes.
    # reqs waits 0, 0, 3 (s2, 2 → 5), 5 (s0, 1 → 6); queued s0 on [1,6], s2 on [2,5]: 8 / 100.
    ("tail", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 5.0, 5.0), (0, 6.0, 6.0)],
              "f": [(1, 5.0, 5.0), (2, 6.0, 6.0), (0, 11.0, 11.0)]}, {"wait": 2.0, "queue": 0.08}),
    # requeue head: s0 ahead of s2's key; at 5 s0 takes 4 and s2 (8) waits until s0 ends at 10 ([5,6]
    # prefill, [6,10] decodes); s2 at [10,11]. Waits 0, 0, 4 (s0, 1 → 5), 8 (s2, 2 → 10); queued s0 on [1,5],
    # s2 on [2,10]: 12 / 100.
    ("head", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (0, 5.0, 5.0), (2, 10.0, 10.0)],
              "f": [(1, 5.0, 5.0), (0, 10.0, 10.0), (2, 11.0, 11.0)]}, {"wait": 3.0, "queue": 0.12}),
])
def test_requeue_into_a_keyed_engine_queue(monkeypatch, where, obs, reqs):
    """pool-reference.txt, preempt: the victim "re-enters the hold's first pool's queue"; "requeue head (the
    default) places it first, ahead of policy keys. requeue tail treats it as a newcomer: … queue by places
    it by its keys". The victim's pool (kv) says where; the queue is its hold's first pool's (reqs, admitted
    by the engine). kv's used: 8 on [0,5] less s0's 4 on [1,5] (s1 grows to 8), then 8 and 4 or 4 and 8:
    84 / 100 either way."""
    check_by_hand(monkeypatch, REQUEUE_ON_ENGINE.replace("WHERE", where), obs,
                  {("reqs", None): {**reqs, "admissions": 4},
                   ("kv", None): {"preemptions": 1, "used": 0.84, "admissions": 4}})


def test_a_step_that_only_preempts_costs_c_at_zero_tokens(monkeypatch):
    """§3: "It lasts C at zero tokens"; docs/language.md: in `cost`, `residents` is "the jobs on the stage
    once it is planned (newcomers in, victims out)". cost 0.5 + tokens + residents: the prefill of 4 lasts
    5.5, each decode 2.5 (positions 4 … 7: 10), and the step that preempts the session (position 8 on a
    pool of 8) 0.5 + 0 + 0: a cycle of 16; re-admitted at the next event, the step's end: 16, 32."""
    src = """
pool kv { cap 8; preempt lifo; }
stage e : step { budget 16; cost 0.5 + tokens + residents; memory kv; }
workload { arrive batch(1); }
session { hold kv (4) { observe a = now; run e prefill (4) growing kv; run e decode (10) growing kv; } }
run { horizon 40; }
"""
    check_by_hand(monkeypatch, src, {"a": [(0, 0.0, 0.0), (0, 16.0, 16.0), (0, 32.0, 32.0)]},
                  {("kv", None): {"preemptions": 2, "stuck": 1}})


def test_vllm_prefix_hits_of_whole_blocks_below_num_tokens(monkeypatch):
    """§7: "the prefix cache holds every computed full block, generated tokens included; a hit is the longest
    run of cached full blocks, at most num_tokens − 1"; "the unmatched blocks stay cached, dead". One
    session, four requests in turn on lib/vllm.sq's engine (blocks of 4, budget 32, cost 1):
    1. prompt 8, 1 out: [0,1]; computed 8, caches min(9, 8) = 8.
    2. prompt 8 again: hit min(8, floor(7 / 4) · 4) = 4 (the last token is recomputed for its logits); the
       other 4 of the entry stay dead; prefills 4 at [1,2] and caches 8.
    3. prompt 10, 3 out: hit min(8, floor(9 / 4) · 4) = 8; prefills 2 at [2,3], decodes positions 10, 11 at
       [3,5]; computed 12, caches min(13, 12) = 12.
    4. prompt 13: hit min(12, floor(12 / 4) · 4) = 12; prefills 1 at [5,6].
    Hit rate (0 + 4 + 8 + 12) / (8 + 8 + 10 + 13). kv cached: the dead 4 on [1,5] and again on [5,6] (the
    request's own entries consumed whole), and 4 + 12 after 6: (4 · 5 + 16 · 94) / 100; used 8, 8, 12 · 3,
    16 (13 in blocks): 68 / 100."""
    src = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 100 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 32; cost 1; memory kv; }
workload { arrive batch(1); hidden o; }
session {
  set prompt = 8;
  set o = 1;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  turn;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  turn;
  set prompt = 10;
  set o = 3;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  turn;
  set prompt = 13;
  set o = 1;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 100; }
"""
    r, _ = run(src, monkeypatch)
    assert request_rows(r) == [(0, 0.0, 0.0, 1.0, 1.0, 0, 0), (0, 1.0, 1.0, 2.0, 2.0, 4, 0),
                               (0, 2.0, 2.0, 3.0, 5.0, 8, 0), (0, 5.0, 5.0, 6.0, 6.0, 12, 0)]
    assert report_json(r)["requests"]["prefix_cache_hit_rate"] == pytest.approx(24 / 39, rel=1e-12)
    kv = pool_json(r, "kv")
    assert (kv["cached"], kv["used"]) == pytest.approx((15.24, 0.68), rel=1e-12)
    assert (kv["evicted_units"], kv["admissions"]) == (0.0, 4)


def test_a_growth_that_fits_passes_a_stalled_grower(monkeypatch):
    """§3, Ties: "A pool's growers: the order they stalled, the head blocking the rest"; `grow` waits only
    "if it does not fit" (docs/language.md: a growth that fits grows at once, whether growers wait or not).
    cap 11, three holds of 3 (9). At 1 s0 asks 5 more (14): it stalls. At 2 s1 asks 1 (10): it fits and
    grows, past s0. At 3 s1 and s2 end (4 and 3 back): s0 grows to 8 then. used 9, 9, 10, 8 over [0,4]:
    36 / 10, greatest 10."""
    src = """
pool p { cap 11; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { hold p (3) { run d (3); } }
  else { hold p (3) { run d (1 + serial); grow p (serial == 0 ? 5 : 1); observe g = now; run d (1); } }
}
gauge u = used(p);
run { horizon 10; }
"""
    check_by_hand(monkeypatch, src, {"g": [(1, 2.0, 2.0), (0, 3.0, 3.0)]},
                  {("gauge", "u"): {"mean": 3.6, "max": 10.0}, ("p", None): {"used": 3.6, "holders": 1.0}})


@pytest.mark.parametrize("rate", ["1", "2", "0.5"])
def test_poisson_is_renewal_of_exp_after_an_arrival_at_zero(monkeypatch, rate):
    """language.txt §2: "poisson(rate) starts with an arrival at time zero, then uses exponential gaps of mean
    1 / rate. Thus renewal(~exp(1 / rate)) has the same subsequent arrival schedule for the same seed,
    without the initial arrival at zero" (to the bit for a rate that is a power of two: docs/simulator.md).
    `run { arrivals }` ends each run when its sessions drain: poisson's 4 arrivals are 0 and renewal's 3."""
    body = "stage d : delay;\nsession { observe a = now; run d (1); }\n"
    _, p = run(f"workload {{ arrive poisson({rate}); }}\n{body}run {{ horizon 1000; arrivals 4; seed 7; }}\n",
               monkeypatch)
    _, q = run(f"workload {{ arrive renewal(~exp(1 / {rate})); }}\n{body}run {{ horizon 1000; arrivals 3; seed 7; }}\n",
               monkeypatch)
    times_p = [t for _, t, _ in p["a"]]
    times_q = [t for _, t, _ in q["a"]]
    assert times_p[0] == 0.0 and len(times_p) == 4 and len(times_q) == 3
    assert times_p[1:] == times_q


QUEUES = [
    # A gateway routing over a queue family by its members' pools: choose j by queued + holders of W[j].slots
    # (cap 1): s0 → W[0], s1 → W[1] (1 against 0), s2 → W[0] (1 and 1: the smallest index), which waits for
    # s0's slot until 2. Runs of 2 on each member's fifo: f 2, 2, 4; W[0] serves two runs, its slots queue
    # 1 on [0,2] (wait (0 + 2) / 2).
    ("gateway_routes_over_a_queue_family", """
queue W[2] : prefill {
  pool slots { cap 1; }
  serve fifo;
  prefill (prompt) { hold slots (1) { run (prompt); } }
}
queue gw : gateway {
  route { choose j in 2 by (queued(W[j].slots) + holders(W[j].slots)); W[j].prefill (prompt); }
}
workload {
  arrive batch(3);
  session { set prompt = 2; request gw; observe f = now; }
}
run { horizon 10; }
""", {"f": [(0, 2.0, 2.0), (1, 2.0, 2.0), (2, 4.0, 4.0)]},
     {("W", 0): {"completions": 2, "present": 0.4, "utilisation": 0.4},
      ("W.slots", 0): {"wait": 1.0, "queue": 0.2, "admissions": 2}, ("W.slots", 1): {"admissions": 1}}),
    # A pull over two NICs (ps 10 and ps 5) shared max-min: prompts of 10. P's fifo prefills s0 on [0,1],
    # s1 on [1,2] (each leasing its 10 on P.kv). s0 waits 0.5 (D.nic.latency) and reads 10 tokens from
    # 1.5 at min(10, 5) = 5; s1 from 2.5, when both flows fill D's NIC at 2.5 each: s0 had 5 left, done
    # at 4.5; s1 5 left then, alone at 5: 5.5. Each then runs 1 on D's fifo: 5.5 and 6.5. P.nic carries
    # 0.5 on [1.5,5.5]: 2 / 10; D.nic 1: 4 / 10. P.kv: s0's 10 from 0 until its read ends at 4.5, s1's until
    # 5.5 (used 100 / 10), then cached 10 each; D.kv from the decode's hold (1 and 2) to 5.5 and 6.5.
    ("pull_over_two_nics_maxmin", """
queue P[1] : prefill {
  pool kv { cap 100; }
  serve fifo;
  nic ps(10);
  prefill (prompt) { hold kv (prompt) { run (prompt / 10); } cache (prompt) lease kv (inf); }
}
queue D[1] : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(5);
  decode (prompt) from src {
    hold kv (prompt) { transfer (prompt) from src to kv (prompt); run (1); } cache (prompt);
  }
}
D pull P latency 0.5 share maxmin;
queue gw : gateway {
  route { P[0].prefill (prompt); D[0].decode (prompt) from P[0]; }
}
workload {
  arrive batch(2);
  session { set prompt = 10; request gw; observe f = now; }
}
run { horizon 10; }
""", {"f": [(0, 5.5, 5.5), (1, 6.5, 6.5)]},
     {("P", 0): {"present": 0.3, "utilisation": 0.2, "wait": 0.5},
      ("P.nic", 0): {"utilisation": 0.2, "present": 0.6, "service": 3.0},
      ("D.nic", 0): {"utilisation": 0.4, "present": 0.6, "service": 3.0},
      ("D.nic.latency", 0): {"present": 0.1, "service": 0.5},
      ("P.kv", 0): {"used": 10.0, "cached": 10.0, "holders": 1.0},
      ("D.kv", 0): {"used": 9.0, "cached": 8.0, "holders": 0.9}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in QUEUES], ids=[c[0] for c in QUEUES])
def test_queues_routes_and_pulls_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


INSTANTS = [
    # A pool's wait is counted whole for an admission after the warm-up: holds of 2 in turn on cap 1: s2
    # queued from 0, admitted at 4 (after warmup 3): one admission, wait 4; queue over [3,10] only s2's
    # [3,4]: 1 / 7; used [3,6]: 3 / 7.
    ("pool_wait_counted_whole_after_the_warmup", """
pool p { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session { hold p (1) { run d (2); } }
run { horizon 10; warmup 3; }
""", {}, {("p", None): {"admissions": 1, "wait": 4.0, "queue": 1 / 7, "used": 3 / 7, "holders": 3 / 7}}),
    # busy(e) and work(e) of a step stage at an iteration's end instant (docs/language.md: busy the jobs the
    # running iteration serves, 0 between iterations; work the residents' tokens, which go down when an
    # iteration ends). s1's delay of 1, scheduled at 0 before the iteration [0,1] was planned, ends first
    # at 1 (§3 Ties: events at one instant in the order they were scheduled): the iteration still runs,
    # busy 1 and the 4 tokens of s0's prefill left. s2's second delay of 0.5, scheduled at 0.5, ends after
    # the iteration's end: s0's decode (3) is the resident, no iteration yet: busy 0, queue 1, work 3.
    ("step_observables_at_an_iterations_end", """
stage e : step { budget 8; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run e prefill (4); run e decode (3); }
  else {
    branch (serial == 1) { run d (1); } else { run d (0.5); run d (0.5); }
    observe b = busy(e); observe q = queue(e); observe w = work(e);
  }
}
run { horizon 10; }
""", {"b": [(1, 1.0, 1.0), (2, 1.0, 0.0)], "q": [(1, 1.0, 1.0), (2, 1.0, 1.0)], "w": [(1, 1.0, 4.0), (2, 1.0, 3.0)]},
     {("e", None): {"iterations": 4, "completions": 2}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in INSTANTS], ids=[c[0] for c in INSTANTS])
def test_figures_at_instants_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_exclusive_prefill_one_resident_prefill_alone(monkeypatch):
    """§3: "serve exclusive prefill selects either one prefill alone or a decode-only batch. A resident
    prefill takes precedence." Budget 4: s0 decodes 2, s1 prefills 6, s2 prefills 2, all resident at 0 in
    serial order. [0,1] s1's prefill alone (4; the 0 left go to no other prefill nor to s0's decode); [1,2]
    s1's last 2 (f 2); [2,3] s2's 2 alone (f 3); then s0's decode-only batches [3,4], [4,5] (f 5). Tokens 4,
    2, 2, 1, 1: 2 a step, half the budget; every step one job."""
    src = """
stage e : step { budget 4; cost 1; serve exclusive prefill; }
workload { arrive batch(3); }
session {
  branch (serial == 0) { run e decode (2); } else { run e prefill (serial == 1 ? 6 : 2); }
  observe f = now;
}
run { horizon 10; }
"""
    check_by_hand(monkeypatch, src, {"f": [(1, 2.0, 2.0), (2, 3.0, 3.0), (0, 5.0, 5.0)]},
                  {("e", None): {"iterations": 5, "prefill_only": 3, "decode_only": 2, "mixed": 0, "batch": 1.0,
                                 "tokens": 2.0, "token_utilisation": 0.5, "service": 10 / 3, "present": 1.0}})


@pytest.mark.parametrize("decl, obs", [
    # a declared first: at 0's settle a's head s1 (a and b both empty yet) is admitted before b's head s0,
    # which then waits for s1's b until 1 ([1,3]); s2 behind s0 in b's queue: 3.
    ("pool a { cap 5; }\npool b { cap 1; }", [(1, 0.0, 0.0), (2, 3.0, 3.0)]),
    # b declared first: s0 takes b at 0; at 2 both heads wait for b: b's own (s2) is served first (2), s1 at
    # 3.
    ("pool b { cap 1; }\npool a { cap 5; }", [(2, 2.0, 2.0), (1, 3.0, 3.0)]),
])
def test_two_queues_waiting_for_one_pool_declaration_order(monkeypatch, decl, obs):
    """§3, Ties: "Each pool has one queue, and a hold on several pools waits in its first pool's; where the
    heads of two queues both wait for room in one pool …, the pool declared first is served first"; and the
    settle runs every ready session before it admits, so the holds of one instant are admitted together.
    s0 holds b (cap 1) for 2, s1 holds a and b (waiting in a's queue), s2 holds b; runs of 1."""
    src = decl + """
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold b (1) { run d (2); } }
  else {
    branch (serial == 1) { hold a (1), b (1) { observe x = now; run d (1); } }
    else { hold b (1) { observe x = now; run d (1); } }
  }
}
run { horizon 10; }
"""
    check_by_hand(monkeypatch, src, {"x": obs}, {})


# ---------------------------------------------------------------------------------------------------------
# §7 against vLLM's own answers: two shipped oracle scenarios (serq-vllm's oracle/generated, recorded with
# vLLM 0.33.0's scheduler) derived by hand, and serQ's answer to them on both tiers
# ---------------------------------------------------------------------------------------------------------

ORACLE_BY_HAND = [
    # budget 2, max_seqs 2, blocks of 4, 5 usable (6 with vLLM's null block), r0 prompt 8 out 6, r1 prompt 4
    # out 8. r0's prefill takes the whole budget at steps 0-3 (first token 4; its reserve of 8 fits, its
    # first chunk of 2 one block). Step 4: r0 decodes position 8 (a third block) and r1 is admitted with the
    # 1 left (one block); r1 prefills a token a step, first token 8. Step 8: r0's position 12 takes the
    # fifth block (20 of 20); r1's position 4 needs a second: running[-1] is r1 itself, preempted with 4
    # computed and 1 output (known 5). r0's last token at 9. Step 9: r1's hit min(4, floor(4 / 4) · 4) = 4,
    # recomputes 1, then decodes 8 - 1 - 1 = 6 at steps 10-15: done 16. cached (the first scheduling's
    # hit): 0, 0; steps: the last done + 1.
    ("generated/source_block_boundary",
     {"first": {"0": 4, "1": 8}, "done": {"0": 9, "1": 16}, "preempted": {"0": 0, "1": 1},
      "cached": {"0": 0, "1": 0}, "preemptions": 1, "steps": 17}),
    # budget 4, blocks of 4, 10 usable, caching. r0 (session 0, turn 1) prompt 4, 1 out: step 0, done 1,
    # caches its block. r2 (prompt 40, 1 out) arrives at 1: its reserve of 10 blocks fits beside r0's cached
    # block (cached prefixes never block); it prefills 4 a step at steps 1-10 (first and done 11) and takes
    # the whole budget, so r1 (turn 2, prompt 6, sent 1 after turn 1's done, at 2) waits. r2's tenth block,
    # at step 10, evicts r0's cached one: the prefix of a waiting request is evictable (the wait channel).
    # Step 11: r1's hit is 0; it prefills 4 and 2 (first 13) and decodes 1: done 14.
    ("generated/source_waiting_prefix_evicted",
     {"first": {"0": 1, "2": 11, "1": 13}, "done": {"0": 1, "2": 11, "1": 14},
      "preempted": {"0": 0, "1": 0, "2": 0}, "cached": {"0": 0, "1": 0, "2": 0}, "preemptions": 0,
      "steps": 15}),
]


@pytest.mark.parametrize("name, hand", ORACLE_BY_HAND, ids=[c[0].split("/")[1] for c in ORACLE_BY_HAND])
def test_vllm_oracle_scenario_by_hand(monkeypatch, name, hand):
    path = ORACLE / f"{name}.json"
    vllm = json.loads(answer_path(path).read_text())
    assert {k: vllm[k] for k in hand} == hand  # vLLM's recorded answer is the hand derivation
    sc = read_scenario(str(path))
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        got = run_scenario(sc)
        assert {k: got[k] for k in hand} == hand, tier


GAUGES = [
    # A family's aggregates as gauges under routing (§2: the linker writes the terms out): choose by
    # queue sends s0, s3 to s[0] and s1, s2 to s[1], s[2] (runs of 10). queues (2, 1, 1) on [0,10], (1, 0, 0)
    # on [10,20]: the spread max - min is 1 on [0,20], the total 4 then 1. Over [5,30]: spread 15 / 25,
    # total (4 · 5 + 1 · 10) / 25; the greatest total 4 is held after the warm-up's start too (on [5,10]).
    ("family_aggregates_under_routing", """
stage s[3] : fifo;
workload { arrive batch(4); }
session { choose j in 3 by (queue(s[j])); run s[j] (10); }
gauge spread = max k in 3 (queue(s[k])) - min k in 3 (queue(s[k]));
gauge total = sum k in 3 (queue(s[k]));
run { horizon 30; warmup 5; }
""", {}, {("gauge", "spread"): {"mean": 0.6, "min": 0.0, "max": 1.0},
          ("gauge", "total"): {"mean": 1.2, "min": 0.0, "max": 4.0}}),
    # A value held only before the warm-up is not the gauge's greatest: the job is at d on [0,1], the
    # warm-up ends at 2: mean, least and greatest 0 over [2,10].
    ("gauge_extremes_after_the_warmup_only", """
stage d : delay;
workload { arrive batch(1); }
session { run d (1); }
gauge q = queue(d);
run { horizon 10; warmup 2; }
""", {}, {("gauge", "q"): {"mean": 0.0, "ci": 0.0, "min": 0.0, "max": 0.0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in GAUGES], ids=[c[0] for c in GAUGES])
def test_gauges_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


@pytest.mark.parametrize("share, f2, l2", [
    # maxmin: A (l1 and l2), B (l1), C (l2) rise together to 0.5, where l1 (φ 1) fills: A and B stop there;
    # C takes the rest of l2, 2 - 0.5 = 1.5. A and B (work 1) end at 2, C has 4 - 3 = 1 left, alone at 2:
    # 2.5. l2 carries (0.5 + 1.5) / 2 on [0,2] and 2 / 2 on [2,2.5]: 2.5 / 10; its present (2 · 2 + 0.5) / 10.
    ("maxmin", 2.5, {"utilisation": 0.25, "present": 0.45, "service": 2.25}),
    # bottleneck: A at min(1 / 2, 2 / 2), B at 1 / 2, C at 2 / 2 = 1 (l2's 0.5 left unused); at 2 C has 2
    # left, alone at 2: 3. l2 carries (0.5 + 1) / 2 for 2 s and 1 for 1 s: 2.5 / 10; present (2 · 2 + 1) / 10.
    ("bottleneck", 3.0, {"utilisation": 0.25, "present": 0.5, "service": 2.5}),
])
def test_three_flows_over_two_stages(monkeypatch, share, f2, l2):
    """§3, Stages: "share maxmin is max-min fair: every flow's rate rises together until a stage fills, the
    flows through it stop there, and the others go on. share bottleneck gives each flow its equal share at
    the tightest of its stages, min over s of φ_s / n_s, and leaves what that does not use at the other
    stages unused"; a single-stage run on a stage some run shares with another is a flow too."""
    src = f"""
stage l1 : ps(1);
stage l2 : ps(2);
workload {{ arrive batch(3); }}
session {{
  branch (serial == 0) {{ run l1, l2 (1); }} else {{ branch (serial == 1) {{ run l1 (1); }} else {{ run l2 (4); }} }}
  observe f = now;
}}
share {share};
run {{ horizon 10; }}
"""
    check_by_hand(monkeypatch, src, {"f": [(0, 2.0, 2.0), (1, 2.0, 2.0), (2, f2, f2)]},
                  {("l1", None): {"utilisation": 0.2, "present": 0.4, "completions": 2}, ("l2", None): l2})


def test_a_timed_lease_then_its_cache_evicted_whole(monkeypatch):
    """§3, Pools: "A hold's lease m (t) keeps its allocation on m past the scope's end, neither evictable nor
    a preemption victim, until the session's release m, t seconds, or the session's end, and cache applies
    then"; "Eviction is per entry" (no block). cap 10: s0 holds 4 on [0,1] and leases it 2 s more (used 4
    at 1); at 3 the lease ends and 4 are cached (s0's session goes on). s1 at 3.5 needs 8 beside the 4
    cached: the entry goes whole. used 4 · 3 + 8 · 1 over 10; cached 4 for 0.5 s; holders (the lease is
    one) 3 + 1 over 10."""
    src = """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold p (4) { run d (1); } cache (4) lease p (2); observe a = used(p); run d (10); }
  else { run d (3.5); hold p (8) { observe u = used(p); run d (1); } }
}
gauge h = holders(p);
run { horizon 10; }
"""
    check_by_hand(monkeypatch, src, {"a": [(0, 1.0, 4.0)], "u": [(1, 3.5, 8.0)]},
                  {("p", None): {"used": 2.0, "cached": 0.2, "holders": 0.4, "evicted_entries": 1,
                                 "evicted_units": 4.0, "admissions": 2},
                   ("gauge", "h"): {"mean": 0.4, "max": 1.0}})


def test_vllm_forced_miss_keeps_the_old_blocks(monkeypatch):
    """§7: "a forced miss (a nonce at the head of the prompt) matches nothing; the old blocks stay | reuse
    (0)" (lib/vllm.sq's vllm_request_at with a match below 0). Prompt 8, 1 out, twice in turn: the first
    request caches its 8 at 1; the second, a forced miss, hits 0 and consumes nothing, so the whole old
    entry stays, dead (§3: the rest of the entry stays as a dead entry), beside the 8 the second caches at 2.
    kv cached: 8 on [1,2], 16 on [2,100]: (8 + 16 · 98) / 100; used 8 on [0,2]; the hit rate 0."""
    src = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 100 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 32; cost 1; memory kv; }
workload { arrive batch(1); hidden o; }
session {
  set prompt = 8;
  set o = 1;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  turn;
  set t0 = now;
  vllm_request_at(reqs, kv, engine, prompt, o, t0, -1, inf);
}
run { horizon 100; }
"""
    r, _ = run(src, monkeypatch)
    assert request_rows(r) == [(0, 0.0, 0.0, 1.0, 1.0, 0, 0), (0, 1.0, 1.0, 2.0, 2.0, 0, 0)]
    assert report_json(r)["requests"]["prefix_cache_hit_rate"] == 0.0
    kv = pool_json(r, "kv")
    assert (kv["cached"], kv["used"]) == pytest.approx((15.76, 0.16), rel=1e-12)
    assert (kv["evicted_units"], kv["admissions"]) == (0.0, 2)


@pytest.mark.parametrize("held, obs", [
    # reserve held: s0 (prompt 12) takes 4 of a reservation of 12 (8 unallocated) and a chunk of 4; s1
    # (4 of 4): 4 + 8 + 4 = 16 fits, a chunk of 4; s2: 8 + 8 + 4 = 20 does not, and blocks. At 1 s1 is done
    # (its 4 back); s0 grows to 8 within its reservation (8 + 0 + 4, 4 left unallocated), then s2: 8 + 4 + 4
    # = 16 fits, with 8 of the budget left: done at 2. s0 grows to 12 at 2: done at 3.
    ("reserve held;", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.0, 1.0)],
                       "f": [(1, 1.0, 1.0), (2, 2.0, 2.0), (0, 3.0, 3.0)]}),
    # without it the reservation is checked once, at admission: s2 fits at 0 (8 + 4 of 16) and takes the
    # budget's last 4: done at 1.
    ("", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0)],
          "f": [(1, 1.0, 1.0), (2, 1.0, 1.0), (0, 3.0, 3.0)]}),
])
def test_reserve_held_on_an_engine_pool(monkeypatch, held, obs):
    """pool-reference.txt, reserve held: "A new reservation r requires used + Σ uᵢ + r ≤ cap. Growth by d
    requires used + Σ_{i≠grower} uᵢ + d ≤ cap: the growing hold can use its own reservation", on a pool
    whose holds an engine admits (budget 12, chunk 4, blocks of 4, cap 16)."""
    src = f"""
pool reqs {{ cap 8; admit via e; }}
pool kv {{ cap 16; block 4; {held} }}
stage e : step {{ budget 12; cost 1; chunk 4; memory kv; }}
workload {{ arrive batch(3); }}
session {{
  set prompt = serial == 0 ? 12 : 4;
  hold reqs (1), kv (4) reserve (prompt) {{ observe a = now; run e prefill (prompt) growing kv; }}
  observe f = now;
}}
run {{ horizon 100; }}
"""
    check_by_hand(monkeypatch, src, obs, {("kv", None): {"admissions": 3, "preemptions": 0}})
