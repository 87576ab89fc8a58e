"""A plot of many lines has no legend (serq_sweep.plots.MAX_LEGEND): ``serq plot recs.csv --cdf ttft --hue
session`` (a line per session, 45 of them) drew a legend that took the whole figure, and matplotlib
collapsed the axes to nothing, saying so on stderr (a UserWarning quoting plots.py's line). Past 30 lines
the axes say how many lines there are instead; a few lines keep their legend."""

from __future__ import annotations

import warnings

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from serq_sweep import plots  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def _records(sessions: int):
    rows = [{"session": s, "turn": 1, "sent": 0.0, "admitted": 0.0, "first_token": 0.01 * (s + k),
             "last_token": 1.0 + s + k, "prompt": 10, "output": 5} for s in range(sessions) for k in range(3)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("sessions, legend", [(3, True), (30, True), (45, False)])
def test_a_legend_for_few_lines_a_count_for_many(tmp_path, sessions, legend):
    figure = plots.records_cdf(_records(sessions), ["ttft"], hue="session")
    ax = figure.axes[0]
    assert len(ax.get_lines()) == sessions
    assert (ax.get_legend() is not None) == legend
    notes = [t.get_text() for t in ax.texts]
    assert notes == ([] if legend else [f"{sessions} lines, a line per value of --hue session: too many for a "
                                        "legend"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "axes sizes collapsed to zero" was one
        plots.save(figure, str(tmp_path / "f.png"))
