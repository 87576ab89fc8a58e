"""serQ's benchmarks: each program is run as a whole process, timed by wall clock, best of three.

    python bench/run.py            # the full set (a few minutes on two cores)
    python bench/run.py --quick    # smaller runs, for a smoke test (the targets are for the full set)

Prints a table of seconds and ratios and a PASS/MISS line per target:

* serq/simpy <= 0.5 and serq/heapq <= 3: an M/M/1 at rho 0.8 (bench/mm1.sq against bench/mm1_simpy.py
  and bench/mm1_heapq.py, the same number of customers);
* serq cb / plain cb <= 3: continuous batching (bench/cb.sq against bench/plain_cb.py, 2 000 requests;
  best of three, so serq's later runs find the program in the compile cache, as a user's repeated runs
  do; the same with SERQ_COMPILE_CACHE=0 is printed too, without a target);
* serq engine iterations per second >= 30 000 at a batch of about 16 (bench/cb.sq, a longer run:
  iterations from the JSON report over the process's wall clock, start-up included);
* peak RSS <= 500 MB for a run recording 10 million observe samples (bench/observe10m.sq), measured
  with wait4 on the child.

examples/multi-turn/vllm.sq (its own horizon) and examples/replay/vllm_replay.sq are timed too when they
exist. A command that fails is reported and its targets MISS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
PY = sys.executable


def serq_exe() -> list[str]:
    beside = Path(PY).parent / "serq"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("serq")
    return [found] if found else [PY, "-m", "serq"]


SERQ = serq_exe()

#: The children's environment. Python caches compiled bytecode by default; an environment that sets
#: PYTHONDONTWRITEBYTECODE makes every process compile every module it imports from source again (which
#: more than doubled serq's start-up where this was written), so it is unset unless --keep-env says not to.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


class Failed(Exception):
    def __init__(self, cmd: list[str], code: int, output: str):
        super().__init__(f"{' '.join(cmd)} exited {code}: {output.strip()[-2000:]}")
        self.code = code
        lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
        self.last = lines[-1] if lines else ""

    def brief(self) -> str:
        """The exit status and the last line the command wrote, for the table."""
        return f"exit {self.code}: {self.last}"[:160]


def run_once(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str, int]:
    """Wall-clock seconds, stdout and peak RSS (KiB on Linux) of one run of ``cmd``.

    The child is reaped with os.wait4, which gives that child's own resource usage (RUSAGE_CHILDREN
    would give the largest of every child so far)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, env=CHILD_ENV | (env or {}))
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise Failed(cmd, proc.returncode, stderr or stdout)
    return elapsed, stdout, usage.ru_maxrss


