"""Mutating the IR of the repository's programs, and judging what reading and running the result does.

Used by ``test_fuzz_ir.py``. The programs are ``examples/**/*.sq`` and ``bench/*.sq``, compiled once and
encoded as JSON; :func:`mutate` changes the decoded JSON tree in place (numbers, indices, types, list
items, keys, node kinds, whole subtrees) and returns the text, sometimes truncated. :func:`outcome` decodes
the text, runs what decodes for a short while (a small horizon, few arrivals, a CPU-time guard) and
formats the report as text and JSON. The acceptable outcomes are the IR's own error (:class:`IRError`,
one line naming the file, with a JSON path where the fault has one), a user error of the simulator
(:class:`SimError`: ``error:`` in its first line), or a report. Anything else propagates: a crash.
"""

from __future__ import annotations

import copy
import gc
import io
import json
import math
import os
import re
import resource
import signal
import sys
from contextlib import contextmanager
from pathlib import Path

import msgspec
from hypothesis import HealthCheck, seed, settings
from serq_ir import nodes as N

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted((ROOT / "examples").rglob("*.sq")) + sorted((ROOT / "bench").glob("*.sq"))

#: the simulated time and arrivals a mutated program runs for at most
HORIZON = 30.0
ARRIVALS = 20
#: the guard of one run, in seconds of the process's CPU time (a mutated rate or work can make a short
#: horizon take forever); CPU time, not wall-clock time, so that a busy machine does not make a run "slow"
RUN_CPU = 1.0

#: ``SERQ_FUZZ_EXAMPLES=N``: N examples per fuzz test instead of its default; ``SERQ_FUZZ_SEED=S``: other
#: examples (seeded, not derandomized). Shared by the IR and the source fuzz tests.
EXAMPLES = int(os.environ.get("SERQ_FUZZ_EXAMPLES", "0"))
SEED = os.environ.get("SERQ_FUZZ_SEED")


#: the suite's timeout of one test (pyproject.toml's ``timeout``), which a fuzz test's default examples fit
SUITE_TIMEOUT = 300


def fuzz_settings(default: int):
    """The settings of a fuzz test of ``default`` examples (``SERQ_FUZZ_EXAMPLES`` overrides), and with more
    examples than that a timeout grown in proportion: 500 examples of a test whose default is 30 took longer
    than the suite's 300 s on a busy machine, and the timeout ended the run as a crashed worker."""
    given = settings(max_examples=EXAMPLES or default, deadline=None, derandomize=SEED is None, database=None,
                     suppress_health_check=list(HealthCheck))
    if EXAMPLES <= default:
        return given
    import pytest

    def apply(test):
        return pytest.mark.timeout(SUITE_TIMEOUT * EXAMPLES / default)(given(test))

    return apply


def fuzz_seed(f):
    return seed(int(SEED))(f) if SEED is not None else f


_HUGE = "\x00huge\x00"  # written as 1e400 (out of any float's range) in the JSON text
_NEG_HUGE = "\x00-huge\x00"

_IR: dict[str, bytes] | None = None


def programs() -> dict[str, bytes]:
    """``{name: IR JSON}`` of every repository program (compiled once per process)."""
    global _IR
    if _IR is None:
        import serq_frontend
        import serq_ir

        _IR = {str(p.relative_to(ROOT)): serq_ir.encode(serq_frontend.compile(p)) for p in SOURCES}
    return _IR


def _tags(union) -> list[str]:
    return [t.__name__ for t in union.__args__]


EXPR_KINDS = _tags(N.Expr)
STMT_KINDS = _tags(N.Stmt)
KIND_GROUPS = [EXPR_KINDS, STMT_KINDS, _tags(N.Evict), _tags(N.Preempt), _tags(N.Queue),
               _tags(N.StageKind), _tags(N.Arrive), ["ServeBy", "ServeExclusivePrefill"],
               ["PoolRef", "StageRef"]]
