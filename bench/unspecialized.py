"""Where CPython 3.11 could not specialize serQ's hot code: the executed lines whose adaptive instructions
failed (or still wait) to specialize, weighted by how often each line ran.

    .venv/bin/python bench/unspecialized.py run bench/vllm_single.sq --arrivals 300 --horizon 1e9
    .venv/bin/python bench/unspecialized.py --top 60 vllm scenario bench/scenario_1000.json

The arguments after the options are a `serq` command line. The command runs twice in this process: once as a user's
run, after which every function of serQ's (its packages and the code it generates from the program) is
read back as quickened bytecode (``dis``, ``adaptive=True``); then with a line counter on serQ's code
(``sys.settrace``: a traced frame runs unspecialized, hence the second run; slow, so give it a few hundred
requests). An instruction still in its ``*_ADAPTIVE`` form whose
counter has moved ran and did not specialize: a ``BINARY_OP``/``COMPARE_OP`` over an int and a float,
``int()`` of a float, a call with keyword arguments, a method read as an attribute, a slice. Each such
line prints with its execution count, the failed instructions and the source line; the lines are ranked
by count. The counts come from the traced run; the instructions from the first.

What it reads is CPython 3.11's (the inline cache's counter after each adaptive instruction:
``_co_code_adaptive``); on another version it says so and stops. docs/performance.md ("Type-stable hot
paths") says how the list was used.
"""

from __future__ import annotations

import argparse
import collections
import dis
import gc
import linecache
import struct
import sys
import types


def _ours(filename: str) -> bool:
    return filename.startswith("<serq") or ("serq" in filename and "/site-packages/" not in filename
                                            or "/packages/serq" in filename)


def _read_back(failed: dict) -> None:
    """Every function of serQ's, as quickened: the lines with an adaptive instruction that ran and did not
    specialize (its counter moved from where quickening left it, zero)."""
    seen = set()
    for f in gc.get_objects():
        if not isinstance(f, types.FunctionType):
            continue
        code = f.__code__
        if id(code) in seen or not _ours(code.co_filename):
            continue
        seen.add(id(code))
        raw = code._co_code_adaptive
        for ins in dis.get_instructions(f, adaptive=True):
            if not ins.opname.endswith("_ADAPTIVE") or ins.positions is None or ins.positions.lineno is None:
                continue
            if ins.offset + 4 > len(raw) or struct.unpack_from("<H", raw, ins.offset + 2)[0] == 0:
                continue  # never ran
            op = ins.opname.removesuffix("_ADAPTIVE") + (f"({ins.argrepr})" if ins.argrepr else "")
            key = (code.co_filename, ins.positions.lineno)
            if op not in failed[key]:
                failed[key].append(op)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=40, help="how many lines to print (default 40)")
    ap.add_argument("serq", nargs=argparse.REMAINDER, help="a serq command line, e.g. run PROGRAM.sq ...")
    a = ap.parse_args(argv)
    if sys.version_info[:2] != (3, 11):
        print(f"bench/unspecialized.py reads CPython 3.11's quickened bytecode; this is {sys.version.split()[0]}",
              file=sys.stderr)
        return 2
    if not a.serq:
        ap.error("give a serq command line")

    counts: collections.Counter = collections.Counter()
    failed: dict[tuple[str, int], list[str]] = collections.defaultdict(list)

    def local(frame, event, arg):
        if event == "line":
            counts[(frame.f_code.co_filename, frame.f_lineno)] += 1
        return local

    def tracer(frame, event, arg):
        return local if _ours(frame.f_code.co_filename) else None

    import serq_sim.engine as engine
    from serq.cli import main as serq_main

    run = engine.Simulation.run
    passes = []

    def measured(self, *args, **kw):
        if not passes:  # the first run: as a user's, specialized by the interpreter; read back after it
            passes.append(1)
            try:
                return run(self, *args, **kw)
            finally:
                _read_back(failed)
        passes.append(2)  # the second: traced (a traced frame runs unspecialized), for the line counts
        sys.settrace(tracer)
        try:
            return run(self, *args, **kw)
        finally:
            sys.settrace(None)

    engine.Simulation.run = measured
    try:
        for _ in range(2):
            sys.argv = ["serq", *a.serq]
            try:
                serq_main()
            except SystemExit:
                pass
    finally:
        engine.Simulation.run = run

    rows = sorted(((counts[k], k, ops) for k, ops in failed.items() if counts[k]), key=lambda r: -r[0])
    out = sys.stdout
    print(f"{'runs':>9}  line  unspecialized instructions  |  source", file=out)
    for n, (fn, line), ops in rows[:a.top]:
        src = linecache.getline(fn, line).strip() if not fn.startswith("<") else ""
        where = f"{fn.rsplit('/', 1)[-1]}:{line}"
        print(f"{n:>9}  {where}  {' '.join(ops)}  |  {src[:100]}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
