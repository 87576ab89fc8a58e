"""Common random numbers where every figure of one arm is known from the other's: a change of time scale.

The program (lib/vllm.sq's engine, Poisson arrivals at ``lam / k``, each request's prompt and output drawn)
takes the knob ``k`` in two places only: the step's time ``k * (0.5 + prefilled / 8 + decoders / 4)`` and the
arrival rate. The knob touches no random stream (docs/simulator.md, "Random streams"), so under one seed both
arms draw the same uniforms; with ``lam`` and ``k`` powers of two every gap ``-ln(1 - u) / (lam / k)`` of
``k = 2`` is twice that of ``k = 1`` exactly, every step's time is twice as long exactly, and the run is the
same run on a clock twice as slow: every time in the records doubles, bit for bit, and every other column is
the same. So each figure of the arm ``k = 2`` is, seed by seed, the figure of ``k = 1`` times 2 (a time: TTFT,
ITL, E2EL, their statistics, the run's end), times 1/2 (a rate: req/s, tok/s) or times 1 (a count, a ratio),
exactly (every operation that makes a figure scales exactly by a power of two).

From that, ``serq compare``'s paired statistics follow by hand from the runs table (docs/sweep.md, "serq
compare"): the differences are ``a`` itself (times 1, -1/2 or 0), the paired half-width is the t quantile of
``n - 1`` degrees of freedom times their standard error, Welch's degrees of freedom are those of two variances in
the ratio 1 : 4, and the variance reduction is ``1 - var(a) / (var(a) + 4 var(a)) = 0.8`` for a time or a rate
(1 for a count, whose differences are 0). The t quantiles are the exact ones (docs/sweep.md; scipy.stats.t.ppf's
values written out here: 2.7764451 for 4 degrees of freedom, 2.4588237 for Welch's 100/17), Welch's degrees of
freedom taken as they are. The runs table, the points table and the records are the same
bytes for one local worker, two, and a Dask LocalCluster; ``serq plot`` draws the points' means and CIs, and the
records' CDFs per arm, from the same values.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.timeout(600)

SERQ = str(Path(sys.executable).parent / "serq")

SOURCE = """\
use "vllm.sq";

let k = 1;
let lam = 0.25;

pool reqs { cap 4; admit via engine; }
pool kv { cap 64 * 4; block 4; evict lru; preempt lifo; }
stage engine : step {
  budget 32;
  cost k * (0.5 + 0.125 * prefilled + 0.25 * decoders);
  memory kv;
}

workload {
  arrive poisson(lam / k);
  hidden o;
  turn {
    set n = 1 + floor(~exp(12));
    set o = 1 + floor(~exp(6));
  }
  session {
    turn;
    request;
    end;
  }
}

server {
  set t0 = now;
  vllm_request(reqs, kv, engine, n, o, t0);
}