ALL_KINDS = sorted({k for g in KIND_GROUPS for k in g})
CONTEXT = list(N.ContextName.__args__)
DRAWS = list(N.DrawName.__args__)
FUNCTIONS = list(N.FunctionName.__args__)
OBSERVABLES = list(N.ObservableName.__args__)
BINARY = list(N.BinaryOp.__args__)

NUMBERS = [0, 0.0, -1, 1, 0.5, -0.5, 2, 3, 1e-300, -1e-300, 1e308, -1e308, 1e15, 2**31, 2**53 + 1, 2**63 - 1,
           -(2**63), "inf", "-inf"]
#: what a number is replaced with when not with a number: out of range, or of the wrong type
NOT_NUMBERS = [2**64, _HUGE, _NEG_HUGE, "nan", "NaN", "1", "", None, True, False, [], {}]
INDICES = [-1, 0, 1, 2, 3, 7, 10**9, 2**63 - 1, -(2**63)]
OTHER = [None, True, "x", [], {}, 0, -1, "inf", {"kind": "Num", "value": 1}, [0], {"kind": "End"}]
INDEX_KEYS = {"slot", "pool", "stage", "observe", "admit_via", "memory", "size", "n", "arrivals", "seed",
              "line", "col"}


class Chooser:
    """Where a mutation's choices come from: hypothesis's ``draw`` (shrinkable) or a ``random.Random``."""

    def __init__(self, draw=None, rng=None):
        self._draw, self._rng = draw, rng

    def int(self, lo: int, hi: int) -> int:
        if self._draw is not None:
            from hypothesis import strategies as st

            return self._draw(st.integers(lo, hi))
        return self._rng.randint(lo, hi)

    def pick(self, seq):
        return seq[self.int(0, len(seq) - 1)]


# -- paths into the JSON tree ---------------------------------------------------------------------------


def nodes(tree, spans=False):
    """Every ``(path, value)`` of the tree, in document order (iteratively: a tree may nest thousands deep)."""
    out: list = []
    todo = [((), tree)]
    while todo:
        path, obj = todo.pop()
        out.append((path, obj))
        if isinstance(obj, dict):
            todo.extend(((*path, k), v) for k, v in reversed(obj.items()) if k != "span" or spans)
        elif isinstance(obj, list):
            todo.extend(((*path, i), v) for i, v in reversed(list(enumerate(obj))))
    return out


def get(tree, path):
    for k in path:
        tree = tree[k]
    return tree


def put(tree, path, value):
    if not path:
        return value
    get(tree, path[:-1])[path[-1]] = value
    return tree


