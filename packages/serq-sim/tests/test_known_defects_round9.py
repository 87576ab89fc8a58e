"""Known defects, round 9 (serq-sim).

A hold rejected on re-admission after a preemption (its units or reserve, evaluated again when the re-executed
hold joins the queue, above the pool's capacity) ends a session that had been admitted and had run part of the
hold: what it observed before the preemption is in the figures, what it would have observed or recorded after
the hold is not. The rejections warning said of every rejection "so the latency figures cover only the
admitted", which such a session's samples contradict (lib/vllm.sq's request: a ttft observed, no row); it now
counts those apart (``Pool.refused``, set where the rejection is, ``pools.admission.reject``)."""

from __future__ import annotations

import serq_frontend
import serq_sim

# One engine, blocks of 4 in a pool of 8, the step clock (cost 1). Session 0 holds 4 (reserve 4), prefills
# 4 tokens in [0,1] and decodes 8 growing: positions 4..7 take the second block at [1,2], and in [5,6] its
# ninth position needs a third block, which the pool has not: preempt lifo preempts the only running hold,
# its own (computed 8). It joins again with reserve 8 + 4 = 12 > 8: rejected there, at 5. Session 1 asks
# for a reserve of 12 when it first joins, at 0: rejected then, never admitted.
PROGRAM = """
pool kv { cap 8; block 4; evict lru; preempt lifo; }
stage engine : step {
  budget 16;
  cost 1;
  memory kv;
}

workload {
  arrive batch(2);
}

session {
  hold kv (4) reserve (serial == 0 ? computed + 4 : 12) {
    observe started = now;
    prefill on engine (computed > 0 ? 0 : 4) growing kv;
    observe first = now;
    decode on engine (8) growing kv;
  }
  observe done = now;
  record job { sent = 0; }
}

run { horizon inf; warmup 0; seed 1; }
"""

HEAD = ("warning: pool kv rejected 2 hold(s) that can never fit its capacity 8 (66.7 % of its 3 rejections and "
        "admissions after the warm-up: 2 rejected, 1 admitted; a hold still queued at the end is in neither); "
        "their sessions ended there")


def run(src: str):
    return serq_sim.run(serq_frontend.compile(source=src))


def test_a_hold_refused_on_re_admission_is_counted_apart_from_one_refused_when_it_first_joined():
    r = run(PROGRAM)
    kv = r.pool("kv")
    # one admission (session 0's first), one preemption, two rejections: 0 at its re-admission, 1 at its join
    assert (kv.admissions, kv.preemptions, kv.rejections) == (1, 1, 2)
    # session 0 observed its start (0) and its first token (1) before the preemption; nothing after the hold
    started, first, done = r.observe("started"), r.observe("first"), r.observe("done")
    assert (list(started.values), list(started.sessions)) == ([0.0], [0])
    assert (list(first.values), list(first.sessions)) == ([1.0], [0])
    assert len(done) == 0 and len(r.records("job", kind="numpy")["sent"]) == 0
    # the engine ran [0,1] the prefill, [1,5] four decode tokens, [5,6] the step that only preempted
    assert r.result.end == 6.0
    (w,) = [n for n in r.warnings if "rejected" in n]
    assert w == (HEAD + ": 1 when it joined the queue, so the latency figures cover only the admitted; 1 on "
                 "re-admission after a preemption (its units or reserve, evaluated again, above the capacity): what "
                 "the session observed before the preemption is in the figures and what it would have observed or "
                 "recorded after the hold is not (with lib/vllm.sq, a request that had its first token: its hit, "
                 "first_token and ttft are observed; it has no done, response, preempted or row in the records)")


def test_without_a_refusal_after_a_preemption_the_warning_is_as_it_was():
    # session 0 alone with a reserve of 12: rejected when it first joins, as session 1 above
    r = run(PROGRAM.replace("arrive batch(2);", "arrive batch(1);").replace("serial == 0 ? computed + 4 : 12", "12"))
    (w,) = [n for n in r.warnings if "rejected" in n]
    assert w == ("warning: pool kv rejected 1 hold(s) that can never fit its capacity 8 (100 % of its 1 rejections "
                 "and admissions after the warm-up: 1 rejected, 0 admitted; a hold still queued at the end is in "
                 "neither); their sessions ended there, so the latency figures cover only the admitted")


def test_the_warm_up_applies_to_a_refusal_by_its_time_as_to_every_rejection():
    # a warm-up of 0.5 leaves out the join's rejection at 0 and session 0's admission at 0, and keeps its
    # re-admission's rejection at 5: the warning then names that one alone
    r = serq_sim.run(serq_frontend.compile(source=PROGRAM), warmup=0.5)
    kv = r.pool("kv")
    assert (kv.admissions, kv.rejections) == (0, 1)
    (w,) = [n for n in r.warnings if "rejected" in n]
    assert w.startswith("warning: pool kv rejected 1 hold(s) that can never fit its capacity 8 (100 % of its 1 "
                        "rejections and admissions after the warm-up: 1 rejected, 0 admitted; a hold still queued "
                        "at the end is in neither); their sessions ended there: 1 on re-admission after a "
                        "preemption (its units or reserve, evaluated again, above the capacity): ")
    # a warm-up of 5.5 leaves out both
    r = serq_sim.run(serq_frontend.compile(source=PROGRAM), warmup=5.5)
    assert r.pool("kv").rejections == 0
    assert not [n for n in r.warnings if "rejected" in n]
