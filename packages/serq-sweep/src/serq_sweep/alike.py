"""The note that every seed of a sweep or a comparison ran the same run.

A program that draws no random number (a trace replayed ``ordered`` at fixed gaps, as
examples/replay/vllm_replay.sq; constant work and think times) runs the same run under every seed, so a
sweep's CIs across its seeds are 0 and a comparison's paired and unpaired CIs are 0 with no variance
reduction (NaN): figures that read as perfect precision, where the seeds measured nothing. ``serq sweep``
and ``serq compare`` say so on standard error when it is so at every point of two seeds or more.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def seeds_alike(runs: Sequence[Mapping[str, Any]], columns: Sequence[str], what: str) -> str | None:
    """The note when every point of ``runs`` (a sweep's rows: ``point``, ``status`` and the figures of
    ``columns``) that has two finished runs or more has every figure alike in all of them, ``None``
    otherwise (and when no point has two runs). ``what`` says what that makes of the figures (``the CIs across them
    are 0``)."""
    from .core import figure_columns

    figures = figure_columns(columns)
    by_point: dict[Any, list[Mapping[str, Any]]] = {}
    for r in runs:
        if r.get("status") == "ok":
            by_point.setdefault(r.get("point"), []).append(r)
    groups = [g for g in by_point.values() if len(g) > 1]
    if not groups or not figures:
        return None
    for g in groups:
        first = g[0]
        if any(not _same(first.get(f), r.get(f)) for r in g[1:] for f in figures):
            return None
    seeds = sorted({len(g) for g in groups})
    counted = str(seeds[0]) if len(seeds) == 1 else f"{seeds[0]} to {seeds[-1]}"
    from serq.errors import number_of

    return (f"note: every seed ran the same run: at each of {len(groups)} {number_of(len(groups), 'point')} its "
            f"{counted} seeds gave every "
            "figure alike, as a program that draws no random number does (a trace replayed `ordered` at fixed "
            f"gaps, constant work); {what}: a CI of 0 here measures no precision, and more seeds add nothing (random "
            "arrivals, `arrive poisson(…)`, or a draw make the seeds differ)")