def _is_num(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _group(kind: str) -> list[str]:
    for g in KIND_GROUPS:
        if kind in g:
            return g
    return [kind]


def _count(tree, key: str) -> int:
    v = tree.get(key) if isinstance(tree, dict) else None
    return len(v) if isinstance(v, list) else 0


def _expr(c: Chooser, tree, depth: int = 0):
    """A random expression node (valid as to the schema, not necessarily as to the program)."""
    k = c.pick(["Num", "Num", "Ctx", "Attr", "Draw", "Call", "Observable", "Unary", "Binary", "Cond"]
               if depth < 2 else ["Num", "Ctx", "Attr"])
    if k == "Num":
        return {"kind": "Num", "value": c.pick(NUMBERS)}
    if k == "Ctx":
        return {"kind": "Ctx", "name": c.pick(CONTEXT)}
    if k == "Attr":
        return {"kind": "Attr", "slot": c.int(0, max(_count(tree, "attributes") - 1, 0))}
    if k in ("Draw", "Call"):
        name = c.pick(DRAWS if k == "Draw" else FUNCTIONS)
        n = _ARITY[name if k == "Call" else "~" + name]
        if c.int(0, 7) == 0:  # mostly the right number of arguments, sometimes not
            n = c.int(0, 3)
        args = [_expr(c, tree, depth + 1) for _ in range(n)]
        return {"kind": k, "dist" if k == "Draw" else "fn": name, "args": args}
    if k == "Observable":
        name = c.pick(OBSERVABLES)
        pool = name in ("used", "free", "cachedin", "holders", "queued")
        if c.int(0, 7) == 0:
            pool = not pool
        if pool and _count(tree, "pools"):
            target = {"kind": "PoolRef", "pool": c.int(0, _count(tree, "pools") - 1)}
        else:
            target = {"kind": "StageRef", "stage": c.int(0, max(_count(tree, "stages") - 1, 0))}
        if c.int(0, 3) == 0:
            target["index"] = _expr(c, tree, depth + 1)
        n = 2 if name == "price" else 0
        if c.int(0, 7) == 0:
            n = c.int(0, 2)
        return {"kind": "Observable", "name": name, "target": target,
                "args": [_expr(c, tree, depth + 1) for _ in range(n)]}
    if k == "Unary":
        return {"kind": "Unary", "op": c.pick(["-", "!"]), "arg": _expr(c, tree, depth + 1)}
    if k == "Binary":
        return {"kind": "Binary", "op": c.pick(BINARY), "lhs": _expr(c, tree, depth + 1),
                "rhs": _expr(c, tree, depth + 1)}
    return {"kind": "Cond", "test": _expr(c, tree, depth + 1), "then": _expr(c, tree, depth + 1),
            "orelse": _expr(c, tree, depth + 1)}


_ARITY = {"min": 2, "max": 3, "sum": 2, "abs": 1, "floor": 1, "ceil": 1, "sqrt": 1, "exp": 1, "ln": 1, "pow": 2,
          "~exp": 1, "~det": 1, "~uniform": 2, "~erlang": 2, "~h2": 2, "~bernoulli": 1}

OPS = ["number", "number", "number", "index", "index", "type", "drop", "drop", "dup", "dup", "swap",
       "dropkey", "addkey", "kind", "transplant", "transplant", "transplant", "expr", "expr", "expr",
       "span", "run", "extension"]


def _mutate_once(c: Chooser, tree):
    op = c.pick(OPS)
    all_nodes = nodes(tree)
    if op == "number":
        cands = [(p, v) for p, v in all_nodes if p and _is_num(v)]
        if cands:
            p, _ = c.pick(cands)
            return put(tree, p, copy.deepcopy(c.pick(NUMBERS if c.int(0, 3) else NOT_NUMBERS)))
    elif op == "index":
        cands = [(p, v) for p, v in nodes(tree, spans=True) if p and p[-1] in INDEX_KEYS]
        if cands:
            p, v = c.pick(cands)
            counts = [_count(tree, k) for k in ("attributes", "pools", "stages", "observes")]
            return put(tree, p, c.pick(INDICES + counts + [c2 + 1 for c2 in counts]))
    elif op == "type":
        p, _ = c.pick(all_nodes[1:])
        return put(tree, p, copy.deepcopy(c.pick(OTHER)))
    elif op in ("drop", "dup", "swap"):
        cands = [(p, v) for p, v in all_nodes if isinstance(v, list) and v]
        if cands:
            _, lst = c.pick(cands)
            i = c.int(0, len(lst) - 1)
            if op == "drop":
                del lst[i]
            elif op == "dup":
                lst.insert(i, copy.deepcopy(lst[i]))
            else:
                j = c.int(0, len(lst) - 1)
                lst[i], lst[j] = lst[j], lst[i]
    elif op == "dropkey":
        cands = [v for p, v in all_nodes if isinstance(v, dict) and v]
        if cands:
            d = c.pick(cands)
            del d[c.pick(sorted(d))]
    elif op == "addkey":
        cands = [v for p, v in all_nodes if isinstance(v, dict)]
        d = c.pick(cands)
        d[c.pick(["extra", "span", "index", "reserve", "chunk", "kind", "value"])] = copy.deepcopy(
            c.pick(OTHER))
    elif op == "kind":
        cands = [v for p, v in all_nodes if isinstance(v, dict) and "kind" in v]
        if cands:
            d = c.pick(cands)
            d["kind"] = c.pick(_group(d["kind"]) if c.int(0, 3) else ALL_KINDS)
    elif op == "transplant":
        cands = [(p, v) for p, v in all_nodes if p and isinstance(v, dict) and "kind" in v]
        if cands:
            p, v = c.pick(cands)
            group = _group(v["kind"])
            same = [w for _, w in cands if w.get("kind") in group]
            return put(tree, p, copy.deepcopy(c.pick(same)))
    elif op == "expr":
        cands = [p for p, v in all_nodes if p and isinstance(v, dict) and v.get("kind") in EXPR_KINDS]
        if cands:
            return put(tree, c.pick(cands), _expr(c, tree))
    elif op == "span":
        cands = [p for p, v in nodes(tree, spans=True) if p and p[-1] == "span"]
        if cands:
            span = [c.pick(["", "/", "nowhere.sq", "examples", "x\ny"]), c.pick(INDICES), c.pick(INDICES)]
            return put(tree, c.pick(cands), span)
    elif op == "extension":  # a stage kind or a policy as a plugin's node: a registered name or not
        cands = [p for p, v in all_nodes if p and p[-1] in ("kind", "evict", "preempt") and isinstance(v, dict)]
        if cands:
            name = c.pick(["Fifo", "Ps", "Delay", "Step", "EvictLru", "EvictBy", "PreemptBy", "PreemptNone",
                           "nope", "", "maxmin"])
            ext = {"kind": "Extension", "name": name, "params": copy.deepcopy(c.pick(OTHER))}
            return put(tree, c.pick(cands), ext)
    elif op == "run":
        run = tree.setdefault("run", {})
        if isinstance(run, dict):
            run[c.pick(["horizon", "warmup", "seed", "arrivals"])] = c.pick(NUMBERS + NOT_NUMBERS[:6])
    return tree


def _dumps(tree) -> str:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))  # a hostile tree nests up to a few thousand deep
    try:
        try:
            text = json.dumps(tree, allow_nan=False)
        except RecursionError:
            # json's C encoder nests only as deep as the interpreter's C stack allowance (1 500 on Python 3.12,
            # whatever the recursion limit): its pure-Python encoder, which makes the same text, is not bound by it
            text = "".join(json.JSONEncoder(allow_nan=False).iterencode(tree))
    finally:
        sys.setrecursionlimit(limit)
    return text.replace(json.dumps(_HUGE), "1e400").replace(json.dumps(_NEG_HUGE), "-1e400")


