"""Eviction benchmark: one vLLM program under memory pressure, its KV pool evicting by ``lru``, by
``evict by (last)`` and by a plugin order (bench/evict_plugin, written as docs/hooks.md says); the three
are the same order, so they evict the same blocks and give the same report.

    python bench/evict.py                 # vllm.sq at 1 500 and 8 010 blocks, vllm_replay.sq; 5 rounds
    python bench/evict.py --rounds 3 --program examples/multi-turn/vllm.sq --blocks 1500

Each variant is the program's IR (``serq ir``, constants folded, ``--set blocks=N``) with the pool
``kv``'s evict node replaced, run as a whole process (``serq run FILE.ir.json --no-progress``). Every
process gets the plugin's folder on ``PYTHONPATH``, so all three start up alike. The variants run in
turn, round after round (lru, by, plugin, lru, by, plugin, …), and each ratio is taken within one round,
so that a change of the machine's load between rounds moves both sides of it. The figures are the CPU
time (user + system, ``os.wait4``) and the wall clock of each process; the table gives the median
seconds and the median and range of the per-round ratios. The run fails when the reports differ.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "bench" / "evict_plugin"
PY = sys.executable

#: The evict nodes compared, in the order each round runs them.
VARIANTS = {
    "lru": {"kind": "EvictLru"},
    "by (last)": {"kind": "EvictBy", "keys": [{"kind": "Ctx", "name": "last"}]},
    "plugin": {"kind": "Extension", "name": "released_first"},
}

#: (program, --set arguments) measured by default.
DEFAULT = [
    ("examples/multi-turn/vllm.sq", ["blocks=1500"]),
    ("examples/multi-turn/vllm.sq", []),
    ("examples/replay/vllm_replay.sq", ["blocks=400"]),
]


def serq() -> list[str]:
    beside = Path(PY).parent / "serq"
    return [str(beside)] if beside.exists() else [PY, "-m", "serq"]


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    e["PYTHONPATH"] = os.pathsep.join([str(PLUGIN), *filter(None, [e.get("PYTHONPATH")])])
    return e


def variants(program: str, sets: list[str], folder: Path) -> dict[str, Path]:
    """The IR of ``program`` once per variant, written into ``folder``."""
    cmd = [*serq(), "ir", program, "--no-spans", *[a for s in sets for a in ("--set", s)]]
    ir = json.loads(subprocess.run(cmd, cwd=ROOT, env=env(), check=True, capture_output=True, text=True).stdout)
    out = {}
    for name, node in VARIANTS.items():
        for pool in ir["pools"]:
            if pool["name"] == "kv":
                pool["evict"] = node
        path = folder / f"{len(out)}.ir.json"
        path.write_text(json.dumps(ir))
        out[name] = path
    return out


def run(path: Path) -> tuple[float, float, str]:
    """CPU seconds (user + system), wall seconds and stdout of ``serq run path``."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as o, tempfile.TemporaryFile() as e:
        p = subprocess.Popen([*serq(), "run", str(path), "--no-progress"], cwd=ROOT, env=env(), stdout=o, stderr=e)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        o.seek(0)
        e.seek(0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise SystemExit(f"serq run {path} exited {code}: {e.read().decode(errors='replace')[-2000:]}")
        return ru.ru_utime + ru.ru_stime, wall, o.read().decode()


def bench(program: str, sets: list[str], rounds: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        paths = variants(program, sets, Path(tmp))
        cpu = {n: [] for n in paths}
        wall = {n: [] for n in paths}
        reports = {}
        for _ in range(rounds):
            for n, path in paths.items():
                c, w, out = run(path)
                cpu[n].append(c)
                wall[n].append(w)
                reports.setdefault(n, out)
                if out != reports["lru"]:
                    raise SystemExit(f"{program} {' '.join(sets)}: the report of {n} differs from lru's")
    evicted = next((ln.split() for ln in reports["lru"].splitlines() if ln.startswith("kv ")), None)
    label = f"{program}{''.join(' --set ' + s for s in sets)}"
    lines = [f"{label}: {rounds} rounds; kv evicted {evicted[7] if evicted else '?'} entries, "
             f"{evicted[8] if evicted else '?'} units"]
    lines.append(f"  {'order':<10} {'cpu s':>7} {'wall s':>7} {'cpu / lru':>20} {'wall / lru':>20}")
    for n in paths:
        rc = [a / b for a, b in zip(cpu[n], cpu["lru"])]
        rw = [a / b for a, b in zip(wall[n], wall["lru"])]
        lines.append(f"  {n:<10} {statistics.median(cpu[n]):7.3f} {statistics.median(wall[n]):7.3f} "
                     f"{statistics.median(rc):8.2f} ({min(rc):.2f}-{max(rc):.2f}) "
                     f"{statistics.median(rw):8.2f} ({min(rw):.2f}-{max(rw):.2f})")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--program", help="one program instead of the default set")
    ap.add_argument("--blocks", help="with --program: --set blocks=N")
    args = ap.parse_args()
    cases = DEFAULT if args.program is None else [(args.program, [f"blocks={args.blocks}"] if args.blocks else [])]
    print(f"eviction benchmark: {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for program, sets in cases:
        for line in bench(program, sets, args.rounds):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
