"""Every figure of a report, flattened to ``JSON.PATH -> value`` generically, so figures a report gains
later flow into a sweep's table without a change here.

The path of a figure is its place in the JSON report (``serq run --json``) with dots: ``events``,
``observes.ttft.p99``, ``gauges.live.mean``; an entry of a list of named objects (``stages``, ``pools``) is
addressed by its name, ``stages.engine.utilisation``, and a member of an array by ``name[index]``,
``pools.kv[1].used``. What says what was run, not what came of it (``report_version``, ``serq_version``,
``program``, ``seed``) and text lists (``notes``) are no figures. A figure may be named by any tail of its
path that no other figure ends with (``ttft.p99`` for ``observes.ttft.p99``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from serq.errors import UserError, clipped, did_you_mean

#: top-level keys of the report that are not figures
NOT_FIGURES = frozenset({"report_version", "serq_version", "program", "seed", "notes", "codes"})

#: The columns of the text report (serq_report.text: the stage, engine and pool tables) whose heading is not the
#: name of the figure they show, by heading. A figure is named by its path in the JSON report, so a name read
#: off the text report (``stages.engine[1].util``) is no figure; it was offered the nearest spelling of another
#: figure (``wait``; ``pools.kv.evicted``, the entries evicted, was offered ``evicted_units``; ``busy``,
#: ``batch``; ``req/s``, ``requests``), and is now offered the figure the column shows (:func:`resolve`).
TEXT_HEADINGS = {"util": "utilisation", "busy": "utilisation", "prefill-only": "prefill_only",
                 "decode-only": "decode_only", "tokens/it": "tokens", "token util": "token_utilisation",
                 "req/s": "request_throughput", "evicted": "evicted_entries"}


def _label(item: dict[str, Any]) -> str | None:
    name = item.get("name")
    if not isinstance(name, str):
        return None
    index = item.get("index")
    return name if index is None else f"{name}[{index}]"


def _walk(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _walk(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                label = _label(item)
                sub = {k: v for k, v in item.items() if k not in ("name", "index")}
                _walk(sub, f"{path}.{label if label is not None else i}", out)
            # a list of scalars (notes, text) is no figure
    elif value is None:
        out[path] = math.nan
    elif isinstance(value, bool):
        out[path] = value
    elif isinstance(value, (int, float, str)):
        out[path] = value


def flatten(result: Any) -> dict[str, Any]:
    """The figures of ``result`` (a :class:`serq_ir.report.Result`, a Report or the JSON report as a dict)
    in the report's order. ``null`` (NaN, an absent figure) is NaN."""
    from serq_ir.report import Result

    if hasattr(result, "result"):
        result = result.result
    if not isinstance(result, (dict, Result)):  # (None, a str: an AttributeError of .items())
        raise TypeError("result must be a report (serq_sim.run's), its serq_ir.report.Result or the JSON report "
                        f"as a dict, not {type(result).__name__}")
    if not isinstance(result, dict):
        import msgspec

        result = msgspec.to_builtins(result)
    out: dict[str, Any] = {}
    for k, v in result.items():
        if k not in NOT_FIGURES:
            _walk(v, k, out)
    return out


class UnknownFigure(UserError):
    """A figure name that no column is, nor ends (:func:`resolve`)."""


class AmbiguousFigure(UserError):
    """A figure name that two or more columns end with (:func:`resolve`): more columns only add tails, so it
    stays ambiguous (serq_sweep.core.check_figures tells the two apart by class, not by the message's
    words)."""


