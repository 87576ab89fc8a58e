"""serq plot says nothing of matplotlib's timing: placing a legend where it covers the fewest points (``loc="best"``)
warns, as a UserWarning naming serq_sweep/plots.py, when it took more than a second, so a CDF of a million requests
printed that line on stderr or not by the machine's load. The picture is the same either way."""

from __future__ import annotations

import io
import itertools

import matplotlib.legend
from serq_sweep import plots


class _SlowClock:
    """A perf_counter whose every reading is 2 s after the one before: each legend placement "took" 2 s."""

    def __init__(self):
        self.ticks = itertools.count(0, 2.0)

    def perf_counter(self) -> float:
        return float(next(self.ticks))


def _records(path):
    lines = ["session,turn,time,sent,admitted,first_token,last_token,prompt,output,cached,preemptions,engine"]
    lines += [f"{i},0,{i + 2.0},{i * 1.0},{i * 1.0},{i + 0.25 * (i % 4 + 1)},{i + 2.0},100,10,0,0,0" for i in range(50)]
    path.write_text("\n".join(lines) + "\n")


def test_a_slow_legend_placement_says_nothing(tmp_path, monkeypatch, capfd):
    _records(tmp_path / "r.csv")
    plots.plot(str(tmp_path / "r.csv"), str(tmp_path / "fast.svg"), cdf_of=["ttft", "e2el"])
    monkeypatch.setattr(matplotlib.legend, "time", _SlowClock())
    plots.plot(str(tmp_path / "r.csv"), str(tmp_path / "slow.svg"), cdf_of=["ttft", "e2el"])
    err = capfd.readouterr().err
    assert "can be slow" not in err and "UserWarning" not in err, err
    assert (tmp_path / "slow.svg").read_bytes() == (tmp_path / "fast.svg").read_bytes()


def test_matplotlib_does_warn_of_it(monkeypatch, recwarn):
    # (what is filtered: matplotlib's warning at a default legend placement that took long, outside serq's save)
    from matplotlib.figure import Figure

    figure = Figure()
    ax = figure.add_subplot()
    ax.plot([0, 1], [0, 1], label="a")
    ax.legend()
    monkeypatch.setattr(matplotlib.legend, "time", _SlowClock())
    figure.savefig(io.BytesIO(), format="svg")
    assert any('Creating legend with loc="best" can be slow' in str(w.message) for w in recwarn.list)
