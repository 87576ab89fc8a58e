"""serQ's benchmarks: each comparison runs its two sides as whole processes, alternated, and reads the
ratio pair by pair.

    python bench/run.py                # the full set, 5 pairs per comparison
    python bench/run.py --quick        # smaller runs, 1 pair each: a smoke test (about 2 minutes)
    python bench/run.py --pairs 9      # more pairs
    python bench/run.py --only vllm    # the rows whose key contains "vllm"

Method. A comparison has a serQ side A and a peer side B doing the same work. They run A B A B ...
(``--pairs`` pairs), one process at a time, each a fresh interpreter (start-up, imports, compiling the
program and writing the report included). The figure of a run is its CPU time, user + system from
``os.wait4`` (the child's own usage; on a shared machine CPU time moves far less than the wall clock,
which is printed too). The ratio of a pair is A's CPU time over B's, taken within the pair, so both
sides saw the same moment's load; a row prints the median ratio over the pairs and its spread (min-max),
and a target is PASS or MISS on the median paired ratio. Best-of-three taken separately for each side is
not used: it pairs A's luckiest run with B's luckiest one, minutes apart (it printed 1.19 for a ratio
that paired runs put at 1.79).

Every row says what it measures (``what``); ``--list`` prints them without running anything. The load
average is printed before and after. A command that fails is reported and its targets MISS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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


@dataclass
class Run:
    cpu: float  # user + system seconds of the child
    wall: float
    rss_kib: int
    out: str


def run_once(cmd: list[str], env: dict[str, str] | None = None) -> Run:
    """CPU and wall-clock seconds, peak RSS (KiB on Linux) and stdout of one run of ``cmd``.

    The child is reaped with os.wait4, which gives that child's own resource usage (RUSAGE_CHILDREN
    would sum every child so far, and give the largest RSS of any)."""
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
    return Run(usage.ru_utime + usage.ru_stime, elapsed, usage.ru_maxrss, stdout)


def report_json(out: str) -> dict:
    data = json.loads(out)
    return data.get("result", data) if isinstance(data, dict) else data


def serq_run(program: str, *extra: str) -> list[str]:
    return [*SERQ, "run", program, *extra, "--no-progress", "--json"]


def observe_means(out: str) -> str:
    r = report_json(out)
    return " ".join(f"{k} {v['mean']:.4f}" for k, v in r["observes"].items() if v.get("mean") is not None)


def first_line(out: str) -> str:
    return out.strip().splitlines()[0] if out.strip() else ""


@dataclass
class Side:
    label: str  # what runs, as a command a reader can repeat
    cmd: list[str]
    summary: Callable[[str], str] = first_line  # what the run printed, for the table
    env: dict[str, str] | None = None


@dataclass
class Comparison:
    key: str
    what: str  # what the row measures, in a sentence
    a: Side  # serQ
    b: Side  # the peer
    target: float | None = None  # A/B at most this (None: printed, no target)
    target_text: str = ""
    per: tuple[str, float] | None = None  # ("requests", n): print n per CPU second of each side
    floor: tuple[float, str] | None = None  # (n per CPU second at least, why) for side A


@dataclass
class Outcome:
    comp: Comparison
    pairs: list[tuple[Run, Run]] = field(default_factory=list)
    error: str | None = None

    def ratios(self) -> list[float]:
        return [a.cpu / b.cpu for a, b in self.pairs if b.cpu > 0]


def run_pairs(comp: Comparison, n: int) -> Outcome:
    res = Outcome(comp)
    for i in range(n):
        try:
            ra = run_once(comp.a.cmd, comp.a.env)
            rb = run_once(comp.b.cmd, comp.b.env)
        except Failed as e:
            res.error = e.brief()
            print(f"  {comp.key}: FAILED\n    {e}", file=sys.stderr)
            return res
        res.pairs.append((ra, rb))
        print(f"  {comp.key} pair {i + 1}/{n}: A {ra.cpu:.3f} s B {rb.cpu:.3f} s ratio {ra.cpu / rb.cpu:.3f}",
              file=sys.stderr)
    return res


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# ---------------------------------------------------------------------------------------------------------
# The comparisons


def comparisons(quick: bool) -> list[Comparison]:
    n_mm1 = 50_000 if quick else 200_000
    n_prio = 20_000 if quick else 80_000
    out: list[Comparison] = []
    simpy = [PY, str(BENCH / "mm1_simpy.py")]
    out.append(Comparison(
        "mm1_pool",
        f"M/M/1 at rho 0.8, {n_mm1} customers, on the general engine: serQ's one-slot pool in front of a "
        "delay stage (bench/mm1_pool.sq, the way a serving program writes a server) against SimPy's "
        "Resource(capacity=1) (bench/mm1_simpy.py)",
        Side(f"serq run bench/mm1_pool.sq --arrivals {n_mm1}",
             serq_run("bench/mm1_pool.sq", "--arrivals", str(n_mm1), "--horizon", "1e9"), observe_means),
        Side(f"python bench/mm1_simpy.py {n_mm1} 1 1", [*simpy, str(n_mm1), "1", "1"]),
        0.5, "serq/simpy <= 0.5 (issue #11)", per=("customers", n_mm1)))
    out.append(Comparison(
        "mm4_pool",
        f"M/M/4 at rho 0.8, {n_mm1} customers, on the general engine: a pool of 4 in front of a delay stage "
        "(bench/mm4_pool.sq) against SimPy's Resource(capacity=4) (bench/mm1_simpy.py N 1 4)",
        Side(f"serq run bench/mm4_pool.sq --arrivals {n_mm1}",
             serq_run("bench/mm4_pool.sq", "--arrivals", str(n_mm1), "--horizon", "1e9"), observe_means),
        Side(f"python bench/mm1_simpy.py {n_mm1} 1 4", [*simpy, str(n_mm1), "1", "4"]),
        0.5, "serq/simpy <= 0.5 (issue #11)", per=("customers", n_mm1)))
    out.append(Comparison(
        "prio_pool",
        f"non-preemptive priority M/M/1 at rho 0.8, two classes, {n_prio} customers: a pool with "
        "queue by (prio, serial) (bench/prio_pool.sq) against SimPy's PriorityResource (bench/prio_simpy.py)",
        Side(f"serq run bench/prio_pool.sq --arrivals {n_prio}",
             serq_run("bench/prio_pool.sq", "--arrivals", str(n_prio), "--horizon", "1e9"), observe_means),
        Side(f"python bench/prio_simpy.py {n_prio}", [PY, str(BENCH / "prio_simpy.py"), str(n_prio)]),
        None, "no target of its own (the queue by target is on the vLLM rows)", per=("customers", n_prio)))
    out.append(Comparison(
        "mm1_fast",
        f"M/M/1 at rho 0.8, {n_mm1} customers, on the FAST TIER: bench/mm1.sq has no pool and no step stage, "
        "so it runs as one generated loop; no serving program is eligible for it. Against SimPy's "
        "Resource(capacity=1)",
        Side(f"serq run bench/mm1.sq --arrivals {n_mm1}",
             serq_run("bench/mm1.sq", "--arrivals", str(n_mm1), "--horizon", "1e9"), observe_means),
        Side(f"python bench/mm1_simpy.py {n_mm1} 1 1", [*simpy, str(n_mm1), "1", "1"]),
        0.5, "serq/simpy <= 0.5 (fast tier only)", per=("customers", n_mm1)))
    out.append(Comparison(
        "mm1_fast_heapq",
        f"the same fast-tier M/M/1 against a hand-written heapq event loop (bench/mm1_heapq.py), "
        f"{n_mm1} customers",
        Side(f"serq run bench/mm1.sq --arrivals {n_mm1}",
             serq_run("bench/mm1.sq", "--arrivals", str(n_mm1), "--horizon", "1e9"), observe_means),
        Side(f"python bench/mm1_heapq.py {n_mm1}", [PY, str(BENCH / "mm1_heapq.py"), str(n_mm1)]),
        3.0, "serq/heapq <= 3 (fast tier only)"))
    return out


# ---------------------------------------------------------------------------------------------------------
# Single measurements (no peer): memory


@dataclass
class Single:
    key: str
    what: str
    figure: str = ""
    note: str = ""
    target: str = ""
    met: bool | None = None


def memory_rows(quick: bool) -> list[Single]:
    rows = []
    n_sessions = 100_000 if quick else 1_000_000  # ten observe samples each
    samples = 10 * n_sessions
    s = Single("observe_rss", f"peak RSS of `serq run bench/observe10m.sq --arrivals {n_sessions}` "
               f"({samples} observe samples kept for the report), os.wait4's ru_maxrss",
               target=f"<= 500 MB at {10 * 1_000_000} samples")
    try:
        r = run_once(serq_run("bench/observe10m.sq", "--arrivals", str(n_sessions), "--horizon", "1e9"))
        count = report_json(r.out)["observes"]["x"]["count"]
        mb = r.rss_kib * 1024 / 1e6
        s.figure, s.note = f"{mb:.0f} MB", f"{count} samples recorded, {r.cpu:.2f} s CPU"
        s.met = mb <= 500 if not quick else None
    except (Failed, ValueError, KeyError, TypeError) as e:
        s.figure, s.note, s.met = "FAILED", e.brief() if isinstance(e, Failed) else repr(e)[:160], False
    rows.append(s)
    return rows


# ---------------------------------------------------------------------------------------------------------


def print_comparison(o: Outcome) -> list[tuple[str, bool, str]]:
    c = o.comp
    print(f"[{c.key}] {c.what}")
    print(f"    A = {c.a.label}")
    print(f"    B = {c.b.label}")
    targets = []
    if o.error is not None or not o.pairs:
        print(f"    FAILED: {o.error}")
        if c.target is not None:
            targets.append((f"{c.key}: {c.target_text}", False, "failed"))
        return targets
    ra = o.ratios()
    a_cpu = med([a.cpu for a, _ in o.pairs])
    b_cpu = med([b.cpu for _, b in o.pairs])
    a_wall = med([a.wall for a, _ in o.pairs])
    b_wall = med([b.wall for _, b in o.pairs])
    print(f"    CPU s, median of {len(o.pairs)}: A {a_cpu:.3f}  B {b_cpu:.3f}   (wall {a_wall:.3f} / {b_wall:.3f})")
    if c.per is not None:
        what, n = c.per
        print(f"    {what} per CPU second: A {n / a_cpu:,.0f}  B {n / b_cpu:,.0f}")
    print(f"    A/B paired ratio: median {med(ra):.3f}  (min {min(ra):.3f}, max {max(ra):.3f}, "
          f"{len(ra)} pair{'s' if len(ra) > 1 else ''})")
    print(f"    A printed: {c.a.summary(o.pairs[-1][0].out)}")
    print(f"    B printed: {c.b.summary(o.pairs[-1][1].out)}")
    if c.target is not None:
        met = med(ra) <= c.target
        print(f"    target {c.target_text}: {'PASS' if met else 'MISS'}")
        targets.append((f"{c.key}: {c.target_text}", met, f"{med(ra):.3f}"))
    if c.floor is not None:
        rate, why = c.floor
        what, n = c.per
        x = n / a_cpu
        met = x >= rate
        print(f"    target {what} per CPU second >= {rate:,.0f} ({why}): {'PASS' if met else 'MISS'}")
        targets.append((f"{c.key}: serQ {what} per CPU second >= {rate:,.0f}", met, f"{x:,.0f}"))
    return targets


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller runs, one pair (a smoke test)")
    ap.add_argument("--pairs", type=int, default=None, help="A B pairs per comparison (default 5, quick 1)")
    ap.add_argument("--only", default=None, help="run only the rows whose key contains this")
    ap.add_argument("--list", action="store_true", help="print the rows and what each measures, run nothing")
    ap.add_argument("--keep-env", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE for the children if it is set")
    args = ap.parse_args()
    if args.keep_env:
        CHILD_ENV.clear()
        CHILD_ENV.update(os.environ)
    quick = args.quick
    pairs = args.pairs or (1 if quick else 5)
    comps = [c for c in comparisons(quick) if args.only is None or args.only in c.key]
    if args.list:
        for c in comps:
            print(f"[{c.key}] {c.what}\n    A = {c.a.label}\n    B = {c.b.label}")
        return 0
    bytecode = "off" if "PYTHONDONTWRITEBYTECODE" in CHILD_ENV else "on"
    start_load = loadavg()
    print(f"serQ benchmarks ({'quick' if quick else 'full'}; {os.cpu_count()} CPUs; {pairs} pairs; "
          f"bytecode cache {bytecode}; load average {start_load})", file=sys.stderr)
    outcomes = [run_pairs(c, pairs) for c in comps]
    singles: list[Single] = []
    if args.only is None or "rss" in args.only:
        singles += memory_rows(quick)

    print(f"{'quick' if quick else 'full'} run, {os.cpu_count()} CPUs, {pairs} A B pair{'s' if pairs > 1 else ''} "
          f"per comparison, CPU time of whole processes, bytecode cache {bytecode}")
    print(f"load average at the start {start_load}, at the end {loadavg()}")
    print()
    targets: list[tuple[str, bool, str]] = []
    for o in outcomes:
        targets += print_comparison(o)
        print()
    for s in singles:
        print(f"[{s.key}] {s.what}")
        print(f"    {s.figure}  {s.note}")
        if s.target:
            print(f"    target {s.target}: {'PASS' if s.met else 'MISS' if s.met is False else 'n/a (quick)'}")
            if s.met is not None:
                targets.append((f"{s.key}: {s.target}", s.met, s.figure))
        print()
    for name, met, figure in targets:
        print(f"{'PASS' if met else 'MISS'}  {name}  ({figure})")
    if quick:
        print("\n(quick: smaller runs and one pair; the targets are set for the full runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
