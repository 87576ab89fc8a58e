#!/usr/bin/env python
"""A random differential between the serQ program of `serq vllm scenario` and the real vLLM scheduler.

Draws random scenarios across what the bridge accepts (``real.check_scenario``), runs each through the
serQ program (in this interpreter, on the step engine's default paths and, with ``--tiers``, again under
``SERQ_SIM_TIER=general``, the per-job reference without lazy decoding and quiet rounds) and through vLLM's own scheduler (the bridge, ``serq_vllm/real.py``, in
one long-lived interpreter that has vLLM, fed a scenario a line), and compares ``first``, ``done``,
``preempted``, ``cached``, ``preemptions`` and ``steps``. Run it from serQ's interpreter, naming the one
that has vLLM (docs/vllm-oracle.md); it is never part of the test suite:

    .venv/bin/python packages/serq-vllm/scripts/fuzz_real.py --python ~/vllm-venv/bin/python \\
        -n 2000 --seed 1 --tiers --shrink --out /tmp/fuzz

Each scenario that differs (serQ against vLLM, or serQ's two tiers against each other) is written to
``--out`` as ``NAME.json`` with both answers in ``NAME.answers.json``; with ``--shrink`` it is first
reduced, greedily, to a smallest scenario that still differs the same way (fewer requests and sessions,
shorter prompts and outputs, earlier arrivals, smaller settings). ``--keep K`` also writes K agreeing
scenarios, the most diverse drawn (by the features they exercise), as ``agree_*.json``.

Under a serving order a victim served earlier in its step leaves the blocks of its revoked chunk in vLLM's
prefix cache (docs/vllm-oracle.md, "A victim the step had already served"); the scenario program's KV pool
says `cache scheduled`, which caches them too, so such a scenario is compared as any other. The exit status
is 1 if any scenario differed.

``--size`` draws scenarios of one shape (tiny, small, medium, storm, edge, chat, big; default: mixed, all
of them in turn) or, with ``mutate``, the shipped oracle scenarios with a few random changes each.
``--replay FILE.json ...`` runs given scenarios instead of random ones (with ``--shrink``, shrinks them).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import queue
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "serq_vllm"
FIELDS = ("first", "done", "preempted", "cached", "preemptions", "steps")
SERVES = (None, "admission", "-admission", "decoding ? 1 : 0", "decoding ? 0 : 1", "decoding", "-decoding")

# The real side: the bridge's file loaded on its own in the vLLM interpreter, one scenario per line in,
# one answer per line out (vLLM's import, some 20 s, is paid once).
WORKER = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("bridge", sys.argv[1])
bridge = importlib.util.module_from_spec(spec); spec.loader.exec_module(bridge)
bridge._import_vllm()
fields = ("first", "done", "preempted", "cached", "preemptions", "steps")
print(json.dumps({"ready": bridge.vllm_version()}), flush=True)
for line in sys.stdin:
    try:
        sc = json.loads(line)
        ans = bridge.run_real(sc)
        out = {k: ans[k] for k in fields}
    except Exception as e:
        out = {"error": type(e).__name__ + ": " + str(e)}
    print(json.dumps(out), flush=True)
"""


