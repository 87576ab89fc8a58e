"""Reading a sweep's CSV table back (a resume, ``serq plot``): serq_sweep.core.read_csv_table against the plain
csv module reading the same file into rows of text (the least any reader of it does), and against reading it a
row and a cell at a time (``_parse_csv`` of each cell: how it was read before).

    .venv/bin/python bench/read_table.py                 # 100 000 rows, as a sweep of bench/mm1.sq writes them
    .venv/bin/python bench/read_table.py --rows 20000    # a smoke test

The table is written first: a real sweep of ``--points`` points x ``--seeds`` seeds of bench/mm1.sq (short
runs), its rows copied (point and seed renumbered) up to ``--rows``; a vLLM program's table has more columns
of the same kinds (integers, floats by ``repr``, ``nan``, flags, empty cells). Each side is timed in its own
turn, alternated ``--pairs`` times, by CPU seconds (``time.process_time``); it prints the median paired ratios
``serq/cells`` and ``serq/csv`` (and rows a CPU second). A ratio, not seconds: the machine's load moves seconds.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def table(folder: Path, rows: int, points: int, seeds: int) -> Path:
    small = folder / "small.csv"
    subprocess.run([sys.executable, "-m", "serq", "sweep", str(ROOT / "mm1.sq"), "--set",
                    "lam=" + ",".join(str(round(0.1 + 0.8 * i / max(points - 1, 1), 6)) for i in range(points)),
                    "--seeds", f"1..{seeds}", "--arrivals", "200", "--no-progress", "-o", str(small)], check=True)
    head, *body = small.read_text().splitlines()
    big = folder / "big.csv"
    with big.open("w") as f:
        f.write(head + "\n")
        for i in range(rows):
            r = body[i % len(body)].split(",", 1)
            f.write(f"{i},{r[1]}\n")
    return big


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--points", type=int, default=10)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args()
    from serq_sweep.core import TEXT, _parse_csv, read_csv_table

    def serq(path: Path) -> int:
        return len(read_csv_table(str(path))[1])

    def cells(path: Path) -> int:  # the reading before: a row and a cell at a time
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader)
            return len([{k: v if k in TEXT else _parse_csv(v) for k, v in zip(header, r)} for r in reader])

    def plain(path: Path) -> int:
        with path.open(newline="", encoding="utf-8") as f:
            return sum(1 for _ in csv.reader(f)) - 1

    with tempfile.TemporaryDirectory() as d:
        path = table(Path(d), args.rows, args.points, args.seeds)
        print(f"{path.stat().st_size / 1e6:.1f} MB, {args.rows} rows")
        took: dict[str, list[float]] = {"serq": [], "cells": [], "csv": []}
        for _ in range(args.pairs):
            for name, f in (("serq", serq), ("cells", cells), ("csv", plain)):
                t = time.process_time()
                f(path)
                took[name].append(time.process_time() - t)
        for other in ("cells", "csv"):
            ratios = [a / b for a, b in zip(took["serq"], took[other])]
            print(f"serq/{other} median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})")
        print(f"read_csv_table: {args.rows / statistics.median(took['serq']):,.0f} rows a CPU second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
