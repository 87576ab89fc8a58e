"""A DataFrame given to ``aggregate`` or ``plot`` that names a column twice (two frames joined side by side, a
column renamed to one the frame has) is refused naming the column, as a table's file that does is: aggregate
ended in pandas' ``AttributeError: 'DataFrame' object has no attribute 'dtype'`` for a figure named twice, and
a swept name renamed ``seed`` grouped every run as one point, silently (one row of 6 runs)."""

from __future__ import annotations

import pytest

pd = pytest.importorskip("pandas")

from serq.errors import UserError  # noqa: E402
from serq_sweep import aggregate, plot  # noqa: E402

ROWS = [{"point": p, "lam": lam, "seed": s, "status": "ok", "message": "", "warnings": "", "key": f"{p}{s}" * 12,
         "events": 10, "observes.w.mean": lam * s} for p, lam in enumerate((0.5, 1.0)) for s in (1, 2, 3)]


def _frames():
    whole = pd.DataFrame(ROWS)
    joined = pd.concat([whole, whole[["observes.w.mean"]]], axis=1)
    renamed = whole.rename(columns={"lam": "seed"})
    return whole, joined, renamed


def test_aggregate():
    whole, joined, renamed = _frames()
    points = aggregate(whole)
    assert points["runs"].tolist() == [3, 3]
    assert points["observes.w.mean:mean"].tolist() == [1.0, 2.0]  # (0.5 * 1, 2, 3 and 1 * 1, 2, 3: by hand)
    with pytest.raises(ValueError, match=r"^frame names the column observes\.w\.mean twice, as columns 9 and 10: no "
                                         r"column of a table is named twice$"):
        aggregate(joined)
    with pytest.raises(ValueError, match=r"^frame names the column seed twice, as columns 2 and 3"):
        aggregate(renamed)


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    whole, joined, renamed = _frames()
    plot(whole, str(tmp_path / "ok.svg"), x="lam", y="w.mean")
    for frame, name in ((joined, "observes.w.mean"), (renamed, "seed")):
        with pytest.raises(UserError, match=rf"the frame names the column {name} twice"):
            plot(frame, str(tmp_path / "no.svg"), x="lam" if name != "seed" else "seed", y="w.mean")
    assert not (tmp_path / "no.svg").exists()
