"""The warnings about the figures: not steady, too few samples after the warm-up, holds rejected as never
fitting (the deadlock and stuck notes: test_hangs.py, test_pools.py). Each fires on a program built for it,
with its figures, and is silent on a steady run; the shipped examples' notes at their defaults are pinned
by test_golden_runs.py (a note these added there would fail it)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq.cli import main
from serq_sim import notes

MM1 = """
stage s : fifo;
workload {{ arrive poisson({rate}); }}
session {{ set t0 = now; run s (~exp(1)); observe response = now - t0; }}
run {{ horizon {horizon}; warmup {warmup}; }}
"""


def warnings(src: str, seed: int = 1) -> list[str]:
    return serq_sim.run(serq_frontend.compile(source=src), seed=seed).warnings


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_overloaded_queue_is_not_steady(seed):
    # rho = 1.2: the queue grows by 0.2 a second, and so does the response time
    (w,) = warnings(MM1.format(rate=1.2, horizon=2000, warmup=200), seed)
    assert w.startswith("warning: the run is not steady: observe response climbs through the run")
    assert "first half" in w and "slope t = " in w and "session(s) arrived" in w


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_steady_queue_is_not_flagged(seed):
    assert warnings(MM1.format(rate=0.8, horizon=20000, warmup=2000), seed) == []


def test_the_trend_statistic_by_hand():
    # 20 batches of 10 samples, batch k all k: slope 1 per batch, no residual, rise 19 / 9.5 = 200 %
    x = [float(k) for k in range(20) for _ in range(10)]
    t, rise, first, second = notes.trend(x)
    assert t == float("inf") and rise == 2.0 and (first, second) == (4.5, 14.5)
    assert notes.trend([1.0] * 200) is None  # flat, no scatter: nothing to test
    assert notes.trend([1.0] * 199) is None  # too few samples
    # alternating batch means 0, 2, 0, 2, …: no slope
    alt = [float(2 * (k % 2)) for k in range(20) for _ in range(10)]
    assert abs(notes.trend(alt)[0]) < 1


def test_a_short_run_after_the_warm_up_has_too_few_samples():
    (w,) = warnings(MM1.format(rate=0.5, horizon=60, warmup=20))
    assert w.startswith("warning: too few samples after the warm-up (t = 20) for a CI and quantiles (at least 40): "
                        "response ")
    assert warnings(MM1.format(rate=0.5, horizon=2000, warmup=20)) == []


def test_holds_that_never_fit_are_rejected_with_their_share():
    src = """
    pool kv { cap 100; }
    stage s : delay;
    workload { arrive poisson(1); }
    session { set n = serial % 4 == 0 ? 150 : 50; set t0 = now; hold kv (n) { run s (0.1); }
              observe response = now - t0; }
    run { horizon 400; warmup 0; }
    """
    report = serq_sim.run(serq_frontend.compile(source=src))
    pool = report.pool("kv")
    (w,) = report.warnings
    total = pool.rejections + pool.admissions
    assert pool.rejections > 0
    assert w == (f"warning: pool kv rejected {pool.rejections} hold(s) that can never fit its capacity 100 "
                 f"({pool.rejections / total * 100:.3g} % of the {total} that reached it after the warm-up: "
                 f"{pool.rejections} rejected, {pool.admissions} admitted); their sessions ended there, so the "
                 "latency figures cover only the admitted")
    # every fourth session asks for 150 of 100
    assert abs(pool.rejections / total - 0.25) < 0.06


def test_strict_fails_on_a_warning(tmp_path, capsys):
    path = tmp_path / "p.sq"
    path.write_text(MM1.format(rate=1.2, horizon=2000, warmup=200))
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--no-progress", "--strict"])
    out = capsys.readouterr().out
    assert info.value.code == 4 and "warning: the run is not steady" in out