def load_real():
    spec = importlib.util.spec_from_file_location("serq_vllm_real_fuzz", PACKAGE / "real.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REAL = load_real()


#: how long the vLLM interpreter has to say it is ready (vLLM's import takes some 10-30 s on a CPU) and then
#: to answer each scenario (a second or two)
TIMEOUT = 600.0
#: the longest line of the worker's read (one that is longer is its first part, which is no answer)
LONGEST = 1 << 24


class BridgeFailure(Exception):
    """The vLLM interpreter cannot be run, exited, wrote what is not the worker's answer, or did not answer in
    time: one line, ``--python PATH: …``, the script's error (status 1)."""


def _hold_signals(got: list[int]) -> Any:
    """Record SIGINT and SIGTERM in ``got`` instead of acting on them until the function returned is called,
    which gives the handlers back: around the worker's start, where the exception a signal raises
    (KeyboardInterrupt, or serq.signals.Terminated for SIGTERM: :func:`main`) after the child started but
    before ``Popen`` returned lost its pid, and the worker ran on. In the main thread only (the one signal
    handlers run in)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {sig: signal.signal(sig, lambda n, _f: got.append(n)) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


class Real:
    """A long-lived bridge in the vLLM interpreter, in a session of its own; a ``--python`` that is no
    program, writes garbage, has no vLLM or never answers is a :class:`BridgeFailure` (it was a traceback,
    and one that never answered kept the script waiting for ever)."""

    def __init__(self, python: str, *, timeout: float = TIMEOUT):
        self.python, self.timeout = python, timeout
        env = dict(os.environ, VLLM_LOGGING_LEVEL="ERROR")
        self.err = tempfile.TemporaryFile()
        held: list[int] = []
        restore = _hold_signals(held)
        try:
            self.proc = subprocess.Popen([python, "-c", WORKER, str(PACKAGE / "real.py")], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self.err, encoding="utf-8",
                                         errors="replace", env=env, start_new_session=True)
        except OSError as e:
            self.err.close()
            raise BridgeFailure(f"--python {python}: cannot run it: {e.strerror or e}") from None
        finally:
            restore()
        # from here on the worker is stopped on any way out of the start: a BridgeFailure, and Ctrl-C or SIGTERM
        # while vLLM's import runs (up to --timeout: the caller has no Real to stop yet, and the worker ran on)
        try:
            if held:  # a signal that came while the worker started: acted on now, when it can be stopped
                signal.raise_signal(held[0])
            self.lines: queue.Queue[str | None] = queue.Queue()
            threading.Thread(target=self._read, daemon=True).start()
            line = self._line("its ready line (after vLLM's import)")
            try:
                ready = json.loads(line)
                self.version = ready["ready"]
            except (ValueError, TypeError, KeyError):
                raise BridgeFailure(f"--python {python}: its first line is not the worker's ready line (is it a "
                                    f"Python interpreter with vLLM?): {_quoted(line)}") from None
        except BaseException:
            self.stop()
            self.err.close()
            raise

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while line := self.proc.stdout.readline(LONGEST):
                self.lines.put(line)
        except (OSError, ValueError):  # closed under it (stopped)
            pass
        self.lines.put(None)

    def _line(self, what: str) -> str:
        try:
            line = self.lines.get(timeout=self.timeout)
        except queue.Empty:
            self.stop()
            raise BridgeFailure(f"--python {self.python}: {what} did not come within {self.timeout:g} s; "
                                "stopped it") from None
        if line is None:
            status = self.stop()
            self.err.seek(0, os.SEEK_END)
            self.err.seek(max(0, self.err.tell() - 4096))
            tail = [x.strip() for x in self.err.read().decode("utf-8", "replace").splitlines() if x.strip()]
            raise BridgeFailure(f"--python {self.python}: it exited (status {status}) before {what}"
                                + (f": {_quoted(tail[-1])}" if tail else ""))
        return line

    def run(self, sc: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(sc) + "\n")
            self.proc.stdin.flush()
        except OSError:  # it exited: told with its status and last error line
            pass
        line = self._line("its answer to a scenario")
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            self.stop()
            raise BridgeFailure(f"--python {self.python}: its answer to a scenario is not a JSON object: "
                                f"{_quoted(line)}")
        return answer

    def stop(self) -> int:
        """Kill it and what it started (its session); its exit status."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        status = self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        return status

    def close(self) -> None:
        if self.proc.stdin:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:  # vLLM's interpreter slow to exit (a loaded machine): its answers are in
            pass
        self.stop()
        self.err.close()


def _quoted(line: str) -> str:
    line = line.strip()
    return repr(line if len(line) <= 200 else line[:200] + "...")


def run_serq(sc: dict[str, Any], general: bool) -> dict[str, Any]:
    from serq_vllm.scenarios import run_scenario

    old = os.environ.get("SERQ_SIM_TIER")
    os.environ["SERQ_SIM_TIER"] = "general" if general else ""
    try:
        ans = run_scenario(sc)
        return {k: ans[k] for k in FIELDS}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}
    finally:
        if old is None:
            del os.environ["SERQ_SIM_TIER"]
        else:
            os.environ["SERQ_SIM_TIER"] = old


# ---------------------------------------------------------------------------------------------------
# Drawing scenarios