# -- hostile shapes: deep nesting, huge sizes, long sums, bytes that are not UTF-8 ---------------------------

#: nesting depths around the limits (blocks 32, expressions 64, Python's 20 blocks and ~100 parentheses,
#: the parsed program's 1 000, msgspec's and the walkers' recursion)
DEPTHS = [1, 2, 8, 9, 20, 21, 31, 32, 33, 63, 64, 65, 100, 200, 999, 1000, 1001, 3000]
#: family sizes, caps and term counts around the limits (100 000 pools or stages, 10 000 terms) and far out
SIZES = [1, 2, 200, 1000, 9999, 10000, 10001, 10**5, 10**5 + 1, 10**9, 10**20, 2**63 - 1, 2**64, 1e5, 1e9, 1e20,
         1e308, _HUGE, "inf", 0, -1, 0.5]
HUGE_NUMBERS = [1e308, -1e308, 1e-308, 5e-324, 1e20, 2**53 + 1, 2**63 - 1, 2**64, _HUGE, _NEG_HUGE, "inf", "-inf"]
#: bytes that are not UTF-8 (a lone continuation byte, an overlong form, a surrogate, a truncated sequence…)
BAD_BYTES = [b"\x80", b"\xff", b"\xfe", b"\xc0\x80", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xe2\x82",
             b"\xf4\x90\x80\x80", b"\x00", b"\xef\xbb\xbf"]


def _wrap_expr(c: Chooser, e, depth: int):
    """``e`` inside ``depth`` operators, calls, conditionals and draws."""
    shape = c.pick(["Unary", "Binary", "Cond", "Call", "Draw", "mixed"])
    for _ in range(depth):
        k = c.pick(["Unary", "Binary", "Cond", "Call", "Draw"]) if shape == "mixed" else shape
        if k == "Unary":
            e = {"kind": "Unary", "op": "-", "arg": e}
        elif k == "Binary":
            e = {"kind": "Binary", "op": c.pick(["+", "*", "-"]),
                 "lhs": e, "rhs": {"kind": "Num", "value": 1}}
        elif k == "Cond":
            e = {"kind": "Cond", "test": {"kind": "Num", "value": 1}, "then": e, "orelse": {"kind": "Num", "value": 0}}
        elif k == "Call":
            e = {"kind": "Call", "fn": "abs", "args": [e]}
        else:
            e = {"kind": "Draw", "dist": "det", "args": [e]}
    return e