run { arrivals 60; horizon inf; warmup 0; seed 1; }
"""

SEEDS = "1..5"
N = 5
# Student t's 0.975 quantile, exact to 7 decimals, for 4 and 5 degrees of freedom (the only ones met here)
# Student's t quantiles 0.975 (scipy.stats.t.ppf(0.975, df)) at the degrees of freedom these arms have: n - 1
# = 4, and Welch's (n - 1) 1.25^2 / (1 + 1/16) = 100/17 of two variances in the ratio 1 : 4
T_EXACT = {4: 2.7764451051977934, 100 / 17: 2.458823709699146}
TIMES = ("time", "sent", "admitted", "first_token", "last_token")
SAME = ("session", "turn", "prompt", "output", "cached", "preemptions", "engine")


def _serq(*args, cwd):
    r = subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=500, cwd=cwd, env=os.environ)
    assert r.returncode == 0, r.stderr
    return r


def _make_sweeps(tmp: Path) -> None:
    (tmp / "scale.sq").write_text(SOURCE)
    common = ["scale.sq", "--set", "k=1,2", "--seeds", SEEDS, "--no-progress"]
    for name, engine in (("w1", ["--workers", "1"]), ("w2", ["--workers", "2"]),
                         ("dask", ["--workers", "2", "--dask", "local"])):
        _serq("sweep", *common, *engine, "-o", f"{name}.csv", "--records", f"{name}.records.parquet", cwd=tmp)
    _serq("compare", *common, "--workers", "1", "-o", "cmp.csv", cwd=tmp)
    # the same comparison with the seeds in another order, on a Dask LocalCluster
    _serq("compare", "scale.sq", "--set", "k=1,2", "--seeds", "5,3,1,2,4", "--no-progress", "--workers", "2",
          "--dask", "local", "-o", "cmp_dask.csv", cwd=tmp)


@pytest.fixture(scope="module")
def sweeps(once_per_run):
    # the sweeps and comparisons, made once for the test run (not once for each worker that runs a test here)
    return once_per_run("time-scale-sweeps", _make_sweeps)


def _arms(frame):
    a = frame[frame["k"] == 1].sort_values("seed").reset_index(drop=True)
    b = frame[frame["k"] == 2].sort_values("seed").reset_index(drop=True)
    assert a["seed"].tolist() == b["seed"].tolist() == list(range(1, N + 1))
    return a, b


def _scale(a: list[float], b: list[float]) -> float:
    """The factor (2, 1/2 or 1) that makes every ``b`` its ``a`` exactly, or a failure naming the column."""
    for c in (1.0, 2.0, 0.5):
        if all((x * c == y) or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b)):
            return c
    raise AssertionError(f"no factor of 2, 1/2 or 1 maps {a} to {b}")


def test_the_records_of_twice_the_time_scale_are_twice_the_times_and_the_same_draws(sweeps):
    r = pd.read_parquet(sweeps / "w1.records.parquet")
    a, b = (r[r["k"] == k].reset_index(drop=True) for k in (1, 2))
    assert len(a) == len(b) == 60 * N
    assert a["seed"].tolist() == b["seed"].tolist()
    for col in TIMES:
        assert (b[col].to_numpy() == 2 * a[col].to_numpy()).all(), col
    for col in SAME:
        assert (b[col].to_numpy() == a[col].to_numpy()).all(), col
    # the draws moved nothing: the prompts differ between seeds (a draw), never between the arms
    assert len(set(a["prompt"].tolist())) > 5


def test_every_figure_of_the_slower_arm_is_the_faster_arms_scaled_seed_by_seed(sweeps):
    runs = pd.read_csv(sweeps / "w1.csv")
    a, b = _arms(runs)
    numeric = [c for c in runs.columns if c not in ("point", "k", "seed") and runs[c].dtype.kind in "fiu"]
    factors = {c: _scale(a[c].astype(float).tolist(), b[c].astype(float).tolist()) for c in numeric}
    for c in ("requests.ttft.mean", "requests.ttft.p99", "requests.itl.median", "requests.e2el.std",
              "requests.tpot.p90", "end", "requests.duration", "requests.queue.mean"):
        assert factors[c] == 2.0, c
    for c in ("requests.request_throughput", "requests.output_throughput", "requests.total_token_throughput"):
        assert factors[c] == 0.5, c
    for c in ("requests.completed", "requests.total_output_tokens", "requests.ttft.count", "requests.itl.count",
              "requests.prefix_cache_hit_rate", "arrivals"):
        assert factors[c] == 1.0, c


def _hand_paired(xs: list[float], ys: list[float]) -> dict[str, float]:
    """docs/sweep.md's paired comparison, written out: means, the paired t half-width over the differences,
    Welch's over the two arms (its degrees of freedom as they are), ``1 - var(b - a) / (var(a) + var(b))``."""
    n = len(xs)

    def mean(v):
        return math.fsum(v) / n

    def var(v):
        m = mean(v)
        return math.fsum((x - m) ** 2 for x in v) / (n - 1)

    d = [y - x for x, y in zip(xs, ys)]
    if var(xs) == 0:
        return {}
    va, vb, vd = var(xs) / n, var(ys) / n, var(d)
    df = (va + vb) ** 2 / ((va * va + vb * vb) / (n - 1))
    t_welch = T_EXACT[100 / 17] if df == pytest.approx(100 / 17, rel=1e-12) else math.nan
    return {"a": mean(xs), "b": mean(ys), "diff": mean(d), "ci_paired": T_EXACT[n - 1] * math.sqrt(vd / n),
            "ci_unpaired": t_welch * math.sqrt(va + vb), "df": df,
            "variance_reduction": 1 - vd / (var(xs) + var(ys))}


