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

    head = (f"note: every seed ran the same run: at each of {len(groups)} {number_of(len(groups), 'point')} its "
            f"{counted} seeds gave every figure alike")
    empty = _measured_nothing(groups, columns)
    if empty is not None:
        # runs that ended before anything did have the same figures whatever they drew (none measures a draw)
        return (f"{head}, because no run completed anything ({empty}): the runs measured nothing, whatever the "
                f"program draws; {what}: a CI of 0 here measures no precision (a longer horizon gives "
                "figures to compare)")
    return (f"{head}, as a program that draws no random number does (a trace replayed `ordered` at fixed "
            f"gaps, constant work); {what}: a CI of 0 here measures no precision, and more seeds add nothing (random "
            "arrivals, `arrive poisson(…)`, or a draw make the seeds differ)")


def _measured_nothing(groups: Sequence[Sequence[Mapping[str, Any]]], columns: Sequence[str]) -> str | None:
    """When no run of ``groups`` completed anything (the table's ``ended``, ``turns`` and every stage's
    ``completions`` 0 in each: a run stopped before anything it measures happened, as under ``--horizon
    5e-324``), where they ended (``each ended at t=END``, or ``they ended by t=LAST``); ``None`` otherwise, and
    for a table without those columns."""
    counts = [c for c in columns if c in ("ended", "turns") or (c.startswith("stages.") and c.endswith(".completions"))]
    if "ended" not in counts and "turns" not in counts:
        return None
    runs = [r for g in groups for r in g]
    if any(r.get(c) != 0 for r in runs for c in counts):
        return None
    ends = {r.get("end") for r in runs}
    where = "no session ended, no stage completed a job"
    if any(not isinstance(e, (int, float)) or isinstance(e, bool) or e != e for e in ends):
        return where
    from serq_ir.rules import show_number

    return where + (f"; each ended at t={show_number(float(ends.pop()))}" if len(ends) == 1
                    else f"; they ended by t={show_number(float(max(ends)))}")