def _wrap_block(c: Chooser, tree, body: list, depth: int) -> list:
    """``body`` inside ``depth`` loops, branches and holds (holds only where there is a pool)."""
    kinds = ["Loop", "Branch"] + (["Hold"] if _count(tree, "pools") else [])
    shape = c.pick([*kinds, "mixed"])
    for _ in range(depth):
        k = c.pick(kinds) if shape == "mixed" else shape
        if k == "Loop":
            body = [{"kind": "Loop", "body": body + [{"kind": "End"}]}]
        elif k == "Branch":
            body = [{"kind": "Branch", "guard": {"kind": "Num", "value": c.pick([0, 1, 1])}, "then": body}]
        else:
            pool = {"kind": "PoolRef", "pool": c.int(0, _count(tree, "pools") - 1)}
            body = [{"kind": "Hold", "pools": [{"pool": pool, "units": {"kind": "Num", "value": 1}}], "body": body}]
    return body


def _hostile_once(c: Chooser, tree, deep: bool = True):
    op = c.pick(["deep-expr", "deep-expr", "deep-block", "deep-block", "size", "size", "cap", "number", "sum"]
                if deep else ["size", "cap", "number"])
    all_nodes = nodes(tree)
    if op == "deep-expr" or op == "sum":
        cands = [p for p, v in all_nodes if p and isinstance(v, dict) and v.get("kind") in EXPR_KINDS]
        if cands:
            p = c.pick(cands)
            if op == "sum":  # the flat node of `sum j in n (e)`: its terms as arguments
                n = c.pick([0, 1, 2, 200, 1000, 9999, 10000, 10001, 20000])
                term = copy.deepcopy(get(tree, p))
                return put(tree, p, {"kind": "Call", "fn": "sum", "args": [term] * n})
            return put(tree, p, _wrap_expr(c, copy.deepcopy(get(tree, p)), c.pick(DEPTHS)))
    elif op == "deep-block":
        cands = [v for p, v in all_nodes if isinstance(v, list) and v and isinstance(v[0], dict)
                 and v[0].get("kind") in STMT_KINDS]
        if cands:
            lst = c.pick(cands)
            i = c.int(0, len(lst) - 1)
            j = c.int(i, len(lst))
            lst[i:j] = _wrap_block(c, tree, lst[i:j], c.pick(DEPTHS))
    elif op in ("size", "cap"):
        cands = [v for p, v in all_nodes if p and p[-2:-1] in (("pools",), ("stages",)) and isinstance(v, dict)]
        if cands:
            d = c.pick(cands)
            key = "cap" if op == "cap" and _is_pool(d) else "size"
            d[key] = c.pick(SIZES if key == "size" else HUGE_NUMBERS + SIZES)
            if key == "size" and c.int(0, 1):
                d["array"] = True
    else:
        cands = [(p, v) for p, v in all_nodes if p and _is_num(v)]
        if cands:
            p, _ = c.pick(cands)
            return put(tree, p, c.pick(HUGE_NUMBERS))
    return tree


def _is_pool(d: dict) -> bool:
    return "kind" not in d  # a stage has a kind, a pool has none


def _bad_bytes(c: Chooser, data: bytes) -> bytes:
    for _ in range(c.int(1, 3)):
        i = c.int(0, len(data))
        data = data[:i] + c.pick(BAD_BYTES) + data[i:]
    return data


