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

    It follows control as well as data: a branch whose guard reads live state (an observable, or an attribute
    set from one) decides which of its arms' sets a name holds after it, so where both arms go on, every
    attribute either arm sets is tainted there, by the branch (its position stands for the set); and a loop
    whose body holds such a branch with an arm that ends decides how many times the body runs, so every
    attribute its body sets is tainted in that arm, where the loop stops: the pass the arm runs in is the one
    the guard picked. The way that goes on is taken at every pass, so there a count of the passes (or a
    conversation's length) is the pass's own, whatever the guard read: a session that leaves when the state
    says so, a gateway shedding load (``loop { branch (queued(q) > 20) { end; } … hold q (K + n) … }``),
    reads what its passes set as they set it. (:meth:`run` walks the statements with every such attribute
    tainted at the loop's top, to find what reaches each arm that stops it, and, when there is such an arm,
    again with that taint in those arms only.) A set inside an arm is not tainted by its guard: there the
    arm is known, and the value is the set's.

    What it finds: per hold (by id), the state reaching its header (``headers``); per pool family, the states
    of the sessions waiting in its queue, the headers of the holds whose first pool it is (``waiting``), and
    of the sessions holding it, anywhere in the bodies of the holds that name it (``holding``); per stage
    family, the states at the runs on it (``running``); and per tainting set, what it read (``sources``:
    ``("obs", "used(kv)")`` or ``("attr", "t", where t's set was)``), for the chain a message names."""

    def __init__(self, turn: list[Any], stops: dict[int, tuple[bool, State]] | None = None):
        self.turn = turn
        #: None on the first walk, which taints a loop's sets at its top; on the second, per branch on live
        #: state one arm of which ends in a loop (by id), which arm (True: its first) and the state the first
        #: walk found at the branch, whose taint that arm starts from
        self.stops = stops
        #: what the first walk finds for the second (:attr:`stops`)
        self.found: dict[int, tuple[bool, State]] = {}
        self.headers: dict[int, State] = {}
        self.waiting: dict[str, State] = {}
        self.holding: dict[str, State] = {}
        self.running: dict[str, State] = {}
        self.sources: dict[Pos, tuple[Any, ...]] = {}
        #: the states seen inside the holds being analysed (innermost last), for their re-execution
        self.inside: list[list[State]] = []
        #: per loop being analysed (innermost last), its branches on live state one arm of which ends: each
        #: branch's position and what its guard read
        self.deciders: list[list[tuple[Pos, tuple[Any, ...]]]] = []
        #: the `turn` block's effect per state entering it (:meth:`_turn`)
        self.turns: dict[frozenset[tuple[str, Pos]], tuple[State | None, State | None, list[Any]]] = {}

    def run(self, init: list[Any], session: list[Any]) -> Taint:
        """The analysis of the program: this walk, and when a loop has an arm that stops it on live state, a
        second one with that arm's taint where it belongs (:attr:`stops`), whose findings are the answer."""
        self.block(session, self.block(init, {}))
        if self.stops is not None or not self.found:
            return self
        second = Taint(self.turn, self.found)
        second.sources = dict(self.sources)
        second.block(session, second.block(init, {}))
        return second

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

    @staticmethod
    def _read(value: Any, state: State) -> tuple[Any, ...] | None:
        """What ``value`` reads of live state: ``("obs", "used(kv)")`` for an observable (the first one),
        else ``("attr", "t", where t's set was)`` for an attribute tainted in ``state``, else None."""
        source = None
        for x in A.walk_expr(value):
            if type(x) is A.Call and x.name in LIVE_OBSERVABLES:
                return ("obs", _shown(x))
            if source is None and type(x) is A.Var and x.simple in state:
                source = ("attr", x.simple, state[x.simple])
        return source

    #: how direct a source is, for the one a set's position keeps (an observable, an attribute, a guard)
    _RANK = {"obs": 0, "attr": 1, "guard": 2}

    def _source(self, pos: Pos, source: tuple[Any, ...]) -> None:
        known = self.sources.get(pos)
        if known is None or self._RANK[source[0]] < self._RANK[known[0]]:
            self.sources[pos] = source

    def _set(self, name: str, value: Any, pos: Pos, state: State) -> State:
        state = dict(state)
        source = self._read(value, state)
        if source is None:
            state.pop(name, None)
            return state
        state[name] = pos
        self._source(pos, source)
        return state

    def _sets(self, stmts: list[Any]) -> list[str]:
        """The attributes ``stmts`` may `set` (through `turn;`, the `turn` block's too), in source order."""
        names: list[str] = []
        for s in A.walk_stmts(stmts):
            if type(s) is A.SSet:
                names.append(s.name)
            elif type(s) is A.STurn:
                names.extend(x.name for x in A.walk_stmts(self.turn) if type(x) is A.SSet)
        return names

    def _decided(self, state: State | None, names: list[str], at: Pos, guard: tuple[Any, ...]) -> State | None:
        """``state`` with every one of ``names`` not already tainted tainted by the branch at ``at`` whose
        guard read ``guard``."""
        if state is None or not names:
            return state
        state = dict(state)
        for n in names:
            if n not in state:
                state[n] = at
        self._source(at, ("guard", guard))
        return state

    def _turn(self, state: State) -> State | None:
        """``turn;`` from ``state``: the `turn` block walked once per state entering it, not at every
        ``turn;`` (a session of n turns and a block of n sets took n² steps). What a walk leaves besides the
        state out depends only on the state in: the tables it joins into, and a second join of the same
        state changes nothing; the states seen inside it, kept as their join (a hold joins all it sees); and
        the branches deciding the loop around the ``turn;``, kept to be told to the loop of each use."""
        key = frozenset(state.items())
        known = self.turns.get(key)
        if known is None:
            inside, outer = self.inside, self.deciders
            seen: list[State] = []
            deciders: list[tuple[Pos, tuple[Any, ...]]] = []
            self.inside, self.deciders = [seen], [deciders]
            try:
                out = self.block(self.turn, state)
            finally:
                self.inside, self.deciders = inside, outer
            joined: State | None = None
            for st in seen:
                joined = self.join(joined, st)
            known = self.turns[key] = (out, joined, deciders)
        out, joined, deciders = known
        self.see(joined)
        if self.deciders:
            self.deciders[-1].extend(deciders)
        return None if out is None else dict(out)

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
            return self._turn(state)
        if t is A.SEnd:
            return None
        if t is A.SBranch:
            guard = self._read(s.guard, state)
            stop = self.stops.get(id(s)) if self.stops is not None and guard is not None else None
            # the arm that stops the loop starts from what the first walk found here, a loop's sets tainted
            then = self.block(s.then, self.join(state, stop[1]) if stop is not None and stop[0] else state)
            orelse = self.block(s.orelse, self.join(state, stop[1]) if stop is not None and not stop[0] else state)
            out = self.join(then, orelse)
            if guard is not None:
                if then is not None and orelse is not None:  # which arm ran decides what the sets left
                    out = self._decided(out, self._sets(s.then) + self._sets(s.orelse), s.pos, guard)
                elif (then is None) != (orelse is None) and self.deciders and self.stops is None:
                    self.deciders[-1].append((s.pos, guard))  # whether the loop goes on, or stops here
                    known = self.found.get(id(s))
                    self.found[id(s)] = (then is None, state if known is None else self.join(known[1], state) or {})
            return out
        if t is A.SLoop:
            entry = state
            names: list[str] | None = None  # (what the body sets: found when a branch decides the loop)
            while True:
                self.deciders.append([])
                try:
                    end = self.block(s.body, state)
                    deciders = self.deciders[-1]
                finally:
                    self.deciders.pop()
                nxt = self.join(entry, end)
                for at, guard in deciders:  # how many times the body ran decides what its sets left
                    if names is None:
                        names = self._sets(s.body)
                    nxt = self._decided(nxt, names, at, guard)
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

    def _at(self, pos: Pos) -> str:
        """Where a tainted value was set: ``set at 4:3``, or ``set under the branch at 6:3``
        (:meth:`_decided`)."""
        guard = self.sources.get(pos, ("",))[0] == "guard"
        return f"set {'under the branch ' if guard else ''}at {pos.line}:{pos.col}"

    def chain(self, name: str, at: Pos) -> str:
        """Where the value of ``name`` set at ``at`` came from, for a message: `` (at 4:3)`` for a set that
        reads an observable, `` (at 5:3 from `t`, set at 4:3 from `used(kv)`)`` through attributes, and
        `` (under the branch at 6:3, whose guard reads `t`, set at 4:3 from `used(kv)`)`` through a branch
        (or a loop) on live state that decided it."""
        steps: list[str] = []
        seen: set[Pos] = set()
        pos = at
        while pos not in seen:
            seen.add(pos)
            source = self.sources.get(pos)
            if source is None:
                break
            how = "from"
            if source[0] == "guard":
                how, source = ", whose guard reads", source[1]
            if source[0] == "obs":
                if steps or how != "from":
                    steps.append(f"{how} `{source[1]}`")
                break
            steps.append(f"{how} `{source[1]}`, {self._at(source[2])}")
            pos = source[2]
        head = self._at(at).removeprefix("set ")
        if not steps:
            return f" ({head})"
        return f" ({head}" + "".join(s if s.startswith(",") else " " + s for s in steps) + ")"


def stale_message(name: str, chain: str, where: str, when: str, instead: str, at: Pos | None = None) -> str:
    """The lint's words: ``name`` set from live state (``chain``, :meth:`Taint.chain`) and read in ``where``,
    which is read ``when``, later than the set; what to write ``instead``. ``at``: the read, whose queue
    entry's own names are said as the entry writes them (:func:`as_written`)."""
    return (f"`{as_written(name, at)}` is set from live pool or stage state{as_written(chain, at)} and read in "
            f"{where}: {when}; {instead}")


def as_written(text: str, at: Pos | None) -> str:
    """``text``, a name or the words of a :meth:`Taint.chain`, with the names of a queue's entry as the entry
    writes them when ``at`` is in one (the innermost expansion of its place is ``Q.verb``): the queue sugar
    gives the entry's attributes and pools the long names ``Q.g`` and ``Q.kv`` (a member: ``Q.kv[…]``), which
    the entry writes ``g`` and ``kv``; the lint said `` `D.g` is set from live pool or stage state (… from
    `used(D.kv[…])`)`` of a ``set g = used(kv);`` in ``D.decode``. The note of the expansion names the entry."""
    link, entry = (at.uses if at is not None else None), None
    while link is not None:  # (outermost first: the last is the body the text is written in)
        entry, link = link[1], link[2]
    if entry is None or "." not in entry:
        return text
    import re

    queue = re.escape(entry.partition(".")[0])
    return re.sub(rf"(?<![\w.]){queue}\.(\w+)(?:\[…\])?", r"\1", text)


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
