"""``--find`` says a condition judged on the mean of fewer runs than the seeds (docs/sweep.md, capacity search).

A run without a value of a condition's figure (an observe that took no sample; a request metric of a run that
completed no request after the warm-up: a vLLM fleet far past its load, `peer_programs17/fleet.sq` at 12/s on one
engine of 300 blocks, seed 2 of 40 s) is left out of the mean the condition is judged on. `--show` says such a mean
with `(n=2)`, `serq compare` with its columns n_a and n_b; `--find` judged it without a word, so a fleet whose one
seed completed nothing held a TTFT bound on the other two seeds' figures alone. It now says which figure, where,
over how many of the runs.
"""

from __future__ import annotations

import pytest
from serq_sweep.search import find

pytestmark = pytest.mark.timeout(60)

# every session is served 1 s by fifo(c) and observed with probability 1/4: some seeds observe none by t = 4
PROGRAM = """let c = 1;
stage svc : fifo(c);
workload { arrive poisson(1); }
session {
  set t0 = now;
  set keep = ~bernoulli(0.25);
  run svc (1);
  branch (keep) {
    observe response = now - t0;
  }
  end;
}
run { horizon 4; seed 1; }
"""
SEEDS = range(1, 7)


def _samples(c: int) -> dict[int, float | None]:
    """Each seed's response mean at c servers, None without a sample: serq_sim.run, one run at a time."""
    import serq_frontend
    import serq_sim

    program = serq_frontend.compile(source=PROGRAM.replace("let c = 1;", f"let c = {c};"))
    out = {}
    for seed in SEEDS:
        obs = serq_sim.run(program, seed=seed).result.observes["response"]
        out[seed] = obs.mean if obs.count else None
    return out


def test_a_condition_judged_over_fewer_runs_than_the_seeds_is_said(tmp_path, capsys):
    (tmp_path / "p.sq").write_text(PROGRAM)
    runs = {c: _samples(c) for c in (1, 2)}
    missing = {c: [s for s, m in runs[c].items() if m is None] for c in (1, 2)}
    assert missing[1] and missing[1] == missing[2]  # (the same seeds observe nothing at either count)
    means = {c: sum(m for m in runs[c].values() if m is not None) / (len(SEEDS) - len(missing[c])) for c in (1, 2)}
    assert means[2] <= 1.2 < means[1]  # one server makes some wait: fails at 1, holds at 2
    cols, rows = find(str(tmp_path / "p.sq"), "response.mean <= 1.2", ("c", "1:2:1"), seeds="1..6", workers=0)
    assert (rows[0]["c"], rows[0]["outcome"]) == (2, "found_smallest")
    assert rows[0]["observes.response.mean:mean"] == pytest.approx(means[2], rel=1e-12)
    n = len(SEEDS) - len(missing[1])
    assert capsys.readouterr().err == (
        "warning: conditions: a condition's figure had no value in some runs (no sample of it: an observe that took "
        "none, a request metric of a run that completed no request after the warm-up), and its mean was taken over "
        f"the others': observes.response.mean at c=1 over {n} of 6 runs; observes.response.mean at c=2 over {n} of "
        "6 runs\n")


@pytest.mark.parametrize("seeds, outcome", [
    ((1, 2), "found_smallest"),      # seeds whose every run observed: every mean over all of them
    ((3, 4), "fails_everywhere"),    # seeds that observed nothing: NaN meets no condition, as said before
])
def test_no_word_of_thin_means_when_every_run_or_none_has_a_value(tmp_path, capsys, seeds, outcome):
    (tmp_path / "p.sq").write_text(PROGRAM)
    runs = {c: _samples(c) for c in (1, 2)}
    assert all((runs[c][s] is None) == (seeds == (3, 4)) for c in (1, 2) for s in seeds)
    if seeds == (1, 2):  # (the two seeds' means: 1.2 fails at one server and holds at two)
        assert sum(runs[2][s] for s in seeds) / 2 <= 1.2 < sum(runs[1][s] for s in seeds) / 2
    cols, rows = find(str(tmp_path / "p.sq"), "response.mean <= 1.2", ("c", "1:2:1"), seeds=list(seeds), workers=0)
    assert rows[0]["outcome"] == outcome
    err = capsys.readouterr().err
    assert "over " not in err  # (no mean over fewer runs than the seeds)
    if seeds == (1, 2):
        assert "warning" not in err
    else:  # (no value in any run: said since test_hostile_round47_find_no_value, the condition failing for want of one)
        assert err.startswith("warning: conditions: no run of the search gave a value of observes.response.mean (")