def mutate(c: Chooser, name: str | None = None) -> tuple[str, str | bytes]:
    """``(program name, mutated IR JSON)``: one to three mutations, sometimes a truncation; one time in
    four a hostile shape (:func:`_hostile_once`: deep nesting, huge sizes and numbers, long sums) among
    them, and sometimes bytes that are not UTF-8 (then the JSON is bytes, else text)."""
    ir = programs()
    name = name or c.pick(sorted(ir))
    tree = json.loads(ir[name])
    hostile = c.int(0, 3) == 0
    for _ in range(c.int(1, 3)):
        tree = _hostile_once(c, tree, deep=False) if hostile and c.int(0, 1) == 0 else _mutate_once(c, tree)
    if hostile:
        tree = _hostile_once(c, tree)
    text = _dumps(tree)
    if c.int(0, 15) == 0:
        text = text[: c.int(0, len(text) - 1)]
    if c.int(0, 11) == 0:
        return name, _bad_bytes(c, text.encode())
    return name, text


# -- guarding and running -------------------------------------------------------------------------------------


#: the timer of the guards (the CPU time of the process, user and system) and the signal it sends
TIMER = signal.ITIMER_PROF
SIGNAL = signal.SIGPROF


class OverTime(BaseException):  # noqa: N818 - not an error of the program: the guard of a test's time
    """A guarded step took more than its seconds of CPU time (:func:`cpu_limit`)."""


@contextmanager
def cpu_limit(seconds: float):
    """Raise :class:`OverTime` in the body after ``seconds`` of CPU time, the address space capped (:func:`_limit_memory`).

    The timer, the cap and the :data:`SIGNAL` handler are restored whenever the guard ends (``restore``,
    which the ``finally`` and the alarm both call, each step of it safe to repeat): the timer is disarmed
    first, before the handler is given back, because SIGPROF's default action ends the process (a timer
    left armed killed the test run's worker at a later, unrelated test, with no message). The cap is set
    inside the ``try`` and before the timer is armed; the alarm raises at most once, and an alarm handled
    in a gc callback arms the timer again only while the guard has not begun to end (so an alarm in the
    ``finally``, or anywhere before it, cannot leave the timer, the cap or the handler behind).
    """
    old = signal.getsignal(SIGNAL)
    saved: list = []  # the limits before the cap, once the cap may be set
    ending = fired = False

    def restore():
        signal.setitimer(TIMER, 0)
        while saved:  # set, then forgotten: the restore of an alarm that comes between the two sets it again
            resource.setrlimit(resource.RLIMIT_AS, saved[-1])
            saved.pop()
        signal.signal(SIGNAL, old)

    def on_alarm(signum, frame):
        nonlocal fired
        if fired:
            return  # OverTime is on its way (this alarm came again as the guard was ending)
        if frame is not None and any(getattr(cb, "__code__", None) is frame.f_code for cb in gc.callbacks):
            # the alarm came inside a gc callback (hypothesis keeps one): an exception raised there never
            # reaches the body, Python only reports it as unraisable, so try again a millisecond later,
            # unless the guard is ending (the body is over; armed again then, it would outlive the guard)
            if not ending:
                signal.setitimer(TIMER, 0.001)
            return
        fired = True
        restore()
        raise OverTime

    try:
        _limit_memory(saved)
        signal.signal(SIGNAL, on_alarm)
        signal.setitimer(TIMER, seconds)
        yield
    finally:
        ending = True
        restore()


#: the bound of one compile or decode in a fuzz test, in seconds of CPU time (the slowest hostile sources,
#: thousands of lines, compile in a few seconds)
COMPILE_CPU = 30.0


@contextmanager
def bounded(what: str, seconds: float | None = None):
    """Guard a step that ends fast whatever its input (a compile, an IR file's decoding): the body runs
    under :func:`cpu_limit`, with the address space capped, and one that takes longer than ``seconds``
    (default :data:`COMPILE_CPU`) fails the test (an :class:`AssertionError` naming ``what``), as one that
    wants more memory does (a :class:`MemoryError`), instead of holding the machine."""
    seconds = COMPILE_CPU if seconds is None else seconds
    try:
        with cpu_limit(seconds):
            yield
    except OverTime:
        raise AssertionError(f"{what} took more than {seconds:g} s of CPU time") from None


