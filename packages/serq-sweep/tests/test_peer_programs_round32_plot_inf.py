"""A swept value of inf on a curve's x axis (a knob's "off": vLLM's long-prefill threshold C, a cap, max_seqs)
is drawn as a dashed level across the axes, labelled ``C = inf``, with its CI as a pale band: ``serq plot
ls.csv --x C --y observes.ttft_short.p99`` of a sweep over C=256,512,1024,2048,inf drew the four finite
points and left out, without a word, the one they are compared with (peer_programs32/long_short.sq)."""

from __future__ import annotations

import math

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from serq_sweep import plots  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def _runs(hue: bool = False) -> pd.DataFrame:
    rows = []
    for g in ((0, 1) if hue else (0,)):
        for c in (256.0, 512.0, math.inf):
            for seed, y in ((1, 1.0), (2, 3.0)):
                row = {"point": 0, "C": c, "seed": seed, "status": "ok", "key": "k",
                       "observes.t.p99": y * (1 if c == math.inf else c / 512) + 10 * g}
                if hue:
                    row = {"point": 0, "g": g, **{k: v for k, v in row.items() if k != "point"}}
                rows.append(row)
    return pd.DataFrame(rows)


def _span(patch) -> tuple[float, float]:
    """The y extent of an axhspan's patch (a Rectangle, or a Polygon in older matplotlib)."""
    ys = [v[1] for v in patch.get_path().transformed(patch.get_patch_transform()).vertices] \
        if hasattr(patch, "get_patch_transform") else [v[1] for v in patch.get_xy()]
    return min(ys), max(ys)


def _levels(ax):
    return [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]


def test_a_swept_inf_is_a_dashed_level_with_its_band(tmp_path):
    figure = plots.curve(_runs(), "C", "observes.t.p99")
    ax = figure.axes[0]
    (line,) = [ln for ln in ax.get_lines() if ln.get_linestyle() != "--"]
    assert list(line.get_xdata()) == [256.0, 512.0]
    assert list(line.get_ydata()) == [1.0, 2.0]  # the means of (0.5, 1.5) and (1, 3)
    (level,) = _levels(ax)
    assert list(level.get_ydata()) == [2.0, 2.0]  # the mean of 1 and 3 at C = inf
    assert level.get_label() == "C = inf"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["C = inf"]
    # its 95 % CI (Student t, one degree of freedom: 12.706 x the standard error 1) as a band
    (band,) = ax.patches  # (the line's band is a collection)
    lo, hi = _span(band)
    assert lo == pytest.approx(2 - 12.706, abs=1e-3) and hi == pytest.approx(2 + 12.706, abs=1e-3)
    plots.save(figure, str(tmp_path / "f.svg"))


def test_a_level_per_hue_line_named_by_both():
    ax = plots.curve(_runs(hue=True), "C", "observes.t.p99", hue="g").axes[0]
    assert sorted(ln.get_label() for ln in _levels(ax)) == ["g = 0, C = inf", "g = 1, C = inf"]
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == [
        "g = 0", "g = 0, C = inf", "g = 1", "g = 1, C = inf"]


def test_a_sweep_of_inf_alone_is_drawn_not_refused():
    frame = _runs()
    ax = plots.curve(frame[frame["C"] == math.inf], "C", "observes.t.p99").axes[0]
    (level,) = _levels(ax)
    assert list(level.get_ydata()) == [2.0, 2.0]


def test_a_points_table_draws_its_level_too():
    frame = pd.DataFrame({"point": [0, 1], "C": [512.0, math.inf], "runs": [2, 2],
                          "observes.t.p99:mean": [1.0, 4.0], "observes.t.p99:ci": [0.5, 0.25]})
    ax = plots.curve(frame, "C", "observes.t.p99").axes[0]
    (level,) = _levels(ax)
    assert list(level.get_ydata()) == [4.0, 4.0]
    (band,) = ax.patches
    assert _span(band) == (3.75, 4.25)
