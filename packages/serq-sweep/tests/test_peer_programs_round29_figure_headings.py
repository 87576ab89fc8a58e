"""A figure named as the text report heads its column. ``serq run``'s stage, engine and pool tables head some
columns otherwise than the figure they show (``util`` is ``utilisation``, the engine table's ``busy`` too,
``req/s`` ``request_throughput``, the pool table's ``evicted`` ``evicted_entries``, …), and a figure is named by
its JSON path, so ``--show stages.engine[1].util`` is no figure; it was offered the nearest spelling of another
(``wait``; ``pools.kv[0].evicted`` was offered ``evicted_units``, 24 where the column said 2; ``busy`` was offered
``batch``), and is now offered the figure the column shows (serq_sweep.figures.TEXT_HEADINGS). The map is held
to the text report itself: every heading of its three tables is a figure's name or in the map, and the number
under it is that figure's."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_report import render
from serq_report.text import format_number
from serq_sweep.figures import TEXT_HEADINGS, UnknownFigure, flatten, resolve

# two engines, a KV pool of each; kv[0] evicts whole entries of several blocks
PROGRAM = """
pool reqs[2] { cap 8; admit via engine; }
pool kv[2] { cap 24; block 4; evict lru; preempt lifo; }
stage engine[2] : step { budget 100; cost 1; memory kv; }
workload { arrive renewal(~det(1)); }
session {
  set p = serial == 1 ? 8 : 16;
  hold reqs[0] (1), kv[0] (p) reuse (0) {
    run engine[0] prefill (p) growing kv[0];
    run engine[0] decode (2) growing kv[0];
  } cache (p);
}
run { horizon 100; arrivals 4; }
"""


def _report():
    return serq_sim.run(serq_frontend.compile(source=PROGRAM.lstrip()))


def _tables(text):
    """The text report's tables whose first heading is ``stage``, ``engine`` or ``pool``: per table, its
    headings and rows (``token util`` is the one heading of two words)."""
    out, lines = {}, text.splitlines()
    for i, line in enumerate(lines):
        words = line.replace("token util", "token_util").split()
        if words and words[0] in ("stage", "engine", "pool") and len(words) > 3:
            heads = [w.replace("token_util", "token util") for w in words]
            rows = []
            for row in lines[i + 1:]:
                if not row.strip():
                    break
                rows.append(row.split())
            out[heads[0]] = (heads, rows)
    return out


def test_every_heading_of_the_text_report_is_a_figure_or_mapped_to_the_one_it_shows():
    report = _report()
    figures = flatten(report)
    tables = _tables(render(report, "text"))
    assert set(tables) == {"stage", "engine", "pool"}
    assert 0 < figures["pools.kv[0].evicted_entries"] < figures["pools.kv[0].evicted_units"]
    mapped = set()
    for kind, (heads, rows) in tables.items():
        section = "pools" if kind == "pool" else "stages"
        assert rows
        for row in rows:
            assert len(row) == len(heads), (heads, row)
            for head, cell in zip(heads[1:], row[1:]):
                figure = TEXT_HEADINGS.get(head, head)
                if head in TEXT_HEADINGS:
                    mapped.add(head)
                value = figures[f"{section}.{row[0]}.{figure}"]  # a KeyError: a heading that is no figure
                shown = format_number(value) if isinstance(value, float) else str(value)
                assert cell == shown, (kind, row[0], head, cell, value)
    assert mapped == set(TEXT_HEADINGS)  # every heading the map holds is one of the report's


@pytest.mark.parametrize("name, meant", [
    ("stages.engine[1].util", "`stages.engine[1].utilisation`"),
    ("stages.engine[0].busy", "`stages.engine[0].utilisation`"),
    ("pools.kv[0].evicted", "`pools.kv[0].evicted_entries`"),
    ("engine[0].req/s", "`stages.engine[0].request_throughput`"),
    ("engine[1].tokens/it", "`stages.engine[1].tokens`"),
    ("engine[0].prefill-only", "`stages.engine[0].prefill_only`"),
    ("engine[0].token util", "`stages.engine[0].token_utilisation`"),
    ("stages.engine.util", "`stages.engine[0].utilisation` or `stages.engine[1].utilisation`"),
    ("pools.kv[1].evicted:mean", "`pools.kv[1].evicted_entries`"),
])
def test_a_heading_is_offered_the_figure_its_column_shows(name, meant):
    cols = list(flatten(_report()))
    with pytest.raises(UnknownFigure) as info:
        resolve(name, cols)
    head = name.rpartition(".")[2].removesuffix(":mean")
    assert str(info.value) == (f"error: no figure {name!r} in the results (did you mean {meant}? the text report's column "
                               f"`{head}` is the figure `{TEXT_HEADINGS[head]}`; a figure is named by its path in "
                               "the JSON report)")


def test_a_name_that_is_no_heading_is_offered_as_before():
    cols = list(flatten(_report()))
    with pytest.raises(UnknownFigure, match=r"did you mean `pools\.kv\[0\]\.evicted_units`\?\)$"):
        resolve("pools.kv[0].evicted_unit", cols)
    assert resolve("stages.engine[1].utilisation", cols) == "stages.engine[1].utilisation"
