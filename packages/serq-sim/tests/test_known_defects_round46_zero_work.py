"""A run of zero work (language.txt §3: "A run of zero work completes at once") on each stage kind: it waits
for nothing, a busy fifo included, and it is no job of the stage, so it counts in none of the stage's
figures (completions, throughput, service, wait, present; a step engine's iterations and requests), as
docs/simulator.md says ("What a stage's completions count"): the spec leaves the count open and both tiers
keep this one. Every figure by hand."""

from __future__ import annotations

from conform import report_json, run

PROGRAM = """stage f : fifo;
stage d : delay;
stage p : ps(1);
stage E : step { budget 8; cost 1; }

workload {
  arrive batch(2);
}

session {
  run f (serial);
  run f (0);
  observe zero = now;
  run d (0);
  run p (0);
  run E prefill (0);
  run E decode (0);
  observe after = now;
  run d (2);
}

run { horizon 10; }
"""


def _stage(r, name) -> dict:
    return next(s for s in report_json(r)["stages"] if s["name"] == name)


def test_zero_work_is_done_at_once_and_counts_in_no_stage_figure(monkeypatch):
    """s0's fifo run of 0 work ends at 0; s1's of 1 too (f is free: s0's run was no job), [0, 1]. Then each
    runs 0 on f while it is free or busy, and 0 on d, p and E: no time passes (zero and after at 0 and 1).
    f: one job (s1's 1), completions 1, throughput 1 / 10, service 1, wait 0, present 1 / 10; d: the two
    runs of 2, [0, 2] and [1, 3], completions 2, throughput 0.2, service 2, present 4 / 10; p and E: none,
    no iteration."""
    r, obs = run(PROGRAM, monkeypatch)
    assert [(s, t) for s, t, _v in obs["zero"]] == [(0, 0.0), (1, 1.0)]
    assert [(s, t) for s, t, _v in obs["after"]] == [(0, 0.0), (1, 1.0)]
    f, d, p, e = (_stage(r, n) for n in ("f", "d", "p", "E"))
    assert {k: f[k] for k in ("completions", "throughput", "service", "wait", "present")} == \
        {"completions": 1, "throughput": 0.1, "service": 1.0, "wait": 0.0, "present": 0.1}
    assert {k: d[k] for k in ("completions", "throughput", "service", "wait", "present")} == \
        {"completions": 2, "throughput": 0.2, "service": 2.0, "wait": 0.0, "present": 0.4}
    assert p["completions"] == 0 and p["present"] == 0.0
    assert (e["completions"], e["iterations"]) == (0, 0)
