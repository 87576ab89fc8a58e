"""Known defects, round 35, in serq-report.

5. A run the memory guard stopped (serq_sim.memguard: half the room below ``ulimit -v`` kept for its report)
   said "out of memory" in place of its partial report when it wrote records or a dump: the CSV writer
   formatted 2**18 rows at a time, their cells Python strings, 135 MiB for four columns and ten times that
   for a table of 43, more than the room kept. It formats 2**14 cells at a time (serq_report.csv.CHUNK), as
   many rows as hold them: what the writing holds beyond the columns no longer grows with the table.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from serq_report.csv import write_table


def _peak(tmp_path, columns: int, rows: int) -> float:
    rng = np.random.default_rng(1)
    cols = {f"c{i}": rng.random(rows) for i in range(columns)}  # distinct floats: a string a cell
    tracemalloc.start()
    try:
        write_table(tmp_path / "t.csv", cols)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("columns, rows", [(1, 200_000), (8, 25_000), (40, 5_000)])
def test_writing_a_table_holds_a_bounded_chunk_of_cells(tmp_path, columns, rows):
    # 200 000 cells each, every row in one chunk before (some 23 MiB held at once); by 16 384 cells, some
    # 3 MiB whatever the shape
    assert _peak(tmp_path, columns, rows) < 6
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert len(lines) == rows + 1 and lines[0] == ",".join(f"c{i}" for i in range(columns))


def test_the_rows_are_written_in_order_across_chunks(tmp_path, monkeypatch):
    import serq_report.csv as csv_module

    monkeypatch.setattr(csv_module, "CHUNK", 6)  # 3 rows of two columns a chunk, the last chunk short
    write_table(tmp_path / "t.csv", {"a": np.arange(7), "b": np.arange(7) / 2})
    assert (tmp_path / "t.csv").read_text().splitlines() == [
        "a,b", "0,0.0", "1,0.5", "2,1.0", "3,1.5", "4,2.0", "5,2.5", "6,3.0"]
    monkeypatch.setattr(csv_module, "CHUNK", 1)  # fewer cells than columns: a row a chunk
    write_table(tmp_path / "t.csv", {"a": np.arange(2), "b": np.arange(2)})
    assert (tmp_path / "t.csv").read_text() == "a,b\n0,0\n1,1\n"