def test_serq_compare_is_the_paired_statistics_of_the_per_seed_values_by_hand(sweeps):
    runs = pd.read_csv(sweeps / "w1.csv")
    a, b = _arms(runs)
    cmp = pd.read_csv(sweeps / "cmp.csv")
    assert set(cmp["arm"]) == {"k=2"} and set(cmp["base"]) == {"k=1"}
    checked = {2.0: 0, 0.5: 0}
    for row in cmp.itertuples(index=False):
        xs, ys = a[row.figure].astype(float).tolist(), b[row.figure].astype(float).tolist()
        if any(math.isnan(v) for v in xs + ys):
            continue
        c = _scale(xs, ys)
        want = _hand_paired(xs, ys)
        assert row.n == N
        assert c != 1.0, row.figure  # a figure the same in both arms at every seed is left out (below)
        if len(set(xs)) == 1:  # one value at every seed (a constant step's time), doubled: no spread at all
            assert (row.a, row.b, row.diff) == (xs[0], ys[0], ys[0] - xs[0]), row.figure
            assert (row.ci_paired, row.ci_unpaired) == (0.0, 0.0), row.figure
        else:
            # variances in the ratio 1 : 4 give Welch's df (n - 1) 1.25^2 / (1 + 1/16) = 100/17, as it is
            assert want["df"] == pytest.approx(4 * 1.5625 / 1.0625, rel=1e-12)
            for key in ("a", "b", "diff", "ci_paired", "ci_unpaired"):
                assert getattr(row, key) == pytest.approx(want[key], rel=1e-12, abs=0), (row.figure, key)
            assert row.variance_reduction == pytest.approx(0.8, rel=1e-12) == want["variance_reduction"]
            # the differences are a (or -a / 2): the paired CI is the arm's own CI across the seeds (scaled)
            assert row.ci_paired == pytest.approx(abs(c - 1) * T_EXACT[4] * math.sqrt(
                math.fsum((x - want["a"]) ** 2 for x in xs) / (N - 1) / N), rel=1e-12)
        checked[c] += 1
    # serQ's quantiles (serq_sweep.stats.t975) are the exact ones
    from serq_sweep.stats import t975

    assert [t975(d) for d in T_EXACT] == [pytest.approx(t, rel=1e-12) for t in T_EXACT.values()]
    assert checked[2.0] > 20 and checked[0.5] >= 3, checked
    # the figures the same in both arms at every seed (counts, ratios) are left out, and only they
    listed = set(cmp["figure"])
    for f in ("requests.completed", "requests.total_output_tokens", "requests.ttft.count", "arrivals"):
        assert a[f].tolist() == b[f].tolist() and f not in listed, f
    assert {"requests.ttft.mean", "requests.request_throughput", "end"} <= listed


def test_the_sweep_is_the_same_bytes_on_one_worker_two_and_dask(sweeps):
    for part in (".csv", ".points.csv", ".records.parquet"):
        ref = (sweeps / f"w1{part}").read_bytes()
        assert (sweeps / f"w2{part}").read_bytes() == ref, part
        assert (sweeps / f"dask{part}").read_bytes() == ref, part


def test_the_comparison_is_the_same_bytes_for_any_order_of_the_seeds_and_on_dask(sweeps):
    assert (sweeps / "cmp_dask.csv").read_bytes() == (sweeps / "cmp.csv").read_bytes()


