"""The first lint of language.txt §3 (Lints): an attribute set from live pool or stage state (``set t =
used(kv);``, or from an attribute so set) and read later than the set, where the state has moved on. A hold's
header is read at admission, not when the session queued: such a read there is an error. The same trap is
laid wherever a session's attribute is read by the scheduler later than the statements run (§3, *Waiting
selection*, *Stages*): a pool's queue keys, read at every selection while the session waits; its preemption
keys, read when a growth picks a victim among the holders; a step stage's serve keys, read for every resident
at every iteration. Those are warned of, with the same words (docs/language.md, "The first lint follows the
flow of the statements").

:class:`Taint` is the analysis, flow-sensitive, in execution order; :func:`stale_message` the words, which
name the chain of sets from the read attribute down to the observable (``u`` from ``t``, ``t`` from
``used(kv)``)."""

from __future__ import annotations

from typing import Any

from . import ast as A
from .diagnostics import Pos
from .names import LIVE_OBSERVABLES

#: a state: the attributes whose value here was set from live state, each with the set that did it
State = dict[str, Pos]


def _shown(e: Any) -> str:
    """An observable's call as written, near enough to find it: ``used(kv)``, ``cachedin(kv[j])``."""
    if type(e) is A.Num:
        return f"{e.value:g}"
    if type(e) is A.Var:
        return ".".join(n if ix is None else f"{n}[{_shown(ix)}]" for n, ix in e.parts)
    if type(e) is A.Call:
        return f"{e.name}({', '.join(_shown(a) for a in e.args)})"
    return "…"