def resolve(name: str, columns: Iterable[str]) -> str:
    """The column a figure ``name`` means: itself, or the one column whose path ends with ``.name``;
    :class:`AmbiguousFigure` when several end with it, :class:`UnknownFigure` when none is or does (both
    are :class:`~serq.errors.UserError`)."""
    cols = list(columns)
    if name in cols:
        return name
    tails = [c for c in cols if c.endswith("." + name)]
    # a median is one figure by two words (MEDIANS): a tail ending with either means the columns that end
    # with the other too, so `ttft.p50` of a program with an observe ttft and the request metrics is as
    # ambiguous as `ttft.p99` (observes.ttft.p50, requests.ttft.median), and so is the bare `p50` (the tail
    # of no prefix: every observe's p50 and every request metric's median); a full path is the column it names
    other = _other_median(name)
    medians = [c for c in cols if c.endswith("." + other)] if other is not None and tails else []
    if len(tails) == 1 and not medians:
        return tails[0]
    # the name as a message quotes it: a long one cut around a … (one of 100 000 characters was quoted whole)
    shown = clipped(name)
    if tails:
        tails += medians
        raise AmbiguousFigure(f"figure {shown!r} is ambiguous: " + ", ".join(tails[:6])
                              + (" ..." if len(tails) > 6 else "")
                              + (f" (a median is one figure by either word: {MEDIANS}; name one by its path)"
                                 if medians else ""))
    stem, colon, stat = name.rpartition(":")
    if colon and stat in ("mean", "ci"):  # a points table's column, FIGURE:mean (it was offered another figure)
        meant = [stem] if stem in cols else [c for c in cols if c.endswith("." + stem)]
        if meant:
            paths = " or ".join(f"`{clipped(c)}`" for c in meant[:6]) + (" ..." if len(meant) > 6 else "")
            raise UnknownFigure(f"no figure {shown!r} in the results: a figure is named by its path, {paths} "
                                "(FIGURE:mean and FIGURE:ci are a points table's columns of its mean and CI across "
                                "the seeds)")
    members = _members(stem if colon and stat in ("mean", "ci") else name, cols)
    if members:
        shown_members = members if len(members) <= 4 else members[:3]
        listed = ", ".join(f"`{clipped(c)}`" for c in shown_members) + (f", …, `{clipped(members[-1])}`"
                                                                        if len(members) > 4 else "")
        raise UnknownFigure(f"no figure {shown!r} in the results: it names a family's figure, which each member "
                            f"has under its index: {listed} ({len(members)} member(s)); name one")
    other = _median_named_otherwise(stem if colon and stat in ("mean", "ci") else name, cols)
    if other is not None:
        raise UnknownFigure(f"no figure {shown!r} in the results (did you mean `{clipped(other)}`? {MEDIANS})")
    heading = _text_heading(stem if colon and stat in ("mean", "ci") else name, cols)
    if heading is not None:
        raise UnknownFigure(f"no figure {shown!r} in the results (did you mean {heading})")
    group = _statistics_of(name, cols)
    if group is not None:
        raise UnknownFigure(f"no figure {shown!r} in the results: {group}")
    hint = did_you_mean(stem if colon and stat in ("mean", "ci") else name, _names(cols))
    if not hint:
        near = [c for c in cols if name.split(".")[-1] in c.split(".")][:6]
        hint = f" (figures with {clipped(name.split('.')[-1])!r}: {', '.join(near)})" if near else ""
    raise UnknownFigure(f"no figure {shown!r} in the results{hint}")


def _statistics_of(name: str, cols: list[str]) -> str | None:
    """What to say of a ``name`` that is no figure but the figures' common head, an observe, a request metric, a
    gauge, a stage or a pool (``shed`` of ``observes.shed.mean``, ``.ci``, …): the figures are its statistics,
    and the name meant is one of them (it was offered the nearest spelling, ``shed.ci``, where ``shed.mean``
    was meant). None when no column is ``HEAD.STAT`` with ``HEAD`` the name or ending with ``.name``."""
    groups: dict[str, list[str]] = {}
    for c in cols:
        head, dot, stat = c.rpartition(".")
        if dot and (head == name or head.endswith("." + name)):
            groups.setdefault(head, []).append(stat)
    if not groups:
        return None
    shown = clipped(name)
    if len(groups) == 1:
        ((head, stats),) = groups.items()
        pick = "mean" if "mean" in stats else stats[0]
        listed = ", ".join(stats[:9]) + (", …" if len(stats) > 9 else "")
        full = f" (`{clipped(head)}.{pick}`)" if head != name else ""
        return f"`{shown}` heads {len(stats)} figures ({listed}); name one, `{shown}.{pick}`{full}"
    heads = list(groups)
    listed = ", ".join(f"`{clipped(h)}.{'mean' if 'mean' in groups[h] else groups[h][0]}`" for h in heads[:4])
    return (f"`{shown}` heads figures of {len(heads)} sections; name one by its path, "
            f"{listed}{', …' if len(heads) > 4 else ''}")


