"""serQ's benchmarks: each comparison runs its two sides as whole processes, alternated, and reads the
ratio pair by pair.

    python bench/run.py                # the full set, 5 pairs per comparison
    python bench/run.py --quick        # smaller runs, 1 pair each: a smoke test (under a minute of CPU)
    python bench/run.py --pairs 9      # more pairs
    python bench/run.py --only vllm    # the rows whose key contains "vllm"

Method. A comparison has a serQ side A and a peer side B doing the same work. They run A B A B ...
(``--pairs`` pairs), one process at a time, each a fresh interpreter (start-up, imports, compiling the
program and writing the report included). The figure of a run is its CPU time, user + system from
``os.wait4`` (the child's own usage; on a shared machine CPU time moves far less than the wall clock,
which is printed too). The ratio of a pair is A's CPU time over B's, taken within the pair, so both
sides saw the same moment's load; a row prints the median ratio over the pairs and its spread (min-max),
and a target is PASS or MISS on the median paired ratio. Best-of-three taken separately for each side is
not used: it pairs A's luckiest run with B's luckiest one, minutes apart (issue #11 reports it printing
1.19 for a ratio that paired runs put at 1.79).

Every row says what it measures (``what``); ``--list`` prints them without running anything. The load
average is printed before and after. A command that fails is reported and its targets MISS.
"""

from __future__ import annotations

import argparse
import atexit
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
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
    cmd: list[str] | None  # None: it cannot run here (the label says why)
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
    #: (stdout A, stdout B) -> None when the two sides agree, else what differs (the row then fails)
    agree: Callable[[str, str], str | None] | None = None
    #: when per's count is 0: the counts read from the outputs of A and of B
    counts: tuple[Callable[[str], float], Callable[[str], float]] | None = None
    #: the ratio of a pair is of CPU seconds per counted item (``counts``), not of CPU seconds: for two sides
    #: that draw their own workloads, whose counts differ
    per_item: bool = False
    #: each side runs once before the pairs, unmeasured (a side set up for this run has no compiled bytecode
    #: or compiled program cached yet; a user's second run has them)
    warm: bool = False


@dataclass
class Outcome:
    comp: Comparison
    pairs: list[tuple[Run, Run]] = field(default_factory=list)
    error: str | None = None

    def ratios(self) -> list[float]:
        c = self.comp
        if c.per_item and c.counts is not None:
            ca, cb = c.counts
            return [(a.cpu / ca(a.out)) / (b.cpu / cb(b.out)) for a, b in self.pairs if b.cpu > 0]
        return [a.cpu / b.cpu for a, b in self.pairs if b.cpu > 0]


def run_pairs(comp: Comparison, n: int) -> Outcome:
    res = Outcome(comp)
    if comp.a.cmd is None or comp.b.cmd is None:
        res.error = f"cannot run: {comp.b.label if comp.b.cmd is None else comp.a.label}"
        print(f"  {comp.key}: {res.error}", file=sys.stderr)
        return res
    if comp.warm:
        try:
            run_once(comp.a.cmd, comp.a.env)
            run_once(comp.b.cmd, comp.b.env)
        except Failed as e:
            res.error = e.brief()
            print(f"  {comp.key}: FAILED\n    {e}", file=sys.stderr)
            return res
    for i in range(n):
        try:
            ra = run_once(comp.a.cmd, comp.a.env)
            rb = run_once(comp.b.cmd, comp.b.env)
        except Failed as e:
            res.error = e.brief()
            print(f"  {comp.key}: FAILED\n    {e}", file=sys.stderr)
            return res
        res.pairs.append((ra, rb))
        print(f"  {comp.key} pair {i + 1}/{n}: A {ra.cpu:.3f} s B {rb.cpu:.3f} s ratio {res.ratios()[-1]:.3f}",
              file=sys.stderr)
    return res


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# ---------------------------------------------------------------------------------------------------------
# The comparisons


