"""A name a figure draws is cut to the room it has (serq_sweep.plots._drawn, MAX_DRAWN, MAX_DRAWN_GAUGE).

Names are the program's (an observe's, a gauge's, a swept let's), of any length. ``serq plot DUMP --cdf NAME``
of an observe named with 150 characters drew a legend wider than the figure: matplotlib collapsed the axes to
nothing and said so on stderr, a UserWarning quoting plots.py's line; a y label of 100 characters, a gauge's
name of 40 beside its axes and a title ran off the figure. Each such name is now drawn as its first and last
characters around a ``…``, at most 32 characters (16 beside a gauge's axes, 2.2 inches high); a shorter name
is drawn whole (32, not 26: the report's own figures are drawn whole, requests.prefix_cache_hit_rate among them).
"""

from __future__ import annotations

import warnings

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from serq_sweep import plots  # noqa: E402

pytestmark = pytest.mark.timeout(120)

LONG = "m" * 150  # the widest of the letters a name is written with, but one


def test_drawn():
    assert plots._drawn("observes.x.mean") == "observes.x.mean"
    assert plots._drawn("a" * 32) == "a" * 32
    assert plots._drawn("requests.prefix_cache_hit_rate") == "requests.prefix_cache_hit_rate"
    assert plots._drawn("requests.total_token_throughput") == "requests.total_token_throughput"
    cut = plots._drawn("a" * 12 + "b" * 100 + "c" * 13 + ".p99")
    assert cut == "a" * 12 + "bbb…" + "c" * 12 + ".p99" and len(cut) == 32
    assert plots._drawn("x" * 17, 16) == "x" * 7 + "…" + "x" * 8
    assert plots._drawn(0.5) == "0.5"


def _no_warning(figure, path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "axes sizes collapsed to zero" was one
        plots.save(figure, str(path))


def _texts(figure):
    out = []
    for ax in figure.axes:
        out += [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
        if ax.get_legend() is not None:
            out += [t.get_text() for t in ax.get_legend().get_texts()]
    return [t for t in out if t]


GAUGE = "w" * 40


def test_a_dump_of_long_names(tmp_path, monkeypatch, capsys):
    from serq.cli import _main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(f"stage s : fifo;\ngauge {GAUGE} = queue(s);\nworkload {{ arrive poisson(1); }}\n"
                                   f"session {{ set t0 = now; run s (~exp(0.5)); observe {LONG} = now - t0; }}\n"
                                   "run { horizon 60; warmup 0; seed 1; }\n")
    (tmp_path / "d").mkdir()
    assert _main(["run", "p.sq", "--dump", "d", "--no-progress"]) == 0
    capsys.readouterr()
    figure = plots.cdf("d", [LONG])
    n = len(figure.axes[0].get_lines()[0].get_xdata())
    assert _texts(figure) == ["value", "fraction of samples ≤ value", "m" * 15 + "…" + "m" * 16 + f" ({n} samples)"]
    _no_warning(figure, tmp_path / "c.png")
    figure = plots.gauges("d", [GAUGE, GAUGE])
    assert _texts(figure) == ["w" * 7 + "…" + "w" * 8, "time", "w" * 7 + "…" + "w" * 8]
    _no_warning(figure, tmp_path / "g.png")


def test_a_sweeps_table_of_long_names(tmp_path):
    rows = [{"point": p, LONG: x, "seed": s, "status": "ok", f"observes.{LONG}.mean": x * s}
            for p, x in enumerate([0.3, 0.5]) for s in (1, 2)]
    table = pd.DataFrame(rows)
    figure = plots.curve(table, "seed", f"observes.{LONG}.mean", hue=LONG)
    short = "m" * 15 + "…" + "m" * 16
    assert _texts(figure) == ["seed", "observes.mmmmmm…mmmmmmmmmmm.mean",
                              "observes.mmmmmm…mmmmmmmmmmm.mean (mean, 95 % CI across seeds)",
                              f"{short} = 0.3", f"{short} = 0.5"]
    _no_warning(figure, tmp_path / "c.png")