def best_of(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> tuple[float, str]:
    times, out = [], ""
    for _ in range(repeat):
        t, out, _ = run_once(cmd, env)
        times.append(t)
    return min(times), out


def report_json(out: str) -> dict:
    data = json.loads(out)
    return data.get("result", data) if isinstance(data, dict) else data


def serq_run(program: str, *extra: str) -> list[str]:
    return [*SERQ, "run", program, *extra, "--no-progress", "--json"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller runs (a smoke test of the benchmark)")
    ap.add_argument("--repeat", type=int, default=None, help="runs per timing (default 3, quick 1)")
    ap.add_argument("--keep-env", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE for the children if it is set")
    args = ap.parse_args()
    if args.keep_env:
        CHILD_ENV.clear()
        CHILD_ENV.update(os.environ)
    quick = args.quick
    repeat = args.repeat or (1 if quick else 3)
    n_mm1 = 50_000 if quick else 200_000
    n_cb = 500 if quick else 2_000
    n_it = 2_000 if quick else 20_000
    n_sessions = 100_000 if quick else 1_000_000  # ten observe samples each

    rows: list[tuple[str, str, str]] = []  # (what, figure, note)
    targets: list[tuple[str, bool, str]] = []  # (target, met, figure)
    fig: dict[str, float] = {}

    def timed(key: str, label: str, cmd: list[str], env: dict[str, str] | None = None) -> str | None:
        try:
            t, out = best_of(cmd, repeat, env)
        except Failed as e:
            rows.append((label, "FAILED", e.brief()))
            print(f"  {label}: FAILED\n    {e}", file=sys.stderr)
            return None
        fig[key] = t
        rows.append((label, f"{t:.3f} s", f"best of {repeat}"))
        print(f"  {label}: {t:.3f} s", file=sys.stderr)
        return out

    print(f"serQ benchmarks ({'quick' if quick else 'full'}; {os.cpu_count()} CPUs; best of {repeat}; "
          f"bytecode cache {'off' if 'PYTHONDONTWRITEBYTECODE' in CHILD_ENV else 'on'})", file=sys.stderr)

    # M/M/1 at rho 0.8, the same customers in each.
    timed("simpy", f"M/M/1 SimPy, {n_mm1} customers", [PY, str(BENCH / "mm1_simpy.py"), str(n_mm1)])
    timed("heapq", f"M/M/1 heapq, {n_mm1} customers", [PY, str(BENCH / "mm1_heapq.py"), str(n_mm1)])
    out = timed("serq_mm1", f"M/M/1 serq, {n_mm1} customers",
                serq_run("bench/mm1.sq", "--arrivals", str(n_mm1), "--horizon", "1e9"))
    if out is not None:
        try:
            r = report_json(out)
            rows.append(("  serq M/M/1 mean response (theory 5)", f"{r['observes']['response']['mean']:.3f}", ""))
        except (ValueError, KeyError, TypeError) as e:
            rows.append(("  serq M/M/1 JSON", "unreadable", repr(e)[:100]))

    # Continuous batching.
    out = timed("plain_cb", f"continuous batching, plain Python, {n_cb} requests",
                [PY, str(BENCH / "plain_cb.py"), str(n_cb)])
    if out is not None:
        rows.append(("  plain cb", out.strip(), ""))
    out = timed("serq_cb", f"continuous batching, serq, {n_cb} requests",
                serq_run("bench/cb.sq", "--arrivals", str(n_cb), "--horizon", "1e9"))
    if out is not None:
        try:
            r = report_json(out)
            eng = [s for s in r["stages"] if s["name"] == "engine"][0]
            rows.append(("  serq cb", f"iterations {eng['iterations']} mean batch {eng['present']:.2f} "
                         f"mean ttft {r['observes']['ttft']['mean']:.4f} end {r['end']:.1f}", ""))
        except (ValueError, KeyError, TypeError, IndexError) as e:
            rows.append(("  serq cb JSON", "unreadable", repr(e)[:100]))
    # The same with the compile cache off: what a first run of a changed program costs (no target).
    timed("serq_cb_nocache", f"continuous batching, serq, {n_cb} requests, SERQ_COMPILE_CACHE=0",
          serq_run("bench/cb.sq", "--arrivals", str(n_cb), "--horizon", "1e9"), env={"SERQ_COMPILE_CACHE": "0"})
    if "serq_cb_nocache" in fig and "plain_cb" in fig:
        rows.append(("  serq cb / plain cb, compile cache off", f"{fig['serq_cb_nocache'] / fig['plain_cb']:.2f}",
                     "informative, no target"))

    # Engine iterations per second: a longer run of the same program.
    try:
        t, out = best_of(serq_run("bench/cb.sq", "--arrivals", str(n_it), "--horizon", "1e9"), repeat)
        r = report_json(out)
        eng = [s for s in r["stages"] if s["name"] == "engine"][0]
        fig["iter_per_s"] = eng["iterations"] / t
        rows.append((f"serq cb, {n_it} requests", f"{t:.3f} s",
                     f"{eng['iterations']} iterations, mean batch {eng['present']:.2f}"))
        rows.append(("  engine iterations per second", f"{fig['iter_per_s']:.0f}", "start-up included"))
    except (Failed, ValueError, KeyError, TypeError, IndexError) as e:
        rows.append((f"serq cb, {n_it} requests", "FAILED", e.brief() if isinstance(e, Failed) else repr(e)[:160]))

    # Start-up: the command with a one-customer run, to read the figures above against.
    timed("startup", "serq run bench/mm1.sq, 1 customer (start-up)",
          serq_run("bench/mm1.sq", "--arrivals", "1", "--horizon", "1e9"))
    timed("py_startup", "python -c pass (interpreter start-up)", [PY, "-c", "pass"])
    if "startup" in fig and "serq_mm1" in fig and "heapq" in fig and "py_startup" in fig:
        net = (fig["serq_mm1"] - fig["startup"]) / max(fig["heapq"] - fig["py_startup"], 1e-9)
        rows.append(("  serq/heapq (M/M/1) net of start-up", f"{net:.2f}", "informative, no target"))

    # The vLLM examples, when present.
    for key, example in (("vllm", "examples/multi-turn/vllm.sq"), ("vllm_replay", "examples/replay/vllm_replay.sq")):
        if (ROOT / example).exists():
            timed(key, f"serq run {example}", [*SERQ, "run", example, "--no-progress"])
        else:
            rows.append((f"serq run {example}", "absent", ""))

    # Memory: ten observe samples per session.
    samples = 10 * n_sessions
    try:
        t, out, rss_kib = run_once(serq_run("bench/observe10m.sq", "--arrivals", str(n_sessions), "--horizon", "1e9"))
        r = report_json(out)
        count = r["observes"]["x"]["count"]
        fig["rss_mb"] = rss_kib * 1024 / 1e6
        rows.append((f"{samples} observe samples", f"{t:.3f} s", f"{count} recorded"))
        rows.append(("  peak RSS", f"{fig['rss_mb']:.0f} MB", "wait4 ru_maxrss"))
    except (Failed, ValueError, KeyError, TypeError) as e:
        rows.append((f"{samples} observe samples", "FAILED", e.brief() if isinstance(e, Failed) else repr(e)[:160]))

    def ratio(a: str, b: str) -> float | None:
        return fig[a] / fig[b] if a in fig and b in fig and fig[b] > 0 else None

    for label, a, b, limit in (("serq/simpy (M/M/1)", "serq_mm1", "simpy", 0.5),
                               ("serq/heapq (M/M/1)", "serq_mm1", "heapq", 3.0),
                               ("serq cb / plain cb", "serq_cb", "plain_cb", 3.0)):
        x = ratio(a, b)
        rows.append((label, "n/a" if x is None else f"{x:.2f}", f"target <= {limit}"))
        targets.append((f"{label} <= {limit}", x is not None and x <= limit, "n/a" if x is None else f"{x:.2f}"))
    x = fig.get("iter_per_s")
    targets.append(("engine iterations/s >= 30000", x is not None and x >= 30_000, "n/a" if x is None else f"{x:.0f}"))
    x = fig.get("rss_mb")
    targets.append((f"peak RSS at {samples} samples <= 500 MB", x is not None and x <= 500,
                    "n/a" if x is None else f"{x:.0f} MB"))

    width = max(len(r[0]) for r in rows)
    print(f"{'quick' if quick else 'full'} run, {os.cpu_count()} CPUs, best of {repeat}, bytecode cache "
          f"{'off' if 'PYTHONDONTWRITEBYTECODE' in CHILD_ENV else 'on'}, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    for what, figure, note in rows:
        print(f"{what:<{width}}  {figure:>12}  {note}")
    print()
    for name, met, figure in targets:
        print(f"{'PASS' if met else 'MISS'}  {name}  ({figure})")
    if quick:
        print("\n(quick: the targets are set for the full runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
