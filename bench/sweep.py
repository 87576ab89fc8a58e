"""A sweep of many short runs: does the local pool keep every core busy, and what does it add over the runs?

    .venv/bin/python bench/sweep.py            # 1 000 runs: 50 points x 20 seeds of bench/mm1.sq
    .venv/bin/python bench/sweep.py --runs 200 # a smoke test

Three timings of the same runs (every figure the wall clock, ``time.perf_counter``):

* ``runs``: each run alone, one after another in this process (``serq_sweep.worker.run_task``, the
  function a worker calls), summed over the runs' own wall clocks: the work itself;
* ``1 worker``: the whole sweep (``serq_sweep.api.run_plan``: the pool's start-up, sending each run,
  collecting and tabulating its figures) on one worker process;
* ``N workers``: the same on every core.

On a machine other work keeps busy the wall clocks do not speak; the CPU seconds beside them do: the
runs' own, the rest of each task (decoding the IR once per point, flattening the report, sending it back)
and the sweep's own process (compiling the points, handing out the runs, tabulating).

It prints the rates, ``speedup = (1 worker) / (N workers)`` (target >= 1.8 on two cores) and ``overhead =
(1 worker) / runs - 1`` (target < 5 %), and the load average: on a shared machine compare the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--arrivals", type=int, default=5000, help="each run's arrivals (M/M/1, lambda 0.1 to 0.9)")
    args = ap.parse_args()
    from serq_sweep import core
    from serq_sweep.engines import cores, engine
    from serq_sweep.worker import run_task

    seeds = 20
    npoints = max(1, args.runs // seeds)
    lambdas = [round(0.1 + 0.8 * i / max(1, npoints - 1), 6) for i in range(npoints)]
    plan = core.plan([str(ROOT / "mm1.sq")], sets={"lam": lambdas}, seeds=list(range(1, seeds + 1)),
                     arrivals=args.arrivals)
    n = len(plan.points) * len(plan.seeds)
    print(f"{n} runs ({len(plan.points)} points x {len(plan.seeds)} seeds) of {args.arrivals} arrivals; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)

    work = work_cpu = 0.0
    for t in plan.tasks():
        r = run_task(*t[1:])
        work += r["wall"]
        work_cpu += r["run_cpu"]
    print(f"  runs alone        {work:8.2f} s  {n / work:8.1f} runs/s   (CPU {work_cpu:.2f} s)", flush=True)
    walls = {}
    for workers in (1, cores()):
        t0, c0 = time.perf_counter(), time.process_time()
        with engine(workers) as eng:
            done, complete = core.execute(plan, eng, progress=False)
        core.rows(plan, done)
        walls[workers] = time.perf_counter() - t0
        main_cpu = time.process_time() - c0
        assert complete and len(done) == n
        task_cpu = sum(r["cpu"] for r in done.values())
        run_cpu = sum(r["run_cpu"] for r in done.values())
        print(f"  {workers} worker(s)      {walls[workers]:8.2f} s  {n / walls[workers]:8.1f} runs/s   (CPU: runs "
              f"{run_cpu:.2f} s, rest of the tasks {task_cpu - run_cpu:.2f} s, the sweep's process "
              f"{main_cpu:.2f} s: {100 * (main_cpu + task_cpu - run_cpu) / run_cpu:.1f} % over the runs)",
              flush=True)
    speedup = walls[1] / walls[cores()]
    overhead = walls[1] / work - 1
    print(f"speedup {speedup:.2f}x on {cores()} cores (target >= 1.8): {'PASS' if speedup >= 1.8 else 'MISS'}")
    print(f"overhead {100 * overhead:.1f} % over the runs (target < 5 %): {'PASS' if overhead < 0.05 else 'MISS'}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