def need(r: dict[str, Any], bs: int) -> int:
    return -(-(r["prompt"] + r["out"] - 1) // bs)


def draw(rng: random.Random, size: str) -> dict[str, Any]:
    """A random scenario check_scenario accepts; size: tiny, small or medium (a few requests to a dozen),
    storm (several short prompts with long outputs, arriving together, in few blocks), edge (tiny
    budgets, blocks and chunks, odd block sizes, many short requests) or chat (sessions of several turns
    with prefix caching in few blocks: evictions, partial hits) or big (a dozen or two of sessions with
    long outputs: long decode runs, where the step engine's fast paths engage)."""
    storm, edge, chat, big = size == "storm", size == "edge", size == "chat", size == "big"
    n_sessions = {"tiny": rng.randint(1, 3), "small": rng.randint(2, 5), "medium": rng.randint(4, 8),
                  "storm": rng.randint(3, 8), "edge": rng.randint(2, 10), "chat": rng.randint(2, 5),
                  "big": rng.randint(8, 20)}[size]
    long = {"tiny": 40, "small": 80, "medium": 120, "storm": 24, "edge": 12, "chat": 48, "big": 300}[size]
    bs = rng.choice((1, 2, 3, 5, 6, 12) if edge else (1, 2, 4, 4, 8, 8, 16, 16, 32))
    budget = rng.choice((rng.randint(2, 16), rng.randint(8, 64), rng.randint(32, 160)))
    if edge:
        budget = rng.randint(1, 8)
    elif big:
        budget = rng.randint(32, 512)
    max_seqs = rng.choice((1, 2, rng.randint(1, min(budget, 8)), min(budget, rng.randint(2, 32))))
    max_seqs = max(1, min(max_seqs, budget))
    multi = chat or rng.random() < 0.35
    # under pressure: several requests at once with long outputs in few blocks (preemption storms)
    pressure = storm or rng.random() < 0.5
    if pressure:
        max_seqs = max(max_seqs, min(budget, rng.randint(2, 8)))
    horizon = rng.choice((0, 3, 10, 30, 60) + ((0, 0, 2, 5) if pressure else ()))
    if storm:
        horizon = rng.choice((0, 1, 3, 6))
    requests: list[dict[str, Any]] = []
    # sessions named by numbers or strings, turns numbered from 1 or anyhow (only their order counts)
    named = rng.random() < 0.2
    step, base = rng.choice(((1, 1), (1, 1), (3, -4), (10, 0)))
    for s in range(n_sessions):
        turns = (rng.randint(2, 5) if chat else rng.choice((1, 1, 2, 3))) if multi else 1
        arrive = rng.randint(0, horizon) if horizon else 0
        history = 0
        for t in range(turns):
            if t == 0:
                prompt = rng.choice((rng.randint(1, 8), rng.randint(1, long), rng.randint(long // 2, long)))
            else:
                prompt = history + rng.choice((0, rng.randint(0, 8), rng.randint(1, long // 2)))
            outs = (1, rng.randint(1, 6), rng.randint(1, 24)) + ((rng.randint(8, 64),) * 3 if pressure else ())
            if big:
                outs += (rng.randint(50, 250),) * 4
            out = rng.randint(8, 48) if storm else rng.randint(1, 10) if edge else rng.choice(outs)
            r: dict[str, Any] = {"prompt": prompt, "out": out}
            if turns > 1:
                r["session"] = f"chat-{s}" if named else s
                r["turn"] = base + step * t
                if t > 0 and rng.random() < 0.7:
                    r["think"] = rng.choice((0, 1, rng.randint(0, 8), rng.randint(10, 60)))
            if t == 0 and arrive:
                r["arrive"] = arrive
            requests.append(r)
            history = prompt + out
    if rng.random() < 0.3:
        rng.shuffle(requests)  # sessions and turns need not be listed in order
    biggest = max(need(r, bs) for r in requests)
    total = sum(need(r, bs) for r in requests)
    # from starved (the biggest request barely fits) to ample (everything at once)
    mode = rng.random()
    if chat:
        num_blocks = biggest + 1 + rng.randint(0, max(1, total // 3))
    elif pressure:
        num_blocks = biggest + 1 + rng.randint(0, max(1, (total - biggest) // (3 if storm else 2)))
    elif mode < 0.35:
        num_blocks = biggest + 1 + rng.randint(0, 2)
    elif mode < 0.75:
        num_blocks = biggest + 1 + rng.randint(0, max(1, total - biggest))
    else:
        num_blocks = total + 1 + rng.randint(0, total)
    sc: dict[str, Any] = {"budget": budget, "max_seqs": max_seqs, "block_size": bs, "num_blocks": num_blocks}
    if rng.random() < (0.8 if edge else 0.5):
        sc["chunk"] = rng.choice((0, rng.randint(1, max(1, budget // 2)), rng.randint(1, budget),
                                  rng.randint(budget, 2 * budget)))
    if chat or rng.random() < 0.5:
        sc["prefix_caching"] = rng.random() < 0.75 or multi
    serve = rng.choice(SERVES + (None, None, "decoding ? -2 : 0.5"))
    if serve is not None:
        sc["serve"] = serve
    sc["requests"] = requests
    REAL.check_scenario(sc)
    return sc


def shipped() -> list[dict[str, Any]]:
    """The shipped oracle scenarios (those with requests)."""
    out = []
    for path in sorted((PACKAGE / "oracle").glob("*/*.json")):
        if not path.name.endswith((".out.json", ".target.json")):
            sc = json.loads(path.read_text())
            if isinstance(sc.get("requests"), list):
                out.append(sc)
    return out


def mutate(rng: random.Random, base: list[dict[str, Any]]) -> dict[str, Any]:
    """A shipped scenario with one to four random changes (settings, a request's sizes or arrival)."""
    while True:
        sc = json.loads(json.dumps(rng.choice(base)))
        for _ in range(rng.randint(1, 4)):
            what = rng.choice(("budget", "max_seqs", "block_size", "num_blocks", "num_blocks", "chunk",
                               "prefix_caching", "serve", "request", "request", "request"))
            if what == "prefix_caching":
                sc["prefix_caching"] = not sc.get("prefix_caching")
            elif what == "serve":
                serve = rng.choice(SERVES)
                sc.pop("serve", None)
                if serve is not None:
                    sc["serve"] = serve
            elif what == "request":
                r = rng.choice(sc["requests"])
                k = rng.choice(("prompt", "out", "arrive", "think"))
                if k in ("arrive", "think") and k not in r:
                    continue
                v = r.get(k, 0)
                r[k] = max(0 if k in ("arrive", "think") else 1, v + rng.randint(-max(2, v // 3), max(2, v // 3)))
            else:
                v = sc.get(what) or 0
                sc[what] = max(0 if what == "chunk" else 1, v + rng.randint(-max(2, v // 3), max(2, v // 3)))
        # the pre-2026 files' extra keys are the bridge's too; a mutation may break a rule: draw again
        if valid(sc) and sum(r["prompt"] + r["out"] for r in sc["requests"]) < 4000:
            return sc


def features(sc: dict[str, Any], ans: dict[str, Any]) -> frozenset[str]:
    """What a scenario exercises, for picking diverse agreeing ones."""
    f = {f"serve={sc.get('serve')}", f"bs={sc['block_size']}"}
    if sc.get("chunk"):
        f.add("chunk")
    if sc.get("prefix_caching"):
        f.add("caching")
        if any(v for v in ans["cached"].values()):
            f.add("hit")
    if any("session" in r for r in sc["requests"]):
        f.add("turns")
    if any(r.get("arrive") for r in sc["requests"]):
        f.add("arrivals")
    p = ans["preemptions"]
    f.add("preempt0" if p == 0 else "preempt1" if p == 1 else "preempt2+" if p < 6 else "storm")
    if any(v > 1 for v in ans["preempted"].values()):
        f.add("repeat")
    if sc["max_seqs"] == 1:
        f.add("one_seq")
    if len(sc["requests"]) >= 6:
        f.add("many")
    if ans["steps"] > 100:
        f.add("long")
    return frozenset(f)


# ---------------------------------------------------------------------------------------------------
# Comparing and shrinking


def verdict(sc: dict[str, Any], real: Real | None, tiers: bool) -> tuple[str | None, dict[str, Any]]:
    """('real', answers) if serQ differs from vLLM, ('tiers', ...) if serQ's tiers differ, (None, ...)."""
    answers: dict[str, Any] = {"serq": run_serq(sc, general=False)}
    if tiers:
        answers["serq_general"] = run_serq(sc, general=True)
        if answers["serq_general"] != answers["serq"]:
            return "tiers", answers
    if real is not None:
        answers["vllm"] = real.run(sc)
        if "error" in answers["vllm"] and "error" in answers["serq"]:
            return None, answers
        if answers["vllm"] != answers["serq"]:
            return "real", answers
    return None, answers


def diff_fields(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    if "error" in a or "error" in b:
        return [f"error: {a.get('error')} / {b.get('error')}"]
    out = []
    for f in FIELDS:
        if isinstance(a[f], dict):
            for k in sorted(set(a[f]) | set(b[f]), key=int):
                if a[f].get(k) != b[f].get(k):
                    out.append(f"{f}[{k}] {a[f].get(k)} vs {b[f].get(k)}")
        elif a[f] != b[f]:
            out.append(f"{f} {a[f]} vs {b[f]}")
    return out


def valid(sc: dict[str, Any]) -> bool:
    try:
        REAL.check_scenario(sc)
    except REAL.ScenarioError:
        return False
    return True


def candidates(sc: dict[str, Any]):
    """Smaller scenarios, roughly biggest cuts first."""
    reqs = sc["requests"]
    # drop a request: a lone one, or the last turn of a session
    last_turn = {}
    for i, r in enumerate(reqs):
        if "session" in r:
            s = r["session"]
            if s not in last_turn or r.get("turn", 0) > reqs[last_turn[s]].get("turn", 0):
                last_turn[s] = i
    for i, r in enumerate(reqs):
        if "session" not in r or last_turn[r["session"]] == i:
            yield {**sc, "requests": reqs[:i] + reqs[i + 1:]}
    # drop a whole session
    for s in last_turn:
        yield {**sc, "requests": [r for r in reqs if r.get("session") != s]}
    # settings
    for k, vals in (("serve", (None, "admission")), ("prefix_caching", (None,)), ("chunk", (None,))):
        if k in sc:
            for v in vals:
                c = {x: y for x, y in sc.items() if x != k}
                if v is not None:
                    if sc[k] == v:
                        continue
                    c[k] = v
                yield c
    for k in ("num_blocks", "budget", "max_seqs", "chunk", "block_size"):
        v = sc.get(k)
        if v:
            for w in sorted({1, v // 2, v - 1, v * 3 // 4}):
                if 0 < w < v:
                    yield {**sc, k: w}
    if sc.get("num_blocks"):
        yield {**sc, "num_blocks": sc["num_blocks"] + 1}
    for i, r in enumerate(reqs):
        for k in ("prompt", "out", "arrive", "think"):
            v = r.get(k)
            if v:
                for w in sorted({0 if k in ("arrive", "think") else 1, v // 2, v - 1}):
                    if w < v:
                        nr = dict(r)
                        if w == 0 and k in ("arrive", "think"):
                            del nr[k]
                        else:
                            nr[k] = w
                        yield {**sc, "requests": reqs[:i] + [nr] + reqs[i + 1:]}
    # a session of one request left: a lone request
    for i, r in enumerate(reqs):
        if "session" in r and sum(1 for x in reqs if x.get("session") == r["session"]) == 1:
            nr = {x: y for x, y in r.items() if x not in ("session", "turn", "think")}
            yield {**sc, "requests": reqs[:i] + [nr] + reqs[i + 1:]}


def size(sc: dict[str, Any]) -> tuple:
    reqs = sc["requests"]
    return (len(reqs), sum(r["prompt"] + r["out"] for r in reqs), sum(r.get("arrive", 0) + r.get("think", 0)
            for r in reqs), len(sc) + sum(len(r) for r in reqs),
            sc["num_blocks"] + sc["budget"] + sc["max_seqs"] + (sc.get("chunk") or 0))


def shrink(sc: dict[str, Any], kind: str, real: Real | None, tiers: bool, budget_s: float = 300.0):
    """Greedy: take the first smaller candidate that still differs the same way, until none does."""
    start = time.monotonic()
    best = sc
    tried = 0
    improved = True
    while improved and time.monotonic() - start < budget_s:
        improved = False
        for c in candidates(best):
            if not valid(c) or size(c) >= size(best):
                continue
            tried += 1
            k, _ = verdict(c, real, tiers=(kind == "tiers"))
            if k == kind:
                best = c
                improved = True
                break
    return best, tried


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", help="an interpreter that imports vLLM (without it, only the tiers are compared)")
    ap.add_argument("--timeout", type=float, default=TIMEOUT, metavar="SECONDS",
                    help=f"how long --python has to be ready, and then to answer each scenario (default {TIMEOUT:g})")
    ap.add_argument("-n", type=int, default=200, help="how many random scenarios (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", choices=("tiny", "small", "medium", "storm", "edge", "chat", "big", "mixed", "mutate"), default="mixed")
    ap.add_argument("--tiers", action="store_true", help="also compare serQ's fast and general tiers")
    ap.add_argument("--shrink", action="store_true", help="shrink every scenario that differs")
    ap.add_argument("--out", type=Path, help="folder for the scenarios that differ (and --keep's)")
    ap.add_argument("--keep", type=int, default=0, help="also write this many diverse agreeing scenarios")
    ap.add_argument("--replay", nargs="*", type=Path, help="run these scenario files instead of random ones")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()
    if args.python is None and not args.tiers:
        ap.error("nothing to compare: give --python (vLLM) and/or --tiers")
    # SIGTERM raises as Ctrl-C does, serq's Terminated (serq.signals, the serq command's handling: a run of
    # serQ stops on it as on Ctrl-C, and a signal whose exception code called from C dropped is delivered
    # again), so the worker is stopped on the way out; the script ends as a serq command the signal stopped
    # (status 143, 130 for Ctrl-C). SIGTERM's default ended the script at once and left the worker running.
    from serq import signals

    signals.install()
    try:
        return _main(args)
    except KeyboardInterrupt:
        return signals.interrupted()
    finally:
        signals.uninstall()


def _main(args: argparse.Namespace) -> int:
    try:
        real = Real(args.python, timeout=args.timeout) if args.python else None
    except BridgeFailure as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    try:
        return run_jobs(args, real)
    except BridgeFailure as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except BaseException:  # Ctrl-C, SIGTERM, or the script's own failure: the worker is stopped at once, not waited for
        if real is not None:
            real.stop()
        raise
    finally:
        if real is not None:  # (Ctrl-C included: the worker is in a session of its own, which no Ctrl-C reaches)
            real.close()


def run_jobs(args: argparse.Namespace, real: Real | None) -> int:
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    if args.replay:
        jobs = [(p.stem, json.loads(p.read_text())) for p in args.replay]
    elif args.size == "mutate":
        base = shipped()
        jobs = [(f"m{args.seed}_{k}", mutate(rng, base)) for k in range(args.n)]
    else:
        sizes = ("tiny", "small", "medium", "storm", "edge", "chat", "big") if args.size == "mixed" else (args.size,)
        jobs = [(f"s{args.seed}_{k}", draw(rng, sizes[k % len(sizes)])) for k in range(args.n)]
    counts = {"agree": 0, "real": 0, "tiers": 0}
    kept: dict[frozenset[str], tuple[str, dict[str, Any]]] = {}
    t0 = time.monotonic()
    for k, (name, sc) in enumerate(jobs):
        kind, answers = verdict(sc, real, args.tiers)
        if kind is None:
            counts["agree"] += 1
            if args.keep and "error" not in answers["serq"]:
                kept.setdefault(features(sc, answers["serq"]), (name, sc))
        else:
            counts[kind] += 1
            other = answers["serq_general"] if kind == "tiers" else answers["vllm"]
            what = {"tiers": "serQ fast vs general", "real": "serQ vs vLLM"}[kind]
            print(f"{name}: DIFFERS ({what}): {'; '.join(diff_fields(answers['serq'], other)[:6])}", flush=True)
            small = sc
            if args.shrink:
                small, tried = shrink(sc, kind, real, args.tiers)
                _, answers = verdict(small, real, args.tiers or kind == "tiers")
                other = answers["serq_general"] if kind == "tiers" else answers["vllm"]
                print(f"  shrunk ({tried} tried): {json.dumps(small)}", flush=True)
                print(f"  {'; '.join(diff_fields(answers['serq'], other))}", flush=True)
            if args.out:
                (args.out / f"{name}.json").write_text(json.dumps(small, indent=1) + "\n")
                (args.out / f"{name}.answers.json").write_text(json.dumps(
                    {"kind": kind, "original": sc, **answers}, indent=1) + "\n")
        if not args.quiet and (k + 1) % 100 == 0:
            print(f"[{k + 1}/{len(jobs)}] {counts} {time.monotonic() - t0:.0f}s", flush=True)
    if args.keep and args.out:
        # the most diverse: greedily, the feature set that adds most features not yet covered
        covered: set[str] = set()
        pool = dict(kept)
        for j in range(args.keep):
            if not pool:
                break
            fs = max(pool, key=lambda f: (len(f - covered), len(f)))
            name, sc = pool.pop(fs)
            covered |= fs
            (args.out / f"agree_{j}_{name}.json").write_text(json.dumps(sc, indent=1) + "\n")
            print(f"kept agree_{j}_{name}: {sorted(fs)}")
    total = sum(counts.values())
    print(f"{total} scenarios: {counts['agree']} agree ({100 * counts['agree'] / max(total, 1):.2f}%), "
          f"{counts['real']} differ from vLLM, {counts['tiers']} differ between serQ's tiers "
          f"({time.monotonic() - t0:.0f}s)")
    return 1 if counts["real"] or counts["tiers"] else 0


if __name__ == "__main__":
    sys.exit(main())