#: the address space a guarded run may add: a program that wants more fails the test with a MemoryError
#: (rather than the machine killing the test run)
MEMORY = 2 << 30


def _limit_memory(saved: list) -> None:
    """Cap the address space at its size now plus :data:`MEMORY`, appending the limits before to ``saved``
    first (nothing when there is no /proc, or the limit is already lower)."""
    try:
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError):
        return
    before = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + MEMORY
    if before[0] != resource.RLIM_INFINITY and before[0] <= cap:
        return
    saved.append(before)
    resource.setrlimit(resource.RLIMIT_AS, (cap, before[1]))


#: what a command a fuzz test starts (:func:`capped`) may map: the interpreter and serq, and MEMORY more
CHILD_MEMORY = (1 << 30) + MEMORY


def capped(args: list[str]) -> list[str]:
    """``args`` as a command whose address space is capped at :data:`CHILD_MEMORY` (set in the new process
    by the interpreter, which then executes ``args``: no code runs between fork and exec in the test)."""
    cap = "import os, resource, sys; resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]),) * 2); " \
          "os.execv(sys.argv[2], sys.argv[2:])"
    return [sys.executable, "-c", cap, str(CHILD_MEMORY), *args]


def shortened(program: N.Program) -> N.Program:
    """The program with at most :data:`HORIZON` of simulated time, or at most :data:`ARRIVALS` arrivals."""
    rs = program.run
    h = "inf" if rs.horizon is None else rs.horizon
    if rs.arrivals is not None:
        horizon = h if h == "-inf" or (h != "inf" and h <= 1e4) else 1e4
        arrivals = min(rs.arrivals, ARRIVALS)
    else:
        horizon = h if h == "-inf" or (h != "inf" and h <= HORIZON) else HORIZON
        arrivals = None
    warmup = rs.warmup
    if isinstance(horizon, float) and math.isfinite(horizon) and warmup >= horizon > 0:
        warmup = horizon / 10
    return msgspec.structs.replace(program, run=msgspec.structs.replace(
        rs, horizon=horizon, warmup=warmup, arrivals=arrivals))


def is_user_error(e: BaseException) -> bool:
    return bool(getattr(type(e), "serq_user_error", False))


def check_message(e: BaseException) -> str:
    msg = str(e)
    assert msg, f"{type(e).__name__} with an empty message"
    assert "error:" in msg.splitlines()[0], msg
    assert "Traceback" not in msg, msg
    return msg


def check_ir_message(msg: str, name: str) -> None:
    """An IR file's error: one line naming the file (a schema fault at its JSON path), or, for text that is
    not JSON or not UTF-8, ``NAME:LINE:COL: error: …``, the line quoted (indented by two, as a source's) and a
    caret under the column."""
    lines = msg.rstrip("\n").split("\n")
    if msg.startswith(f"error: {name}: "):
        assert len(lines) == 1, msg
        return
    assert re.match(re.escape(name) + r":\d+:\d+: error: ", lines[0]), msg
    assert len(lines) == 3 and lines[1].startswith("  ") and lines[2].startswith("  ") and lines[2].strip() == "^", msg
    assert lines[1].isprintable(), msg


def outcome(text: str | bytes, name: str = "<fuzz>", *, check_invariants: bool = False) -> str:
    """``"ir-error"``, ``"sim-error"``, ``"report"`` or ``"slow"``; any other exception propagates."""
    import serq_ir
    import serq_sim
    from serq_ir import IRError
    from serq_report import json_reporter, text_reporter

    try:
        with bounded("decoding the IR"):
            program = serq_ir.decode(text, name=name)
    except IRError as e:
        check_ir_message(check_message(e), name)
        return "ir-error"
    program = shortened(program)
    try:
        with cpu_limit(RUN_CPU):
            report = serq_sim.run(program, check_invariants=check_invariants)
            text_reporter(report, io.StringIO())
            json_reporter(report, io.StringIO())
    except OverTime:
        return "slow"
    except Exception as e:
        if not is_user_error(e):
            raise
        check_message(e)
        return "sim-error"
    return "report"