class Taint:
    """The flow of attributes set from live pool or stage state to the places that read them later: a
    may-analysis over the statements in execution order. A set from anything else, and a ``choose``, gives
    the attribute a value of another kind; a branch joins its arms; a loop, its entry and its body's end; a
    hold's header also sees every state inside its body, since a preemption there executes the hold again;
    ``turn;`` runs the workload's ``turn`` block, and ``end;`` ends the flow. A state is ``{name: the set's
    position}``, ``None`` where nothing flows.

    What it finds: per hold (by id), the state reaching its header (``headers``); per pool family, the states
    of the sessions waiting in its queue, the headers of the holds whose first pool it is (``waiting``), and
    of the sessions holding it, anywhere in the bodies of the holds that name it (``holding``); per stage
    family, the states at the runs on it (``running``); and per tainting set, what it read (``sources``:
    ``("obs", "used(kv)")`` or ``("attr", "t", where t's set was)``), for the chain a message names."""

    def __init__(self, turn: list[Any]):
        self.turn = turn
        self.headers: dict[int, State] = {}
        self.waiting: dict[str, State] = {}
        self.holding: dict[str, State] = {}
        self.running: dict[str, State] = {}
        self.sources: dict[Pos, tuple[Any, ...]] = {}
        #: the states seen inside the holds being analysed (innermost last), for their re-execution
        self.inside: list[list[State]] = []

    def run(self, init: list[Any], session: list[Any]) -> Taint:
        self.block(session, self.block(init, {}))
        return self

    @staticmethod
    def join(a: State | None, b: State | None) -> State | None:
        if a is None:
            return None if b is None else dict(b)
        if b is None:
            return dict(a)
        out = dict(a)
        for k, p in b.items():
            q = out.get(k)
            if q is None or (p.line, p.col) < (q.line, q.col):
                out[k] = p
        return out

    def _into(self, table: dict[str, State], name: str, state: State) -> None:
        table[name] = self.join(table.get(name), state) or {}

    def see(self, state: State | None) -> None:
        if state is not None:
            for seen in self.inside:
                seen.append(state)

    def block(self, stmts: list[Any], state: State | None) -> State | None:
        for s in stmts:
            state = self.stmt(s, state)
            self.see(state)
        return state

    def _set(self, name: str, value: Any, pos: Pos, state: State) -> State:
        state = dict(state)
        source = None
        for x in A.walk_expr(value):
            if type(x) is A.Call and x.name in LIVE_OBSERVABLES:
                source = ("obs", _shown(x))
                break
            if source is None and type(x) is A.Var and x.simple in state:
                source = ("attr", x.simple, state[x.simple])
        if source is None:
            state.pop(name, None)
            return state
        state[name] = pos
        known = self.sources.get(pos)
        if known is None or known[0] == "attr" and source[0] == "obs":
            self.sources[pos] = source
        return state

    def stmt(self, s: Any, state: State | None) -> State | None:
        if state is None:
            return None
        t = type(s)
        if t is A.SSet:
            return self._set(s.name, s.value, s.pos, state)
        if t is A.SChoose:
            state = dict(state)
            state.pop(s.name, None)
            return state
        if t is A.STurn:
            return self.block(self.turn, state)
        if t is A.SEnd:
            return None
        if t is A.SBranch:
            return self.join(self.block(s.then, state), self.block(s.orelse, state))
        if t is A.SLoop:
            entry = state
            while True:
                end = self.block(s.body, state)
                nxt = self.join(entry, end)
                if nxt == state:
                    return state
                state = nxt
        if t is A.SRun:
            for v in s.stages:
                self._into(self.running, v.dotted, state)
        if t is A.SHold:
            header = state
            while True:
                self.inside.append([])
                try:
                    end = self.block(s.body, header)
                    seen = self.inside[-1]
                finally:
                    self.inside.pop()
                nxt = header
                for st in seen:
                    nxt = self.join(nxt, st)
                if nxt == header:
                    break
                header = nxt
            prev = self.headers.get(id(s))
            self.headers[id(s)] = header if prev is None else self.join(prev, header)
            if s.pools:
                self._into(self.waiting, s.pools[0].ref.dotted, header)
            for p in s.pools:
                self._into(self.holding, p.ref.dotted, header)
            return end
        for b in A.blocks_of(s):
            state = self.join(state, self.block(b, state))
        return state

    def chain(self, name: str, at: Pos) -> str:
        """Where the value of ``name`` set at ``at`` came from, for a message: `` (at 4:3)`` for a set that
        reads an observable, `` (at 5:3 from `t`, set at 4:3 from `used(kv)`)`` through attributes."""
        steps: list[str] = []
        seen: set[Pos] = set()
        pos = at
        while pos not in seen:
            seen.add(pos)
            source = self.sources.get(pos)
            if source is None or source[0] == "obs":
                if steps and source is not None:
                    steps.append(f"from `{source[1]}`")
                break
            steps.append(f"from `{source[1]}`, set at {source[2].line}:{source[2].col}")
            pos = source[2]
        if not steps:
            return f" (at {at.line}:{at.col})"
        return f" (at {at.line}:{at.col} " + " ".join(steps) + ")"


def stale_message(name: str, chain: str, where: str, when: str, instead: str) -> str:
    """The lint's words: ``name`` set from live state (``chain``, :meth:`Taint.chain`) and read in ``where``,
    which is read ``when``, later than the set; what to write ``instead``."""
    return (f"`{name}` is set from live pool or stage state{chain} and read in {where}: {when}; "
            f"{instead}")


#: where a session's attribute is read later than the statements, and what to say of each: the place, when it
#: is read and when the set was, what to write instead
HEADER = ("a hold's header", "the header is read at admission, the set when the session queued",
          "read the state in `at admission (…)` instead")
QUEUE_KEY = ("pool `{}`'s queue key", "the key is read at every selection while the session waits, the set "
             "when the session queued", "read the state in the key itself instead")
VICTIM_KEY = ("pool `{}`'s preemption key", "the key is read when a growth picks its victim among the pool's "
              "holders, the set earlier, when the session ran it", "read the state in the key itself instead")
SERVE_KEY = ("step stage `{}`'s serve key", "the key is read for every resident at every iteration, the set "
             "before the run began", "read the state in the key itself instead")