#: Why a median asked for by the other section's word is no figure (:func:`_median_named_otherwise`).
MEDIANS = ("a request metric's median is `median`, as vLLM's benchmark names it, and an observe's is `p50`, "
           "beside its p90, p95 and p99")


def _other_median(name: str) -> str | None:
    """``name`` with its last part, ``p50`` or ``median``, in the other word (``ttft.p50`` -> ``ttft.median``,
    ``p50`` -> ``median``); None for a name whose last part is neither. A bare name is the tail of no prefix,
    so it swaps as a dotted one does (it was left out, and `p50` beside the request metrics named the one
    observe's p50 while `ttft.p50` was ambiguous)."""
    stem, dot, last = name.rpartition(".")
    swap = {"p50": "median", "median": "p50"}.get(last)
    if swap is None:
        return None
    return f"{stem}{dot}{swap}"


def _median_named_otherwise(name: str, cols: list[str]) -> str | None:
    """The one column ``name`` means when its last part is ``p50`` or ``median`` and the figure names its median
    by the other word: the ``requests`` section's metrics (``requests.e2el.median``, vLLM's benchmark) and the
    observes (``observes.ttft.p50``) name it differently, and ``requests.e2el.p50`` was offered
    ``requests.e2el.p95``, the nearest spelling."""
    other = _other_median(name)
    if other is None:
        return None
    if other in cols:
        return other
    tails = [c for c in cols if c.endswith("." + other)]
    return tails[0] if len(tails) == 1 else None


def _text_heading(name: str, cols: list[str]) -> str | None:
    """The figures ``name`` means when its last part is a heading of the text report's tables that is not the
    figure's name (:data:`TEXT_HEADINGS`: ``stages.engine.util`` means ``stages.engine.utilisation``, each
    member's of a family), said as a suggestion, the heading and the figure named; None when it is none, or
    no column is that figure."""
    head, dot, last = name.rpartition(".")
    figure = TEXT_HEADINGS.get(last)
    if figure is None:
        return None
    meant = f"{head}.{figure}" if dot else figure
    found = [c for c in cols if c == meant or c.endswith("." + meant)] or _members(meant, cols)
    if not found:
        return None
    listed = " or ".join(f"`{clipped(c)}`" for c in found[:4]) + (" ..." if len(found) > 4 else "")
    return (f"{listed}? the text report's column `{last}` is the figure `{figure}`; a figure is named by its path "
            "in the JSON report")


def _members(name: str, cols: list[str]) -> list[str]:
    """The columns that are ``name`` (or end with ``.name``) but for a member's index (``pools.kv.used`` names
    ``pools.kv[0].used``, ``pools.kv[1].used``, …), in the table's order; the columns of one path of members
    only (``kv.used`` of ``pools.kv[0].used`` and ``stages.kv[0].used`` is none)."""
    import re

    found: dict[str, list[str]] = {}
    for c in cols:
        bare = re.sub(r"\[\d+\]", "", c)
        if bare != c and (bare == name or bare.endswith("." + name)):
            found.setdefault(bare, []).append(c)
    return next(iter(found.values())) if len(found) == 1 else []


def _names(cols: list[str]) -> list[str]:
    """Every name that means one figure of ``cols``: a column, and each tail of one that no other column ends
    with (the names a near-name suggestion may offer: ``response.mean`` for ``Response.mean``)."""
    count: dict[str, int] = {}
    for c in cols:
        parts = c.split(".")
        for i in range(1, len(parts)):
            tail = ".".join(parts[i:])
            count[tail] = count.get(tail, 0) + 1
    whole = set(cols)  # (a list's `in` made this quadratic: 49 s for a family of 4 500 stages' 67 500 columns)
    return [*cols, *(t for t, n in count.items() if n == 1 and t not in whole)]