def test_the_points_table_and_serq_plot_draw_the_per_seed_means_and_cis(sweeps):
    from serq_sweep.plots import curve_data, records_cdf_data

    runs = pd.read_csv(sweeps / "w1.csv")
    a, b = _arms(runs)
    points = pd.read_csv(sweeps / "w1.points.csv")
    fig, lines = curve_data(str(sweeps / "w1.csv"), "k", "requests.ttft.mean")
    (xs, means, cis), = lines.values()
    assert list(xs) == [1, 2]
    for i, arm in enumerate((a, b)):
        v = arm["requests.ttft.mean"].tolist()
        m = math.fsum(v) / N
        ci = T_EXACT[4] * math.sqrt(math.fsum((x - m) ** 2 for x in v) / (N - 1) / N)
        assert means[i] == pytest.approx(m, rel=1e-14)
        assert cis[i] == pytest.approx(ci, rel=1e-12)
        assert points.loc[i, "requests.ttft.mean:mean"] == pytest.approx(m, rel=1e-14)
        assert points.loc[i, "requests.ttft.mean:ci"] == pytest.approx(ci, rel=1e-12)
    assert (means[1], cis[1]) == (2 * means[0], 2 * cis[0])
    # the records' CDFs per arm: the slower arm's TTFTs are the faster's doubled, value for value
    cdfs = records_cdf_data(str(sweeps / "w1.records.parquet"), ["ttft", "tpot"], hue="k")
    for metric in ("ttft", "tpot"):
        fast, slow = cdfs[(metric, 1)], cdfs[(metric, 2)]
        assert len(fast) == len(slow) > 100
        assert slow == [2 * x for x in fast]
    # and serq plot draws both, the same bytes twice
    for name in ("p1.svg", "p2.svg"):
        _serq("plot", "w1.csv", "--x", "k", "--y", "requests.ttft.mean", "-o", name, cwd=sweeps)
    assert (sweeps / "p1.svg").read_bytes() == (sweeps / "p2.svg").read_bytes()
    _serq("plot", "w1.records.parquet", "--cdf", "ttft", "--hue", "k", "-o", "cdf.svg", cwd=sweeps)
    assert (sweeps / "cdf.svg").stat().st_size > 0


def test_a_knob_of_one_draw_moves_that_draw_alone_as_its_inverse_cdf_says(tmp_path):
    """examples/multi-turn/vllm_single_turn.sq draws a request's prompt ``1 + floor(~exp(E_n))`` and output
    ``1 + floor(~exp(E_o))`` at two places of its turn block. Doubling ``E_o`` touches no stream: each draw is
    still the same uniform, and an exponential of twice the mean is that uniform's ``-ln(1 - u)`` times twice the
    mean, so session by session (the same seed) the prompt and the send time are the same, and the output's
    ``floor(2 x)`` is twice ``floor(x)`` or one more, about half the time each."""
    prog = Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "vllm_single_turn.sq"
    _serq("sweep", str(prog), "--set", "E_o=250,500", "--seeds", "1..2", "--horizon", "40", "--warmup", "0",
          "--workers", "1", "--no-progress", "-o", "eo.csv", "--records", "eo.records.csv", cwd=tmp_path)
    r = pd.read_csv(tmp_path / "eo.records.csv")
    a = r[r["E_o"] == 250].set_index(["seed", "session"])
    b = r[r["E_o"] == 500].set_index(["seed", "session"])
    both = a.merge(b, how="inner", left_index=True, right_index=True, suffixes=("_a", "_b"))
    assert len(both) == len(b) > 150  # the slower arm finishes fewer by the horizon, each one the faster has too
    assert (both["prompt_a"] == both["prompt_b"]).all()
    assert (both["sent_a"] == both["sent_b"]).all()
    xa, xb = both["output_a"] - 1, both["output_b"] - 1
    assert ((xb == 2 * xa) | (xb == 2 * xa + 1)).all()
    assert 0.35 < (xb == 2 * xa).mean() < 0.65