def comparisons(quick: bool, base: tuple[list[str] | None, str] | None = None) -> list[Comparison]:
    n_mm1 = 50_000 if quick else 200_000
    n_prio = 20_000 if quick else 80_000
    out: list[Comparison] = []
    simpy = [PY, str(BENCH / "mm1_simpy.py")]
    out.append(Comparison(
        "mm1_pool",
        f"M/M/1 at rho 0.8, {n_mm1} customers: serQ's one-slot pool in front of a delay stage "
        "(bench/mm1_pool.sq, the way a serving program writes a server; a cap-only pool, which the fast tier "
        "takes) against SimPy's Resource(capacity=1) (bench/mm1_simpy.py)",
        Side(f"serq run bench/mm1_pool.sq --arrivals {n_mm1}",
             serq_run("bench/mm1_pool.sq", "--arrivals", str(n_mm1), "--horizon", "1e9"), observe_means),
        Side(f"python bench/mm1_simpy.py {n_mm1} 1 1", [*simpy, str(n_mm1), "1", "1"]),
        0.5, "serq/simpy <= 0.5 (issue #11)", per=("customers", n_mm1)))
    out.append(Comparison(
        "mm4_pool",
        f"M/M/4 at rho 0.8, {n_mm1} customers: a pool of 4 in front of a delay stage (bench/mm4_pool.sq, "
        "the fast tier) against SimPy's Resource(capacity=4) (bench/mm1_simpy.py N 1 4)",
        Side(f"serq run bench/mm4_pool.sq --arrivals {n_mm1}",
             serq_run("bench/mm4_pool.sq", "--arrivals", str(n_mm1), "--horizon", "1e9"), observe_means),
        Side(f"python bench/mm1_simpy.py {n_mm1} 1 4", [*simpy, str(n_mm1), "1", "4"]),
        0.5, "serq/simpy <= 0.5 (issue #11)", per=("customers", n_mm1)))
    out.append(Comparison(
        "prio_pool",
        f"non-preemptive priority M/M/1 at rho 0.8, two classes, {n_prio} customers: a pool with "
        "queue by (prio, serial) (bench/prio_pool.sq, the fast tier: keys read only attributes, so each is "
        "evaluated once, at the join) against SimPy's PriorityResource (bench/prio_simpy.py)",
        Side(f"serq run bench/prio_pool.sq --arrivals {n_prio}",
             serq_run("bench/prio_pool.sq", "--arrivals", str(n_prio), "--horizon", "1e9"), observe_means),
        Side(f"python bench/prio_simpy.py {n_prio}", [PY, str(BENCH / "prio_simpy.py"), str(n_prio)]),
        None, "no target of its own (the queue by target is on the vLLM rows)", per=("customers", n_prio)))
    general = {"SERQ_SIM_TIER": "general"}
    out.append(Comparison(
        "mm1_pool_general",
        "the M/M/1 of mm1_pool on the GENERAL ENGINE (SERQ_SIM_TIER=general: what a pool program outside the "
        "fast tier's class, e.g. with blocks, a cache or a step stage, runs on) against SimPy's Resource(1)",
        Side(f"SERQ_SIM_TIER=general serq run bench/mm1_pool.sq --arrivals {n_mm1}",
             serq_run("bench/mm1_pool.sq", "--arrivals", str(n_mm1), "--horizon", "1e9"), observe_means, general),
        Side(f"python bench/mm1_simpy.py {n_mm1} 1 1", [*simpy, str(n_mm1), "1", "1"]),
        None, "none (printed: the general engine's own figure)", per=("customers", n_mm1)))
    out.append(Comparison(
        "prio_pool_general",
        "the priority M/M/1 of prio_pool on the GENERAL ENGINE (SERQ_SIM_TIER=general; the keys sorted once "
        "at the join there too) against SimPy's PriorityResource",
        Side(f"SERQ_SIM_TIER=general serq run bench/prio_pool.sq --arrivals {n_prio}",
             serq_run("bench/prio_pool.sq", "--arrivals", str(n_prio), "--horizon", "1e9"), observe_means, general),
        Side(f"python bench/prio_simpy.py {n_prio}", [PY, str(BENCH / "prio_simpy.py"), str(n_prio)]),
        None, "none (printed)", per=("customers", n_prio)))
    n_jsq = 20_000 if quick else 50_000
    jsq = [PY, str(BENCH / "jsq_simpy.py"), str(n_jsq), "64", "1"]
    out.append(Comparison(
        "jsq_family",
        f"join the shortest queue over 64 single-GPU replicas at rho 0.8, {n_jsq} customers: a choose over a "
        "family of 64 one-slot pools, each in front of its delay stage (bench/jsq.sq, the fast tier: every "
        "request reads every replica's queue) against 64 SimPy Resources and the same choice "
        "(bench/jsq_simpy.py)",
        Side(f"serq run bench/jsq.sq --arrivals {n_jsq}",
             serq_run("bench/jsq.sq", "--arrivals", str(n_jsq), "--horizon", "1e9"), observe_means),
        Side(f"python bench/jsq_simpy.py {n_jsq} 64 1", jsq),
        None, "none (printed: a router's cost over a family)", per=("customers", n_jsq)))
    out.append(Comparison(
        "jsq_family_general",
        "jsq_family on the GENERAL ENGINE, where a router over engine families runs: bench/jsq_blocks.sq, its "
        "pools in blocks of one unit (the same figures; a pool with blocks puts a program there, with its "
        "generated code) against the same SimPy program",
        Side(f"serq run bench/jsq_blocks.sq --arrivals {n_jsq}",
             serq_run("bench/jsq_blocks.sq", "--arrivals", str(n_jsq), "--horizon", "1e9"), observe_means),
        Side(f"python bench/jsq_simpy.py {n_jsq} 64 1", jsq),
        None, "none (printed)", per=("customers", n_jsq)))
    out.append(Comparison(
        "mm1_fast",
        f"M/M/1 at rho 0.8, {n_mm1} customers, on the FAST TIER: bench/mm1.sq has no pool and no step stage, "
        "so it runs as one generated loop (the queue is a fifo stage, not a pool). Against SimPy's "
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
    out += vllm_comparisons(quick, base)
    return out


#: The revision the issue's "today" is (main before the speed work of issue #11). Its requests per CPU second
#: are measured in the same run as the current serQ's (the ``*_base`` rows): the revision is exported from
#: this repository (git archive) into a temporary folder and set up with uv as a fresh clone is, then runs
#: the same program, alternated with the current serQ. For the record only, the figures taken at that
#: revision on 2026-12-01 at load average 7-10: 1 890 requests per CPU second on bench/vllm_single.sq at
#: 10 000 requests, 2 040 at 100 000, 1 200 on the multi-turn example (2 633 requests); a quiet machine gives
#: it more than twice that, which is why the target is read from a same-run ratio and never from them.
BASELINE_AT = "a4d921f"


def build_baseline(rev: str) -> tuple[list[str] | None, str]:
    """The ``serq`` command of revision ``rev`` of this repository, set up in a temporary folder removed at
    exit (``git archive``, then ``uv sync --all-packages --frozen`` as ``dev.py`` sets up a clone), or None
    and why not."""
    uv = shutil.which("uv") or str(ROOT / ".tools" / "uv" / "bin" / "uv")
    if not Path(uv).exists():
        return None, "no uv on PATH or in .tools/ (python3 dev.py setup installs it)"
    tmp = Path(tempfile.mkdtemp(prefix="serq-baseline-"))
    atexit.register(shutil.rmtree, tmp, True)
    print(f"setting up {rev} in {tmp} (git archive, uv sync) ...", file=sys.stderr)
    try:
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], capture_output=True,
                             check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            tf.extractall(tmp, filter="data")
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        subprocess.run([uv, "sync", "--all-packages", "--frozen", "--quiet"], cwd=tmp, env=env, check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError, tarfile.TarError) as e:
        err = getattr(e, "stderr", b"") or b""
        return None, f"{rev} could not be set up: {e} {err.decode(errors='replace').strip()[-200:]}"[:300]
    exe = tmp / ".venv" / "bin" / "serq"
    if not exe.exists():
        return None, f"{rev}: no serq command after its set-up"
    # the multi-turn example as it is now, with the step-cost library it uses (which that revision may not
    # ship) beside it; `use "vllm.sq"` still finds the revision's own library
    mt = tmp / "multi-turn"
    mt.mkdir()
    shutil.copy(ROOT / "examples" / "multi-turn" / "vllm.sq", mt)
    shutil.copy(ROOT / "packages" / "serq-vllm" / "src" / "serq_vllm" / "lib" / "step_costs.sq", mt)
    return [str(exe)], str(mt / "vllm.sq")


def done_count(r: dict) -> int:
    """The requests done: the count of lib/vllm.sq's instant `done` (an observe in reports before version 3)."""
    inst = r.get("instants") or {}
    if "done" in inst:
        v = inst["done"]
        return int(v if isinstance(v, (int, float)) else v["count"])
    return int(r["observes"]["done"]["count"])


def serq_requests(out: str) -> str:
    r = report_json(out)
    ob = r["observes"]
    eng = [st for st in r["stages"] if st["name"] == "engine"][0]
    pre = sum(p.get("preemptions", 0) for p in r["pools"])
    return (f"requests done {done_count(r)} mean ttft {ob['ttft']['mean']:.4f} iterations "
            f"{eng['iterations']} preemptions {pre:g}")


def serq_done(out: str) -> float:
    return float(done_count(report_json(out)))


def peer_done(out: str) -> float:
    return float(out.split("requests done ")[1].split()[0])


def scenario_agree(a: str, b: str) -> str | None:
    x, y = json.loads(a), json.loads(b)
    diff = [k for k in ("first", "done", "preempted", "cached", "preemptions", "steps") if x.get(k) != y.get(k)]
    return None if not diff else f"the answers differ in {', '.join(diff)}"


def scenario_summary(out: str) -> str:
    x = json.loads(out)
    return f"{len(x['done'])} requests, {x['steps']} steps, {x['preemptions']} preemptions"


def vllm_comparisons(quick: bool, base: tuple[list[str] | None, str] | None) -> list[Comparison]:
    peer = [PY, str(BENCH / "vllm_peer.py")]
    out: list[Comparison] = []
    sizes = (("single_10k", 2_000 if quick else 10_000), ("single_100k", 10_000 if quick else 100_000))
    for key, n in sizes:
        out.append(Comparison(
            f"vllm_{key}",
            f"the single-turn vLLM workload, {n} requests (Poisson at 6/s, prompt 1 + floor(exp(1000)), output "
            "1 + floor(exp(200)); budget 512, 64 slots, 8 000 blocks of 16, A100 step cost; KV blocks growing "
            "as tokens are computed): serQ's bench/vllm_single.sq on lib/vllm.sq against the plain-Python "
            "scheduler loop bench/vllm_peer.py doing the same work (its own random draws: the same laws)",
            Side(f"serq run bench/vllm_single.sq --arrivals {n}",
                 serq_run("bench/vllm_single.sq", "--arrivals", str(n), "--horizon", "1e9"), serq_requests),
            Side(f"python bench/vllm_peer.py single {n}", [*peer, "single", str(n)]),
            1.0, "serq/peer <= 1 (faster than the plain loop, issue #11)", per=("requests", n)))
    n = 2_000 if quick else 10_000
    out.append(Comparison(
        "vllm_preempt",
        f"the same single-turn workload with 3 000 KV blocks instead of 8 000, {n} requests: preemption-heavy "
        "(hundreds of recompute preemptions, re-admissions from the request's own cached prefix)",
        Side(f"serq run bench/vllm_single.sq --set blocks=3000 --arrivals {n}",
             serq_run("bench/vllm_single.sq", "--set", "blocks=3000", "--arrivals", str(n), "--horizon", "1e9"),
             serq_requests),
        Side(f"python bench/vllm_peer.py single {n} --blocks 3000", [*peer, "single", str(n), "--blocks", "3000"]),
        1.0, "serq/peer <= 1 (issue #11)", per=("requests", n)))
    horizon = "600" if quick else "1800"
    out.append(Comparison(
        "vllm_multiturn",
        f"examples/multi-turn/vllm.sq (multi-turn agent sessions, 256 slots, budget 2048, prefix hits across "
        f"turns), horizon {horizon} s, warm-up 0 so that every request counts (the warm-up changes only what "
        "is recorded), against bench/vllm_peer.py multiturn (the same workload laws)",
        Side(f"serq run examples/multi-turn/vllm.sq --warmup 0 --horizon {horizon}",
             serq_run("examples/multi-turn/vllm.sq", "--warmup", "0", "--horizon", horizon), serq_requests),
        Side(f"python bench/vllm_peer.py multiturn --warmup 0 --horizon {horizon}",
             [*peer, "multiturn", "--warmup", "0", "--horizon", horizon]),
        1.0, "serq/peer <= 1 (issue #11)", per=("requests", 0), counts=(serq_done, peer_done)))
    out.append(Comparison(
        "vllm_scenario_1000",
        "the `serq vllm scenario` path (programs/scenario.sq: queue by (t0, idx), serve by (admission)) on "
        "bench/scenario_1000.json, 1 000 requests in 400 multi-turn sessions on the step clock, against "
        "bench/vllm_peer.py scenario; both must give the same answer",
        Side("serq vllm scenario bench/scenario_1000.json", [*SERQ, "vllm", "scenario", "bench/scenario_1000.json"],
             scenario_summary),
        Side("python bench/vllm_peer.py scenario bench/scenario_1000.json",
             [*peer, "scenario", "bench/scenario_1000.json"], scenario_summary),
        1.5, "serq/peer <= 1.5 (issue #11)", per=("requests", 1000), agree=scenario_agree))
    out += baseline_comparisons(quick, base)
    sc = "packages/serq-vllm/src/serq_vllm/oracle/vllm/multiturn.json"
    out.append(Comparison(
        "vllm_scenario_oracle",
        "the same path on an oracle scenario as shipped (vllm/multiturn, 9 requests): start-up against "
        "start-up, since neither side has work to speak of",
        Side("serq vllm scenario vllm/multiturn", [*SERQ, "vllm", "scenario", "vllm/multiturn"], scenario_summary),
        Side(f"python bench/vllm_peer.py scenario {sc}", [*peer, "scenario", sc], scenario_summary),
        None, "no target", agree=scenario_agree))
    return out


def baseline_comparisons(quick: bool, base: tuple[list[str] | None, str] | None) -> list[Comparison]:
    """The current serQ against serQ at BASELINE_AT on the same programs (``base``: what build_baseline gave,
    or None when no row of these runs): the issue's target, three times that revision's requests per CPU
    second, as a paired ratio of the two in this run."""
    exe, why = base if base is not None else ([], "")
    old = exe or None  # None: not set up (not asked for, or it could not be: its rows then fail with ``why``)
    mt = why if exe else ""
    why = f" ({why})" if why and not exe else ""
    out = []
    sizes = (("single_10k", 2_000 if quick else 10_000), ("single_100k", 10_000 if quick else 100_000))
    for key, n in sizes:
        args = ["bench/vllm_single.sq", "--arrivals", str(n), "--horizon", "1e9"]
        out.append(Comparison(
            f"vllm_{key}_base",
            f"the current serQ against serQ at {BASELINE_AT} (the issue's 'today', set up in a temporary folder "
            f"from this repository) on bench/vllm_single.sq, {n} requests: the same program, each on its own "
            "lib/vllm.sq",
            Side(f"serq run bench/vllm_single.sq --arrivals {n}", serq_run(*args), serq_requests),
            Side(f"serq@{BASELINE_AT} run bench/vllm_single.sq --arrivals {n}{why}",
                 None if old is None else [*old, "run", *args, "--no-progress", "--json"], serq_requests),
            1 / 3, f"serQ's requests per CPU second >= 3x {BASELINE_AT}'s (now/then <= 0.333, issue #11)",
            per=("requests", n), warm=True))
    horizon = "600" if quick else "1800"
    out.append(Comparison(
        "vllm_multiturn_base",
        f"the current serQ against serQ at {BASELINE_AT} on examples/multi-turn/vllm.sq (horizon {horizon} s, "
        "warm-up 0), the revision given the step-cost library the example uses; their draws differ, so the "
        "ratio of a pair is of CPU seconds per request",
        Side(f"serq run examples/multi-turn/vllm.sq --warmup 0 --horizon {horizon}",
             serq_run("examples/multi-turn/vllm.sq", "--warmup", "0", "--horizon", horizon), serq_requests),
        Side(f"serq@{BASELINE_AT} run (a copy of) examples/multi-turn/vllm.sq --warmup 0 --horizon {horizon}{why}",
             None if old is None else [*old, "run", mt, "--warmup", "0", "--horizon", horizon, "--no-progress",
                                       "--json"], serq_requests),
        1 / 3, f"serQ's requests per CPU second >= 3x {BASELINE_AT}'s (issue #11)", per=("requests", 0),
        counts=(serq_done, serq_done), per_item=True, warm=True))
    return out


def decoder_rows(quick: bool, pairs: int) -> list[Single]:
    """Cost per iteration at N steady decoders, serQ and the peer: each side runs at two output lengths
    and the difference in CPU time is divided by the difference in iterations (start-up and prefill
    cancel). The four runs of a batch size alternate (serQ short, peer short, serQ long, peer long)."""
    peer = [PY, str(BENCH / "vllm_peer.py")]
    rows = []
    for n in (16, 64, 256, 1024):
        # the second length adds about as many decoder-iterations at every size (at least 512 iterations),
        # so that the difference stands well above the run-to-run noise of a whole process
        o1 = 128 if quick else 256
        o2 = o1 + max(512, 131_072 // n)
        def serq(o: int, n: int = n) -> list[str]:
            return serq_run("bench/vllm_decoders.sq", "--set", f"N={n}", "--set", f"O={o}")

        def peer_cmd(o: int, n: int = n) -> list[str]:
            return [*peer, "decoders", str(n), "--out", str(o)]

        s = Single(f"decoders_{n}", f"microseconds per iteration at {n} steady decoders growing their KV "
                   f"(bench/vllm_decoders.sq --set N={n}, O = {o1} and {o2}; peer bench/vllm_peer.py decoders "
                   f"{n} --out O)")
        try:
            a_us, b_us = [], []
            for _ in range(pairs):
                ra1, rb1 = run_once(serq(o1)), run_once(peer_cmd(o1))
                ra2, rb2 = run_once(serq(o2)), run_once(peer_cmd(o2))
                ia1 = [st for st in report_json(ra1.out)["stages"] if st["name"] == "engine"][0]["iterations"]
                ia2 = [st for st in report_json(ra2.out)["stages"] if st["name"] == "engine"][0]["iterations"]
                ib1 = int(rb1.out.split("iterations ")[1].split()[0])
                ib2 = int(rb2.out.split("iterations ")[1].split()[0])
                if (ia1, ia2) != (ib1, ib2):
                    raise ValueError(f"iterations differ: serQ {ia1}, {ia2}, peer {ib1}, {ib2}")
                a_us.append((ra2.cpu - ra1.cpu) / (ia2 - ia1) * 1e6)
                b_us.append((rb2.cpu - rb1.cpu) / (ib2 - ib1) * 1e6)
            s.figure = f"serQ {med(a_us):.1f} us, peer {med(b_us):.1f} us"
            s.note = (f"{med(a_us) / n:.2f} / {med(b_us) / n:.2f} us per decoder; serQ/peer {med(a_us) / med(b_us):.2f}"
                      f" (median of {pairs}; serQ {min(a_us):.1f}-{max(a_us):.1f})")
        except (Failed, ValueError, KeyError, IndexError) as e:
            s.figure, s.note = "FAILED", e.brief() if isinstance(e, Failed) else repr(e)[:160]
        print(f"  {s.key}: {s.figure}", file=sys.stderr)
        rows.append(s)
    return rows


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
        na, nb = (n, n) if n else (c.counts[0](o.pairs[-1][0].out), c.counts[1](o.pairs[-1][1].out))
        print(f"    {what} per CPU second: A {na / a_cpu:,.0f}  B {nb / b_cpu:,.0f}"
              + ("" if n else f"  ({na:.0f} and {nb:.0f} {what})"))
    print(f"    A/B paired ratio: median {med(ra):.3f}  (min {min(ra):.3f}, max {max(ra):.3f}, "
          f"{len(ra)} pair{'s' if len(ra) > 1 else ''})")
    try:
        print(f"    A printed: {c.a.summary(o.pairs[-1][0].out)}")
        print(f"    B printed: {c.b.summary(o.pairs[-1][1].out)}")
    except (ValueError, KeyError, TypeError, IndexError) as e:
        print(f"    output unreadable: {e!r}"[:200])
    disagree = None
    if c.agree is not None:
        disagree = c.agree(o.pairs[-1][0].out, o.pairs[-1][1].out)
        print(f"    the two sides: {'the same answer' if disagree is None else 'DIFFER: ' + disagree}")
        if disagree is not None:
            targets.append((f"{c.key}: the two sides agree", False, disagree))
    if c.target is not None:
        met = med(ra) <= c.target and disagree is None
        print(f"    target {c.target_text}: {'PASS' if met else 'MISS'}")
        targets.append((f"{c.key}: {c.target_text}", met, f"{med(ra):.3f}"))
    return targets


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller runs, one pair (a smoke test)")
    ap.add_argument("--pairs", type=int, default=None, help="A B pairs per comparison (default 5, quick 1)")
    ap.add_argument("--only", default=None,
                    help="run only the rows whose key contains one of these (comma-separated)")
    ap.add_argument("--list", action="store_true", help="print the rows and what each measures, run nothing")
    ap.add_argument("--baseline", default=BASELINE_AT,
                    help=f"the revision the *_base rows compare with (default {BASELINE_AT}, the issue's 'today')")
    ap.add_argument("--keep-env", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE for the children if it is set")
    args = ap.parse_args()
    if args.keep_env:
        CHILD_ENV.clear()
        CHILD_ENV.update(os.environ)
    quick = args.quick
    pairs = args.pairs or (1 if quick else 5)
    only = None if args.only is None else args.only.split(",")

    def chosen(key: str) -> bool:
        return only is None or any(w in key for w in only)

    comps = [c for c in comparisons(quick) if chosen(c.key)]
    if not args.list and any(c.key.endswith("_base") for c in comps):
        base = build_baseline(args.baseline)
        comps = [c for c in comparisons(quick, base) if chosen(c.key)]
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
    if chosen("decoders"):
        singles += decoder_rows(quick, pairs)
    for o in outcomes:  # the 100 000-request run's peak RSS
        if o.comp.key == "vllm_single_100k" and o.pairs:
            n = o.comp.per[1]
            mb = max(a.rss_kib for a, _ in o.pairs) * 1024 / 1e6
            singles.append(Single(
                "vllm_rss", f"peak RSS of `{o.comp.a.label}` (os.wait4's ru_maxrss, the largest of its runs): "
                f"{n} requests, each with its row of lib/vllm.sq's per-request record table `request` and its six "
                "observe samples, kept for the report", f"{mb:.0f} MB",
                f"peer {max(b.rss_kib for _, b in o.pairs) * 1024 / 1e6:.0f} MB",
                "<= 300 MB at 100000 requests (issue #11)", None if quick else mb <= 300))
    if chosen("observe_rss"):
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
