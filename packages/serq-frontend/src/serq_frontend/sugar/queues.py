"""Queues: a station declared whole (its pools, its stage, its NIC, its entries), entry calls expanded
in place, ``request gw;`` expanded to the gateway's route, and the pull relation between two queues.

What the kernel sees (the contract with the linker and the simulator):

* a queue ``Q[N]``'s pool ``p`` is the program pool ``Q.p`` (a family of N; of one, unindexed, when the
  queue is not a family); its ``serve`` is the stage ``Q``; its ``nic`` the stage ``Q.nic``; a link's
  ``serve … latency x`` the delay stage ``Q.latency``; a relation ``R pull S latency x`` the delay stage
  ``R.nic.latency`` (a family of R's size, declared where the relation is) and the program's ``share``;
* an entry call is the entry's body in place: parameters substituted, own pools and stage indexed by
  the call's member, ``self`` the member index, names the body sets renamed ``Q.x`` (a gateway keeps
  the session's names), ``mark x;`` written ``set Q.x = now;``, and ``from S[k]`` bound to the pool S's
  entries lease, member k;
* a ``transfer`` without ``on`` in an entry of a queue that pulls is the read:
  ``run R.nic.latency[j] (x); transfer on S.nic[k], R.nic[j] (…) from S.p[k] to … (…);``, and every
  ``transfer on L[k] …`` naming a link with a latency first runs ``L.latency[k] (x)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .. import ast as A
from ..consts import BadConstant, NotConstant, fold
from ..context import fmt_num
from ..diagnostics import Pos, did_you_mean
from ..names import CONTEXT, OBSERVABLES, TRACE_ATTRIBUTES, declared_name_problem, language_name, takes
from ..parser import _word, grammar_text, name_pos
from . import SugarLayer
from .admission import live_read
from .aggregates import own_index
from .defs import (
    IN_BLOCKS,
    MAX_EXPANDED_DEPTH,
    block_depth,
    param_depths,
    param_reads,
    reads_live,
    shared_size,
    too_deep,
)
from .serving import transfer_problem

#: role -> its entries: (verb, parameters, takes `from`)
ROLES: dict[str, list[tuple[str, int, bool]]] = {
    "gateway": [("route", 0, False)],
    "prefill": [("prefill", 1, False)],
    "decode": [("decode", 1, False), ("decode", 1, True)],
    "link": [("transfer", 1, False)],
}


def _queue_item(b: Any, p: Pos, c: list[Any]) -> A.QueueItem:
    name, size, roles = str(c[0]), c[1], c[2] or []
    q = A.QueueItem(name, size, roles, [], None, None, None, [], p, name_pos=name_pos(b, c[0]))
    stage = 0  # 0 pools, 1 serve/nic, 2 entries
    for it in c[3:]:
        if isinstance(it, A.PoolItem):
            if stage > 0:
                q.order_errors.append((it.pos, f"queue `{name}`: declare its pools first, then its "
                                       "`serve`, then its entries"))
            q.pools.append(it)
        elif isinstance(it, tuple) and it[0] == "serve":
            if stage > 1:
                q.order_errors.append((it[3], f"queue `{name}`: its `serve` comes before its entries"))
            if q.serve is not None:
                q.order_errors.append((it[3], f"queue `{name}` has two `serve`s"))
            stage = max(stage, 1)
            q.serve = it[1]
            q.latency, q.latency_pos = it[2] if it[2] is not None else (None, None)
        elif isinstance(it, tuple) and it[0] == "nic":
            if stage > 1:
                q.order_errors.append((it[2], f"queue `{name}`: its `nic` comes before its entries"))
            if q.nic is not None:
                q.order_errors.append((it[2], f"queue `{name}` has two `nic`s"))
            stage = max(stage, 1)
            q.nic = it[1]
        elif isinstance(it, A.QEntry):
            stage = 2
            q.entries.append(it)
    return q


BUILDERS = {
    "queue_item": _queue_item,
    "roles": lambda b, p, c: [(str(t), Pos(b.file, t.line, t.column)) for t in c],
    "pull_item": lambda b, p, c: A.PullItem(str(c[0]), str(c[1]), c[2], str(c[3]), p),
    "pull_latency": lambda b, p, c: c[0],
    "q_latency": lambda b, p, c: (c[0], p),  # (the wait, and where its clause `latency x` begins)
    "q_pool": lambda b, p, c: A.PoolItem(str(c[0]), c[1], list(c[2:]), p, name_pos(b, c[0])),
    "q_serve": lambda b, p, c: ("serve", c[0], c[1], p),
    "q_nic": lambda b, p, c: ("nic", c[0], p),
    "q_entry": lambda b, p, c: A.QEntry(str(c[0]), [n for n, _ in c[1] or []], c[2], c[3], p,
                                        [at for _, at in c[1] or []]),
    "q_params": lambda b, p, c: [(str(x), Pos(b.file, x.line, x.column)) for x in c if x is not None],
    "q_entry_from": lambda b, p, c: str(c[0]),
    "q_verb": _word,
    "q_target": lambda b, p, c: (str(c[0]), c[1] if len(c) > 1 else None, p),
    "q_from": lambda b, p, c: c[0],
    "q_to": lambda b, p, c: (c[0], c[1]),
    "s_qcall": lambda b, p, c: A.SQCall(c[0][0], c[0][1], str(c[1]), c[2] or [], c[0][2], c[3],
                                        c[4][0] if c[4] else None, c[4][1] if c[4] else None),
    "s_mark": lambda b, p, c: A.SMark(str(c[0]), p),
}


@dataclass(eq=False)
class Queue:
    item: A.QueueItem
    size: int
    family: bool
    roles: list[str]
    pools: list[str]
    entries: dict[tuple[str, bool], A.QEntry]
    locals: dict[tuple[str, bool], set[str]]
    leases: dict[tuple[str, bool], str | None]
    leased: str | None = None
    #: every pool an entry of the queue leases somewhere, in name order (one, for a `from` to take it)
    leased_all: tuple[str, ...] = ()
    pulls: A.PullItem | None = None
    #: the wait before each of its reads, its pull relation's latency; None for none, or a latency of 0
    pull_latency: Any = None
    index: int = 0
    #: a link's wait before each transfer on it (its serve's latency); None for none, or a latency of 0
    latency: Any = None
    nic_declared: bool = False

    @property
    def name(self) -> str:
        return self.item.name

    @property
    def gateway(self) -> bool:
        return "gateway" in self.roles



def _latency(ctx: Any, e: Any, what: str) -> float:
    """A link's or a pull relation's ``latency``, a constant (language.txt: a number or a constant over lets):
    the wait before each transfer on it. ``inf`` is refused at it: every transfer would wait for ever and
    none would finish, with nothing in the run to say why (its sessions hold their pools to the horizon);
    a negative one is the run's refusal (a run's work is not negative), as NaN is the constant's."""
    v = ctx.const(e, what)
    if v == float("inf"):
        raise ctx.error(e.pos, f"{what} is inf{ctx.given(e)}: every transfer would wait for ever before it "
                        "began, and none would finish; a latency is a finite number of seconds (0 for none)")
    return v


def leases_on_every_path(stmts: list[Any]) -> str | None:
    """The pool a block leases on every way through it, or None."""
    for s in stmts:
        if isinstance(s, A.SHold) and s.lease is not None and s.lease.simple:
            return s.lease.simple
        if isinstance(s, A.SHold):
            # a hold's body runs whole on every way through the hold: a lease in it is on every way too
            # (`hold reqs (1) { hold kv (p) { … } lease kv (inf); }`)
            inner = leases_on_every_path(s.body)
            if inner is not None:
                return inner
        if isinstance(s, A.SBranch) or isinstance(s, A.SBranchWith):
            a, b = leases_on_every_path(s.then), leases_on_every_path(s.orelse)
            if a is not None and a == b:
                return a
    return None


def leased_pools(stmts: list[Any]) -> set[str]:
    """Every pool a block leases somewhere."""
    return {s.lease.simple for s in A.walk_stmts(stmts)
            if isinstance(s, A.SHold) and s.lease is not None and s.lease.simple}


def _verb(s: Any, ref: Any = None) -> str:
    """The word of statement ``s`` that names ``ref``: a hold's ``lease`` clause is a lease, not the hold."""
    if ref is not None and isinstance(s, A.SHold) and ref is s.lease:
        return "lease"
    if ref is not None and isinstance(s, (A.SRun, A.SServing)) and ref is s.growing:
        return "growing"
    if isinstance(s, A.SQCall):  # a link's `L.transfer (n) from S to P (m)`
        return "transfer"
    return type(s).__name__[1:].lower()


class QueueRewriter:
    def __init__(self, module: A.Module, ctx: Any):
        self.ctx = ctx
        self.module = module
        self.queues: dict[str, Queue] = {}
        #: whether a `request gw;` may stand here (in the workload's session, outside every entry)
        self.request_ok = False
        #: the entries some statement calls, ``(queue, verb, takes from)`` (:meth:`unset_reads_uncalled`)
        self.called: set[tuple[str, str, bool]] = set()
        self.hidden: set[str] = set()
        #: whether the workload replays a trace (its columns are attributes a parameter may not be named as)
        self.trace = False
        self.globals: set[str] = set()
        #: the program's own pools (a call's `from` may name one outright)
        self.pools: set[str] = set()
        self._kinds: dict[str, str] | None = None
        self._outside: set[str] | None = None
        #: what check_header reads of each entry, by the entry's id (:meth:`_entry_sets`, made once an entry)
        self._entry_facts: dict[int, tuple] = {}
        #: the pull relations seen, each naming the program's share: the first writes it, the others agree
        self.pulled: list[A.PullItem] = []
        #: how deep the blocks being written out nest (:meth:`block`), entries' bodies written out included
        self._nest = 0
        #: each entry's reads of its parameters (defs.param_reads, defs.param_depths), by the entry's id
        self._entry_reads: dict[int, tuple[dict[str, int], tuple[int, dict[str, int]]]] = {}
        for item in module.items:
            if isinstance(item, A.WorkloadItem):
                for w in item.items:
                    if w.kind == "hidden":
                        self.hidden.update(n for n, _ in w.arg)
                    self.trace = self.trace or w.kind == "trace"
            elif isinstance(item, (A.PoolItem, A.StageItem)):
                self.globals.add(item.name)
                if isinstance(item, A.PoolItem):
                    self.pools.add(item.name)

    # -- declarations ------------------------------------------------------------------------------

    def declare(self, item: A.QueueItem, index: int) -> Queue:
        ctx = self.ctx
        if item.order_errors:
            pos, msg = item.order_errors[0]
            raise ctx.error(pos, msg)
        # a queue's name, which a pool reference may take for one of its pools (`blocksize(Q)` for `Q.kv`)
        ctx.notes.setdefault("queues", []).append(item.name)
        roles = []
        for r, rpos in item.roles:
            if r not in ROLES:
                raise ctx.error(rpos, f"`{r}` is not a role{did_you_mean(r, ['gateway', 'prefill', 'decode', 'link'])}: "
                                "the roles are gateway, prefill, decode, link")
            if r in roles:  # (`queue q : prefill, prefill`: a role is played once, as a name is hidden once)
                raise ctx.error(rpos, f"queue `{item.name}` names the role `{r}` twice")
            roles.append(r)
        family = item.size is not None
        size = ctx.const_int(item.size, f"the size of queue `{item.name}`") if family else 1
        if "gateway" in roles and family:
            raise ctx.error(item.pos, f"gateway `{item.name}` is a family; each gateway is a single queue")
        pools = []
        for p in item.pools:
            if p.size is not None:
                raise ctx.error(p.pos, f"`pool {p.name}[…]` in queue `{item.name}`: a queue's pool is the "
                                "member's, one per member; declare the queue a family instead")
            if p.name in pools:
                raise ctx.error(A.name_at(p), f"queue `{item.name}` declares pool `{p.name}` twice")
            pools.append(p.name)
        entries: dict[tuple[str, bool], A.QEntry] = {}
        locals_: dict[tuple[str, bool], set[str]] = {}
        leases: dict[tuple[str, bool], str | None] = {}
        allowed = {(v, f): n for r in roles for v, n, f in ROLES[r]}
        for e in item.entries:
            key = (e.verb, e.src is not None)
            if key not in allowed:
                verbs = sorted({v for v, _ in allowed})
                what = f"`{e.verb}{' … from' if e.src else ''}`"
                if not roles:
                    raise ctx.error(e.pos, f"queue `{item.name}` plays no role, so it has no entry {what}; "
                                    "declare its roles, `queue NAME : ROLE { … }`")
                raise ctx.error(e.pos, f"{what} is no entry of the roles of queue `{item.name}` "
                                f"({', '.join(roles)}: {', '.join(verbs) or 'none'})")
            if key in entries:
                raise ctx.error(e.pos, f"queue `{item.name}` has two `{e.verb}` entries")
            if len(e.params) != allowed[key]:
                raise ctx.error(e.pos, f"`{item.name}.{e.verb}` takes {allowed[key]} parameter(s), as the "
                                "role says")
            entries[key] = e
            names = {s.name for s in A.walk_stmts(e.body) if isinstance(s, (A.SSet, A.SChoose, A.SMark))}
            self.check_params(item, e, pools, names)
            locals_[key] = names
            leases[key] = leases_on_every_path(e.body)
        # sorted: the first of a set's strings depended on the process's hash seed
        leased_all = tuple(sorted(set().union(*(leased_pools(e.body) for e in item.entries))))
        leased = leased_all[0] if leased_all else None
        q = Queue(item, size, family, roles, pools, entries, locals_, leases, leased, leased_all=leased_all,
                  index=index, latency=item.latency)
        if item.latency is not None:
            # (at the clause, the word `latency` these are about: the caret was under its value)
            clause = item.latency_pos or item.latency.pos
            if "link" not in roles:
                raise ctx.error(clause, f"`latency` on the serve of `{item.name}`: only a link's serve takes one")
            if ("transfer", False) in entries:
                raise ctx.error(clause, f"`latency` on link `{item.name}`: only a link without an entry takes one "
                                "(an entry's body is the read)")
            if _latency(ctx, item.latency, f"the latency of link `{item.name}`") == 0:
                q.latency = None  # no wait: no stage `L.latency` and no run of it (docs/language.md)
        self.queues[item.name] = q
        return q

    def check_params(self, item: A.QueueItem, e: A.QEntry, pools: list[str], assigned: set[str]) -> None:
        """A parameter is substituted, like an ``at admission`` binding (language.txt, Queues), so its name is
        its own among the names the entry reads otherwise: a parameter named ``self``, ``now``, ``cached``, a
        hidden attribute (``o``: "o is not a parameter of decode and the body alone reads it"), a `let`, a
        pool or a stage would put the caller's argument where the body meant that name, and one the body
        sets would be read as the argument all the same."""
        taken = A.declared_names(self.module)
        where = f"`{item.name}.{e.verb}`"
        seen: set[str] = set()
        for i, name in enumerate(e.params):
            pos = e.param_pos[i] if i < len(e.param_pos) else e.pos
            if name in seen:
                raise self.ctx.error(pos, f"{where} has two parameters named `{name}`")
            seen.add(name)
            if name == "self":
                why = "the member's index"
            elif name == e.src:
                why = "the name of the entry's `from` pool"
            elif name in pools:
                why = f"a pool of queue `{item.name}`"
            elif name in self.hidden:
                why = ("a hidden attribute, which the body reads as the request's (the scheduler does not "
                       "know it, so it is no parameter)")
            elif name in taken:
                why = taken[name]
            elif language_name(name, self.trace) is not None:
                why = language_name(name, self.trace)
            elif name in assigned:
                raise self.ctx.error(pos, f"`{name}` is a parameter of {where} and its body assigns it; a "
                                     "parameter is substituted, so give the attribute another name")
            else:
                continue
            raise self.ctx.error(pos, f"`{name}` cannot be a parameter of {where}: it is {why}; a parameter "
                                 "is substituted, so give it a name of its own")

    def emit(self, q: Queue) -> list[Any]:
        """The kernel items a queue stands for."""
        item = q.item
        size = A.Num(float(q.size), item.size.pos) if q.family else None
        out: list[Any] = []
        own = self.own_names(q)

        def fe(e: Any) -> Any:
            return self.decl_expr(q, e, own)

        def fr(r: A.Var) -> A.Var:
            return self.decl_ref(q, r, own)

        for p in item.pools:
            opts = [A.map_pool_opt(o, fe, fr) for o in p.opts]
            out.append(A.PoolItem(f"{q.name}.{p.name}", size, opts, p.pos, p.name_pos))
        if item.serve is not None:
            kind = A.map_kind(item.serve, fe, fr)
            # the stage is the queue's: its name is written as the queue's (check_names has refused every
            # name a queue may not take, so the linker's refusals of a stage's name never meet it)
            out.append(A.StageItem(q.name, size, kind, item.serve.pos, A.name_at(item)))
            if q.latency is not None:
                out.append(A.StageItem(f"{q.name}.latency", size, A.Kind("delay", q.latency.pos),
                                       q.latency.pos))
        if item.nic is not None:
            kind = A.map_kind(item.nic, fe, fr)
            out.append(A.StageItem(f"{q.name}.nic", size, kind, item.nic.pos))
        return out

    def own_names(self, q: Queue) -> dict[str, str]:
        out = {p: f"{q.name}.{p}" for p in q.pools}
        if q.item.serve is not None:
            out[q.name] = q.name
        return out

    def decl_ref(self, q: Queue, r: A.Var, own: dict[str, str]) -> A.Var:
        """A reference in a queue's declarations: its own pools by their short names."""
        head, idx = r.parts[0]
        if len(r.parts) == 1 and head in own:
            if idx is not None:
                raise self.ctx.error(r.pos, f"`{head}[…]` inside queue `{q.name}`: the queue's own is the "
                                     f"member's; write `{head}`")
            return A.Var([(own[head], None)], r.pos)
        return r

    def decl_expr(self, q: Queue, e: Any, own: dict[str, str]) -> Any:
        def f(x: Any) -> Any:
            if type(x) is A.Var and x.parts[0][0] in own and len(x.parts) == 1:
                return self.decl_ref(q, x, own)
            return None

        return A.map_expr(e, f)

    # -- the rewrite -------------------------------------------------------------------------------

    def check_names(self) -> None:
        """A queue's name is its own among the program's names (language.txt §2): a queue, a let, a pool, a
        stage and an attribute have names of their own, whether or not the queue has a `serve` (one without
        makes no stage, so the linker, which checks a stage's name, never sees it). The later of two is
        refused, at its name; a queue declared first is placed at its name. Nor is a queue's name one the
        language supplies (a context variable, `inf`), a built-in attribute or, with a trace, an attribute
        the trace gives. Every rule on a queue's name is here: the stage a queue with a `serve` makes passes
        the linker's refusals of a stage's name."""
        ctx = self.ctx
        first: dict[str, Any] = {}
        for item in self.module.items:
            if type(item) not in (A.Let, A.PoolItem, A.StageItem, A.QueueItem):
                continue
            other = first.setdefault(item.name, item)
            if other is item or (type(item) is not A.QueueItem and type(other) is not A.QueueItem):
                continue  # two names neither of which is a queue's are the context's and the linker's to refuse
            at = A.name_at(other) if type(other) is A.QueueItem or type(other) is A.Let else other.pos
            where = f"first at {at.line}:{at.col}"
            if type(item) is A.QueueItem and type(other) is A.QueueItem:
                raise ctx.error(A.name_at(item), f"queue `{item.name}` is declared twice ({where})")
            if type(other) is A.Let:
                raise ctx.error(A.name_at(item), f"the queue `{item.name}` has the name of a `let` ({where})")
            if type(item) is A.Let:
                raise ctx.error(A.name_at(item), f"`let {item.name}`: `{item.name}` is a queue; give the "
                                f"constant another name ({where})")
            raise ctx.error(A.name_at(item), f"`{item.name}` is declared twice ({where})")
        trace = any(w.kind == "trace" for item in self.module.items if type(item) is A.WorkloadItem
                    for w in item.items)
        for item in self.module.items:
            if type(item) is not A.QueueItem:
                continue
            why = declared_name_problem("queue", item.name, trace)
            if why is not None:
                raise ctx.error(A.name_at(item), why)
            for p in item.pools:  # (its entries read a pool by its short name: `serial` there was the pool)
                why = declared_name_problem("pool", p.name, trace)
                if why is not None:
                    raise ctx.error(A.name_at(p), why)
        queues = {item.name: A.name_at(item) for item in self.module.items if type(item) is A.QueueItem}
        for item in self.module.items:
            for b in A.item_blocks(item):
                for s in A.walk_stmts(b):
                    if isinstance(s, (A.SSet, A.SChoose)) and s.name in queues:
                        raise ctx.error(s.pos, f"`{s.name}` is a queue (at {queues[s.name].seen_from(s.pos)}); an "
                                        "attribute needs another name")

    def run(self) -> A.Module:
        items = self.module.items
        self.check_names()
        for i, item in enumerate(items):
            if isinstance(item, A.QueueItem):
                self.declare(item, i)
        shares = [it for it in items if isinstance(it, A.ShareItem)]
        self.relations = [it for it in items if isinstance(it, A.PullItem)]
        out: list[Any] = []
        for i, item in enumerate(items):
            if isinstance(item, A.QueueItem):
                q = self.queues[item.name]
                out.extend(self.emit(q))
                q.nic_declared = True
                for e in item.entries:
                    self.check_entry(q, e)
            elif isinstance(item, A.PullItem):
                out.extend(self.pull(item, i, shares))
            else:
                self.check_outside(item)
                out.append(item)
        module = A.Module([self.expand_item(item) for item in out], self.module.file)
        self.unset_reads_uncalled()
        return module

    def unset_reads_uncalled(self) -> None:
        """The read-before-set warning (serq_frontend.link.Unset) in the entries nobody calls: a called entry's
        body is walked where it is expanded, on the session's path, and one never called was not walked at
        all, so a read of a name it sets only later (`run tool (t); set t = 3;`) went unsaid. Its body is walked
        as its first call's would be, from nothing set, the names it sets its attributes (a `mark`'s not: the
        expansion sets it where it stands); the same words. A gateway's route reads the request's attributes,
        which the session sets: it is walked where it is requested alone."""
        from ..link import Unset, warn_unset_reads

        for q in self.queues.values():
            for key, e in q.entries.items():
                if (q.name, *key) in self.called or (q.gateway and e.verb == "route"):
                    continue
                names = {s.name for s in A.walk_stmts(e.body) if isinstance(s, (A.SSet, A.SChoose))}
                reads = Unset(names, []).run([], e.body) if names else {}
                if reads:
                    warn_unset_reads(self.ctx.reporter, reads, (e.body,), lambda n, p: n)

    def check_outside(self, item: Any) -> None:
        """A queue's pool is "the queue's own; only its entries hold it" (language.txt §2, qitem): a server,
        a session or the workload's blocks hold, grow, load and release it only by calling an entry, as a
        gateway's route does (:meth:`check_route`)."""
        where = {A.ServerItem: "the server", A.SessionItem: "the session"}.get(type(item), "the workload")
        for b in A.item_blocks(item):
            for s in A.walk_stmts(b):
                for r in self._pool_refs(s):
                    head = r.parts[0][0]
                    if head in self.queues and len(r.parts) > 1:
                        raise self.ctx.error(r.pos, f"`{_verb(s, r)} {r.dotted}` in {where}: `{r.dotted}` is a "
                                             f"pool of queue `{head}`, which only `{head}`'s entries hold, grow, "
                                             f"load and release; call one (`{head}[…].VERB (…);`)")

    def expand_item(self, item: Any) -> Any:
        if not isinstance(item, A.WorkloadItem):
            return A.map_item(item, lambda e: e, lambda b: self.block(b, None, []))
        items = []
        for w in item.items:
            if w.kind in A.WL_BLOCKS:
                # `request gw;` only in the workload's session (program-reference.txt, session)
                self.request_ok = w.kind == "session"
                try:
                    items.append(A.WlItem(w.kind, w.pos, self.block(w.arg, None, []), w.extra))
                finally:
                    self.request_ok = False
            else:
                items.append(w)
        return A.WorkloadItem(items, item.pos)

    def pull(self, item: A.PullItem, index: int, shares: list[A.ShareItem]) -> list[Any]:
        ctx = self.ctx
        for name in (item.reader, item.source):
            q = self.queues.get(name)
            if q is None or q.index > index:
                raise ctx.error(item.pos, f"`{item.reader} pull {item.source}`: no queue `{name}` is "
                                "declared above")
            if q.item.nic is None:
                raise ctx.error(item.pos, f"`{item.reader} pull {item.source}`: queue `{name}` has no "
                                "`nic`; a pull reads over both queues' NICs")
        reader = self.queues[item.reader]
        if reader.pulls is not None:
            raise ctx.error(item.pos, f"`{item.reader}` pulls from `{reader.pulls.source}` already; a "
                            "reader has one source")
        if item.share not in ("maxmin", "bottleneck"):
            raise ctx.error(item.pos, f"`share {item.share}`: the policies are maxmin and bottleneck")
        if shares:
            # every relation names the program's share (language.txt §2: "A program with a relation does not
            # also write share on its own"): each is named, with a note where it stands (it named the first
            # alone, wherever the `share` stood)
            rels = self.relations
            named = [f"`{r.reader} pull {r.source}`" for r in rels]
            if len(named) > 4:  # (a program of many relations: the first three named, the first four noted)
                named = [*named[:3], f"{len(rels) - 3} more"]
            which = (f"the pull relation {named[0]} names" if len(rels) == 1 else
                     f"the pull relations {', '.join(named[:-1])} and {named[-1]} name")
            e = ctx.error(shares[0].pos, f"`share` is given twice: {which} the program's share; a program with a "
                          "pull relation writes no `share` of its own")
            for r in rels[:4]:
                e = ctx.reporter.noted(e, r.pos, f"`{r.reader} pull {r.source}` names `share {r.share}` here")
            raise e
        reader.pulls = item
        first = self.pulled[0] if self.pulled else None
        self.pulled.append(item)
        if first is not None and first.share != item.share:
            raise ctx.error(item.pos, f"`{item.reader} pull {item.source} … share {item.share}`: the program's "
                            f"share is `{first.share}`, which `{first.reader} pull {first.source}` (at "
                            f"{first.pos.line}:{first.pos.col}) names; a program divides its stages one way, so "
                            "every pull relation names the same share")
        # one share item for the program (the linker's: `share` once), written by the first relation
        out: list[Any] = [A.ShareItem(item.share, item.pos)] if first is None else []
        # for the linker's words of a relation that reads nothing (the refusal of the share when no relation
        # reads, a warning at each one that does not when another does): every relation, where it is, and
        # whether its reader's entries hold a read at all (a transfer without `on` or an index); the reads a
        # call expands are noted under "pull_read" (QueueExpander.pull)
        reads = any(type(s) is A.STransfer and not s.on and s.index is None
                    for e in reader.item.entries for s in A.walk_stmts(e.body))
        ctx.notes.setdefault("share_of_pull", []).append((item.reader, item.source, reads, item.pos))
        if item.latency is not None and _latency(ctx, item.latency,
                                                 f"the latency of `{item.reader} pull {item.source}`") != 0:
            # a latency of 0 is none: no stage `R.nic.latency` and no run of it (docs/language.md)
            reader.pull_latency = item.latency
            size = A.Num(float(reader.size), item.pos) if reader.family else None
            out.append(A.StageItem(f"{reader.name}.nic.latency", size, A.Kind("delay", item.pos), item.pos))
        return out

    def check_sides(self, q: Queue, e: A.QEntry) -> None:
        """An entry's body, a gateway's route included, is the server's statements (language.txt, Queues),
        and a server says neither the session's `turn;` and `end;` nor `request` (§2, the two sides): so
        every entry, called or not and from whichever side, as a server block is refused them."""
        where = f"`{q.name}.{e.verb}`"
        for s in A.walk_stmts(e.body):
            if isinstance(s, A.STurn):
                raise self.ctx.error(s.pos, f"`turn;` in {where}: the next turn is the session's side (write "
                                     "it in the workload's session); an entry's body is the server's "
                                     "statements, done with a request when its block is")
            if isinstance(s, A.SEnd):
                raise self.ctx.error(s.pos, f"`end;` in {where}: the exit is the session's side (write it in "
                                     "the workload's session); an entry's body is the server's statements")
            if isinstance(s, A.SRequest):
                what = f"request {s.gateway};" if s.gateway else "request;"
                raise self.ctx.error(s.pos, f"`{what}` in {where}: the workload's session requests (a "
                                     "server, a top-level session, the workload's init and turn and a "
                                     "queue's entries do not)")

    def check_route(self, q: Queue, e: A.QEntry) -> None:
        """A gateway's route reads the request's attributes as a server does, but the pools of the other
        queues are theirs: only their entries hold, grow, load or release them."""
        for s in A.walk_stmts(e.body):
            for r in self._pool_refs(s):
                head = r.parts[0][0]
                if head in self.queues and head != q.name and len(r.parts) > 1:
                    verb = _verb(s, r)
                    raise self.ctx.error(r.pos, f"`{verb} {r.dotted}` in `{q.name}.{e.verb}`: `{r.dotted}` is a "
                                         f"pool of queue `{head}`, which only `{head}`'s entries hold, grow, "
                                         f"load and release; call one (`{head}[…].VERB (…);`)")

    def stage_kinds(self) -> dict[str, str]:
        """Every stage of the program by its kernel name, with its kind: the top-level ones and the
        queues' (``Q``, ``Q.nic``, ``Q.latency``, ``R.nic.latency``), in the order they are declared."""
        if self._kinds is None:
            kinds: dict[str, str] = {}
            for item in self.module.items:
                if isinstance(item, A.StageItem):
                    kinds.setdefault(item.name, item.kind.kind)
                elif isinstance(item, A.QueueItem) and item.name in self.queues:
                    if item.serve is not None:
                        kinds.setdefault(item.name, item.serve.kind)
                        if self.queues[item.name].latency is not None:
                            kinds.setdefault(f"{item.name}.latency", "delay")
                    if item.nic is not None:
                        kinds.setdefault(f"{item.name}.nic", item.nic.kind)
                elif isinstance(item, A.PullItem) and item.latency is not None:
                    kinds.setdefault(f"{item.reader}.nic.latency", "delay")
            self._kinds = kinds
        return self._kinds

    def check_stages(self, q: Queue, e: A.QEntry) -> None:
        """"The body is the server's statements; run (X) with no stage names the queue's own, and a serving
        form with no on finds it; the stages that are not a step engine (a link's, a delay) the body may
        name as a server does" (language.txt, Queues): a step engine other than the queue's own — a
        top-level one, another queue's, or the one a serving form finds in a queue that serves nothing —
        is another station, whose entries are its way in."""
        from .serving import which_stage

        kinds = self.stage_kinds()
        for s in A.walk_stmts(e.body):
            named: list[tuple[str, Pos, str]] = []
            if isinstance(s, A.SRun):
                named = [(r.dotted, r.pos, f"run {r.dotted}") for r in s.stages]
            elif isinstance(s, A.SServing):
                if s.on:
                    named = [(r.dotted, r.pos, f"{s.verb} on {r.dotted}") for r in s.on]
                elif s.verb == "tool" or s.index is not None or q.item.serve is None:
                    name = which_stage(kinds, s.verb, s.pos, self.ctx)
                    named = [(name, s.pos, f"{s.verb}" + ("[…]" if s.index is not None else ""))]
            if isinstance(s, A.STransfer):
                # a transfer on a step engine is the linker's to refuse (as `run E (X)`); a parameter is not
                named = [(r.dotted, r.pos, f"transfer on {r.dotted}") for r in s.on if r.dotted in e.params]
            for name, pos, what in named:
                if name in e.params and A.own_text(pos):
                    # substituted by the caller's argument: the check would see the stage only at the call
                    raise self.ctx.error(pos, f"`{what}` in `{q.name}.{e.verb}`: `{name}` is a parameter, a "
                                         "value the caller passes, not a stage; an entry runs on its queue's "
                                         "own stage and names the program's stages that are not step engines")
                # a member's own stage written long (`P` in an entry of P) is the queue's own
                if kinds.get(name) != "step" or name == q.name:
                    continue
                owner = self.queues.get(name)
                how = (f"call one of `{name}`'s entries (`{name}{'[…]' if owner.family else ''}.VERB (…);`)"
                       if owner is not None and not owner.gateway else
                       "run on the queue's own `serve` (`run (…);`), or declare the engine a queue and call it")
                raise self.ctx.error(pos, f"`{what}` in `{q.name}.{e.verb}`: `{name}` is a step engine, not "
                                     f"queue `{q.name}`'s own; an entry names only stages that are not step "
                                     f"engines (a link's, a delay) besides its own: {how}")

    def check_entry(self, q: Queue, e: A.QEntry) -> None:
        """An entry sees its own: the boundary of the queue (gateways excepted, but for other queues'
        pools, see :meth:`check_route`)."""
        self.check_sides(q, e)
        # the route alone: a queue that is a gateway and plays another role holds that role's entries to
        # the boundary as any queue's ("The gateway is the exception on the session's side: its route …")
        if q.gateway and e.verb == "route":
            self.check_route(q, e)
        else:
            self.check_boundary(q, e)
        self.check_stages(q, e)

    def check_boundary(self, q: Queue, e: A.QEntry) -> None:
        """What an entry holds and reads (every entry but a gateway's route)."""
        ctx = self.ctx
        key = (e.verb, e.src is not None)
        own_pools = set(q.pools)
        if e.src:
            own_pools.add(e.src)
        locals_ = q.locals[key]
        lets = set(ctx.lets())
        # serial and turn_no are the session's, as every attribute but the ones below; a parameter is read by
        # the entry's own text only (A.own_text)
        params = set(e.params)
        allowed = (locals_ | lets | CONTEXT | {"inf", "self", "cached", "computed"}
                   | self.hidden | own_pools | {q.name} | self.globals)
        allowed |= set(self.queues)
        bound: set[str] = set()
        for s in A.walk_stmts(e.body):
            for r in self._pool_refs(s):
                head = r.parts[0][0]
                if head not in own_pools:
                    verb = _verb(s, r)
                    if head == q.name and len(r.parts) > 1 and r.parts[1][0] in q.pools:
                        # the queue's own pool by its long name, the kernel's, as language.txt writes the read
                        # a pull stands for: within the entries a pool is named as the queue declares it
                        own = " (each member's own)" if q.family else ""
                        raise ctx.error(r.pos, f"`{verb} {r.dotted}` in `{q.name}.{e.verb}`: `{r.dotted}` is "
                                        f"`{q.name}`'s own pool, and within its entries it is `{r.parts[1][0]}`{own}")
                    raise ctx.error(r.pos, f"`{verb} {r.dotted}` in `{q.name}.{e.verb}`: `{r.dotted}` is not "
                                    f"a pool of `{q.name}`; an entry holds only its queue's own pools and "
                                    "the one its `from` names")
            if isinstance(s, A.SHold):
                self.check_header(q, e, s, set(q.pools), lets)
            for root in A.stmt_exprs(s):
                self.check_reads(q, e, root, own_pools)
            roots = list(A.stmt_exprs(s))
            if isinstance(s, A.SHold):
                bound.update(b.name for b in s.bindings)
            for root in roots:
                for x in A.walk_expr(root):
                    if type(x) is A.Agg:
                        bound.add(x.var)
        for s in A.walk_stmts(e.body):
            for root in A.stmt_exprs(s):
                if type(s) is A.SRun and any(root is st for st in s.stages):
                    # a run's stage is no read: its name is a stage's, which check_stages and the linker judge
                    # (`run nic (…)` was told as reading a session attribute `nic`); its index is a read
                    subs = [i for _, i in root.parts if i is not None]
                else:
                    subs = [root]
                for x in (y for sub in subs for y in A.walk_expr(sub)):
                    if type(x) is not A.Var:
                        continue
                    head = x.parts[0][0]
                    if len(x.parts) > 1 and head in self.queues and head != q.name:
                        dotted = x.dotted
                        if not any(dotted == f"{head}.{p}" for p in self.queues[head].pools) and \
                                dotted != f"{head}.nic":
                            raise ctx.error(x.pos, f"`{q.name}.{e.verb}` reads `{dotted}`, another queue's")
                        continue
                    if head in allowed or head in bound or (head in params and A.own_text(x.pos)):
                        continue
                    if head in ("serial", "turn_no"):
                        what = ", the session's attribute"
                    elif head in self._set_outside():
                        what = ", a session attribute set outside the queue"
                    else:  # a name nothing on the session's side sets (`zz`, a misspelt one): no attribute
                        what = ""
                    raise ctx.error(x.pos, f"`{q.name}.{e.verb}` reads `{head}`{what}; an entry reads its "
                                    "parameters, what it sets, `cached` and the request's hidden attributes")

    def _set_outside(self) -> set[str]:
        """The attributes the session's side sets: the session, the server, the workload's blocks, the
        gateways' routes (definitions are expanded by now) and a trace's columns."""
        if self._outside is None:
            names: set[str] = set()
            for item in self.module.items:
                if type(item) in (A.SessionItem, A.ServerItem):
                    names |= A.assigned_in(item.body)
                elif type(item) is A.WorkloadItem:
                    for w in item.items:
                        if w.kind in A.WL_BLOCKS:
                            names |= A.assigned_in(w.arg)
                        elif w.kind == "trace":
                            names.update(TRACE_ATTRIBUTES)
                elif type(item) is A.QueueItem:
                    for en in item.entries:
                        if en.verb == "route":
                            names |= A.assigned_in(en.body)
            self._outside = names
        return self._outside

    def check_header(self, q: Queue, e: A.QEntry, s: A.SHold, own_pools: set[str], lets: set[str]) -> None:
        """A hold's header in an entry (units, reserve, reuse, the ``at admission`` bindings) reads the
        parameters, the queue's pools and stage and the constants: not the clock, nor what the session or
        the entry has set (language.txt, Queues). A hold within another hold of the entry reads besides
        `cached` and what the entry set before it from neither the clock nor a hidden attribute (the spec
        is silent on such a hold: docs/language.md, Queues)."""
        # `computed` too: the hold's own position at its last preemption, which the pool sets, and what
        # a header that resumes rather than restarts reads (lib/vllm.sq's `known`)
        ok = lets | own_pools | {q.name, "inf", "self", "computed"}
        inner, first_set, tainted, place, before = self._entry_sets(e)
        nested = id(s) in inner
        if nested:
            ok = ok | {"cached"} | (before[id(s)] - tainted)
        params = set(e.params)
        roots: list[Any] = []
        # the pools the hold names (its `from` pool among them) are its statement's, not a read
        held = [p.ref for p in s.pools]
        for p in s.pools:
            roots.extend(A.stmt_exprs(p))
        if s.reuse is not None:
            roots.append(s.reuse)
        bound: set[str] = set()
        for b in s.bindings:
            roots.append(b.value)
        for b in s.bindings:
            bound.add(b.name)
        for root in roots:
            aggs = {x.var for x in A.walk_expr(root) if type(x) is A.Agg}
            for x in A.walk_expr(root):
                if type(x) is not A.Var or x in held:
                    continue
                head = x.parts[0][0]
                if head in ok or head in bound or head in aggs or (head in params and A.own_text(x.pos)):
                    continue
                if head == "now":
                    what = "the clock, `now`"
                elif nested and head in tainted:
                    raise self.ctx.error(x.pos, f"the header of a hold in `{q.name}.{e.verb}` reads `{head}`, "
                                         "which the entry sets from the clock or a hidden attribute; a hold "
                                         "within another reads in its header what the entry set before it, "
                                         "`cached` and what the entry's first hold reads, not the clock or "
                                         "what the scheduler may not know")
                elif nested and head in first_set and first_set[head][0] < place[id(s)]:
                    # set earlier in the source, on some paths only (an arm of a branch): the header would
                    # read the value of the path taken, 0 or one set before the entry was called, on the others
                    raise self.ctx.error(x.pos, f"the header of a hold in `{q.name}.{e.verb}` reads `{head}`, "
                                         "which the entry sets before this hold on some paths only (at "
                                         f"{first_set[head][1].seen_from(x.pos)}); a hold within another reads "
                                         "in its header what the entry set on every path to it: set it on "
                                         "each, or before the branch")
                elif nested and head in first_set:
                    raise self.ctx.error(x.pos, f"the header of a hold in `{q.name}.{e.verb}` reads `{head}`, "
                                         "which the entry sets only after this hold; a hold within another "
                                         "reads in its header what the entry set before it: set it first")
                elif head == "cached" or head in A.assigned_in(e.body):
                    # "set the value there" of the message below is no way out: the value is set there already
                    told = "`cached`, which a hold's admission sets" if head == "cached" else \
                        f"`{head}`, which the entry sets"
                    raise self.ctx.error(x.pos, f"the header of a hold in `{q.name}.{e.verb}` reads {told}; the "
                                         "header of an entry's first hold (units, reserve, reuse, `at "
                                         "admission`) reads its parameters, its queue's pools and stage, the "
                                         "constants and `computed`, not what the entry's statements set: write "
                                         "the header in the parameters and pools the value comes from")
                elif head == e.src:
                    what = f"`{head}`, the pool its `from` names (the body's to take, not the admission's)"
                elif head in self.queues or head in self.globals:
                    continue  # a reference: check_reads and the linker judge it
                else:
                    what = f"`{head}`"
                raise self.ctx.error(x.pos, f"the header of a hold in `{q.name}.{e.verb}` reads {what}; an "
                                     "entry's header (units, reserve, reuse, `at admission`) reads its "
                                     "parameters, its queue's pools and stage and the constants (the body "
                                     "may read more: set the value there, or pass it)")

    def _entry_sets(self, e: A.QEntry) -> tuple[set[int], dict[str, tuple[int, Pos]], set[str], dict[int, int],
                                                dict[int, frozenset[str]]]:
        """What the headers of the entry's holds may read, made once for the entry (each a single walk, so
        that an entry of many holds and sets links in time linear in its size): the ids of its holds within
        another hold, the place (in source order) and position of each name's first set, the names any of its
        statements sets from the clock or a hidden attribute, directly or through another such name, each
        hold's place, and for each hold within another the names every path from the entry's start to it
        has set (:meth:`_set_on_every_path`): an attribute is read as the path taken set it (language.txt §3),
        so a name one arm of a branch sets is not set before a hold in the other arm, nor after the branch."""
        got = self._entry_facts.get(id(e))
        if got is not None and got[0] is e:
            return got[1]
        inner: set[int] = set()
        first_set: dict[str, tuple[int, Pos]] = {}
        place: dict[int, int] = {}
        sources: dict[str, list[Any]] = {}
        header_reads: list[Any] = []  # the expressions of the headers of the holds within another

        def walk(stmts: list[Any], within: bool) -> None:
            for t in stmts:
                place[id(t)] = len(place)
                if isinstance(t, (A.SSet, A.SChoose)):
                    first_set.setdefault(t.name, (place[id(t)], t.pos))
                    sources.setdefault(t.name, []).extend(A.stmt_exprs(t))
                elif isinstance(t, A.SHold):
                    if within:
                        inner.add(id(t))
                        header_reads.extend(y for p in t.pools for y in A.stmt_exprs(p))
                        header_reads.extend([t.reuse] if t.reuse is not None else [])
                        header_reads.extend(b.value for b in t.bindings)
                    for b in t.bindings:
                        first_set.setdefault(b.name, (place[id(t)], t.pos))
                        sources.setdefault(b.name, []).append(b.value)
                for b in A.blocks_of(t):
                    walk(b, within or isinstance(t, A.SHold))

        walk(e.body, False)
        # (only the names a header within another hold reads are followed: a set of every name the entry sets
        # at every statement took a time quadratic in the entry's size)
        wanted = {x.parts[0][0] for r in header_reads for x in A.walk_expr(r) if type(x) is A.Var} & set(first_set)
        before: dict[int, frozenset[str]] = {}
        self._set_on_every_path(e.body, frozenset(), before, wanted)
        # tainted: the least set of names whose sources read `now`, a hidden attribute or a tainted name,
        # by a walk from the names that read the first two along who reads whom
        readers: dict[str, list[str]] = {}
        todo: list[str] = []
        seeds = self.hidden | {"now"}
        for name, exprs in sources.items():
            reads = {x.parts[0][0] for r in exprs for x in A.walk_expr(r) if type(x) is A.Var}
            if reads & seeds:
                todo.append(name)
            for r in reads:
                readers.setdefault(r, []).append(name)
        tainted: set[str] = set()
        while todo:
            name = todo.pop()
            if name not in tainted:
                tainted.add(name)
                todo.extend(readers.get(name, ()))
        facts = (inner, first_set, tainted, place, before)
        self._entry_facts[id(e)] = (e, facts)
        return facts

    def _set_on_every_path(self, stmts: list[Any], state: frozenset[str] | None,
                           before: dict[int, frozenset[str]], wanted: set[str]) -> frozenset[str] | None:
        """The names of ``wanted`` every path through ``stmts`` from ``state`` has set (a `set`, a `choose`, a
        hold's bindings within its body), in execution order, noting at each hold (in ``before``) what every path to its
        header has: a branch keeps what both arms set, a loop's body starts from what its entry has (its first
        pass), a hold's body from its header's with its bindings; ``end;`` ends the path (None), though an
        entry refuses it. A hold executed again after a preemption has set at least as much as the first
        time, so the first pass is the one to judge."""
        for t in stmts:
            if state is None:
                return None
            if isinstance(t, (A.SSet, A.SChoose)):
                if t.name in wanted and t.name not in state:
                    state = state | {t.name}
            elif isinstance(t, A.SHold):
                before[id(t)] = state
                state = self._set_on_every_path(t.body, state | ({b.name for b in t.bindings} & wanted), before,
                                                wanted)
            elif isinstance(t, (A.SBranch, A.SBranchWith)):
                a = self._set_on_every_path(t.then, state, before, wanted)
                b = self._set_on_every_path(t.orelse, state, before, wanted)
                state = b if a is None else a if b is None else a & b
            elif isinstance(t, A.SLoop):
                self._set_on_every_path(t.body, state, before, wanted)
            elif isinstance(t, A.SEnd):
                return None
            else:
                for b in A.blocks_of(t):
                    state = self._set_on_every_path(b, state, before, wanted)
                    if state is None:
                        return None
        return state

    def check_reads(self, q: Queue, e: A.QEntry, root: Any, own_pools: set[str]) -> None:
        """An observable in an entry reads the queue's own pools and stage (and the pool its ``from``
        names), never a top-level pool or stage nor another queue's."""
        for x in A.walk_expr(root):
            if type(x) is not A.Call or x.name not in OBSERVABLES or x.name == "blocksize" or not x.args:
                continue
            t = x.args[0]
            if type(t) is not A.Var:
                continue
            head = t.parts[0][0]
            if len(t.parts) == 1 and (head in own_pools or head == q.name):
                continue
            if t.dotted in (f"{q.name}.nic", f"{q.name}.latency", f"{q.name}.nic.latency"):
                continue
            shown = ".".join(n if i is None else f"{n}[…]" for n, i in t.parts)
            if head == q.name and len(t.parts) == 2 and t.parts[1][0] in q.pools:
                # its own pool by the long name, a member's (`P[1].kv`, or `P.kv`, the family)
                raise self.ctx.error(t.pos, f"`{q.name}.{e.verb}` reads `{x.name}({shown})`: an entry reads its "
                                     f"own member's pool, by its short name; write `{x.name}({t.parts[1][0]})`")
            if head in self.queues:
                whose = f"queue `{head}`'s" if head != q.name else "not its queue's own"
            elif head in self.globals:
                whose = "a top-level pool's or stage's"
            else:
                continue  # unknown: the linker says so
            raise self.ctx.error(t.pos, f"`{q.name}.{e.verb}` reads `{x.name}({t.dotted})`, {whose} state; an "
                                 "entry reads its own queue's pools and stage (and the pool its `from` names)")

    @staticmethod
    def _pool_refs(s: Any) -> list[A.Var]:
        if isinstance(s, A.SHold):
            out = [p.ref for p in s.pools]
            if s.lease is not None:
                out.append(s.lease)
            return out
        if isinstance(s, (A.SGrow, A.SDrop, A.SRelease, A.SLoad)):
            return [s.ref]
        if isinstance(s, (A.SRun, A.SServing)) and s.growing is not None:  # a run that grows its pool
            return [s.growing]
        if isinstance(s, A.STransfer):  # a load of the one and a release of the other
            return [s.src, s.dst]
        if isinstance(s, A.SQCall) and s.to is not None:  # a link's transfer entry called: the same
            return [r for r in (s.src, s.to) if r is not None]
        return []

    # -- expansion ---------------------------------------------------------------------------------

    def block(self, stmts: list[Any], inst: Instance | None, stack: list[tuple[str, str, bool]]) -> list[Any]:
        self._nest += 1
        try:
            return self._block(stmts, inst, stack)
        finally:
            self._nest -= 1

    def _block(self, stmts: list[Any], inst: Instance | None, stack: list[tuple[str, str, bool]]) -> list[Any]:
        out: list[Any] = []
        for s in stmts:
            if inst is not None:
                produced = inst.stmt(s, lambda b: self.block(b, inst, stack))
            else:
                produced = [A.map_stmt(s, fb=lambda b: self.block(b, None, stack))]
            for n in produced:
                if isinstance(n, A.SQCall):
                    out.extend(self.call(n, stack))
                elif isinstance(n, A.SRequest) and n.gateway is not None:
                    out.extend(self.request(n, stack))
                elif isinstance(n, A.STransfer) and n.on and not n.pulled:
                    out.extend(self.link_latency(n))
                    out.append(n)
                else:
                    out.append(n)
        return out

    def link_latency(self, t: A.STransfer) -> list[Any]:
        out = []
        for r in t.on:
            q = self.queues.get(r.parts[0][0])
            if q is not None and len(r.parts) == 1 and q.latency is not None:
                idx = r.parts[0][1]
                out.append(A.SRun([A.Var([(f"{q.name}.latency", idx)], r.pos)], "plain", q.latency, t.pos))
        return out

    def request(self, s: A.SRequest, stack: list[tuple[str, str, bool]]) -> list[Any]:
        ctx = self.ctx
        if not self.request_ok or stack:
            where = f"in `{stack[-1][0]}.{stack[-1][1]}`" if stack else "outside the workload's session"
            raise ctx.error(s.pos, f"`request {s.gateway};` {where}: the workload's session requests (a "
                            "server, a top-level session, the workload's init and turn and a queue's "
                            "entries do not)")
        q = self.queues.get(s.gateway or "")
        if q is None:
            raise ctx.error(s.pos, f"`request {s.gateway};`: no queue `{s.gateway}` is declared")
        if not q.gateway:
            raise ctx.error(s.pos, f"`request {s.gateway};`: queue `{s.gateway}` is no gateway (its roles: "
                            f"{', '.join(q.roles) or 'none'})")
        entry = q.entries.get(("route", False))
        if entry is None:
            raise ctx.error(s.pos, f"`request {s.gateway};`: gateway `{s.gateway}` has no `route`")
        key = (q.name, "route", False)
        if key in stack:
            raise ctx.error(s.pos, f"`request {s.gateway};`: the entries call each other in a cycle")
        inst = Instance(self, q, entry, {}, None, None, s.pos, gateway=True)
        # the workload's session requests a gateway: the sides layer's "a workload's session without a
        # server" is then no error
        ctx.notes["gateway_requests"] = ctx.notes.get("gateway_requests", 0) + 1
        return self._expand(inst, entry, key, stack, s.pos)

    def _expand(self, inst: Instance, entry: A.QEntry, key: tuple[str, str, bool],
                stack: list[tuple[str, str, bool]], pos: Pos) -> list[Any]:
        # a call copies the entry's body: counted with the definitions' and aggregates' copies, against one
        # limit (Context.write_out), before it is made
        self.ctx.write_out(A.block_size(entry.body), pos, f"this call of `{key[0]}.{key[1]}`")
        # and how deep it nests where it is written out, as a definition's use is (defs.MAX_EXPANDED_DEPTH): a
        # chain of entries, each calling the next inside 900 branches, was a RecursionError of this layer at the
        # eighth, said as the unlocated "the program nests too deeply to compile"
        deep = self._nest + block_depth(entry.body)
        if deep > MAX_EXPANDED_DEPTH:
            raise too_deep(self.ctx, pos, f"this call of `{key[0]}.{key[1]}` writes out its entry's body", deep,
                           f"{IN_BLOCKS}, and the entries written out around the call",
                           "; an entry's call inside the entry another calls is written out inside that one")
        stack.append(key)
        try:
            return self.block(entry.body, inst, stack)
        finally:
            stack.pop()

    def call(self, c: A.SQCall, stack: list[tuple[str, str, bool]]) -> list[Any]:
        ctx = self.ctx
        q = self.queues.get(c.queue)
        if q is None:
            raise ctx.error(c.pos, f"`{c.queue}.{c.verb}`: no queue `{c.queue}` is declared"
                            + did_you_mean(c.queue, list(self.queues)))
        if c.index is None and q.family:
            raise ctx.error(c.pos, f"`{q.name}.{c.verb}`: `{q.name}` is a family of {q.size}; index it, "
                            f"`{q.name}[i].{c.verb} (…)`")
        if c.index is not None and not q.family:
            raise ctx.error(c.pos, f"`{q.name}[…].{c.verb}`: `{q.name}` is one queue, not a family")
        if c.verb == "route" and q.gateway:
            # "request Q; enters this queue's route", and only the workload's session requests: a call would
            # expand it elsewhere, its sets renamed `Q.x` as an entry's, which a route's are not
            raise ctx.error(c.pos, f"`{q.name}.route`: a gateway's route is not called; the workload's session "
                            f"enters it with `request {q.name};`")
        is_transfer = c.verb == "transfer" and "link" in q.roles
        takes_from = c.src is not None and not is_transfer
        entry = q.entries.get((c.verb, takes_from))
        if entry is None and not is_transfer:
            other = q.entries.get((c.verb, not takes_from))
            hint = ""
            if other is not None:
                hint = f": its `{c.verb}` takes no `from`" if c.src else f": its `{c.verb}` needs `from`"
            else:  # a verb it has none of (`D[j].decod (…)`): the closest, and the entries it has
                verbs = list(dict.fromkeys(v for v, _ in q.entries))
                hint = did_you_mean(c.verb, verbs) + (f"; its entries: {', '.join(f'`{v}`' for v in verbs)}"
                                                      if verbs else "; it has no entry")
            raise ctx.error(c.pos, f"`{q.name}.{c.verb}`: queue `{q.name}` has no such entry{hint}")
        if entry is None:
            raise ctx.error(c.pos, f"`{q.name}.transfer`: link `{q.name}` has no `transfer` entry; its "
                            f"`serve` is its cost: `transfer on {q.name}[…] (n) from S to P (m);`")
        if c.to is not None and not is_transfer:
            raise ctx.error(c.pos, f"`to` belongs to a link's `transfer`, not to `{c.verb}`")
        if is_transfer and (c.to is None or c.src is None):
            raise ctx.error(c.pos, f"`{q.name}.transfer (n) from S to P (m)`: a transfer names the pool it "
                            "takes from and the pool it fills")
        if len(c.args) != len(entry.params):
            raise ctx.error(c.pos, takes(f"{q.name}.{c.verb}", len(c.args), ", ".join(entry.params)))
        self._arguments_written(q, c, entry)
        for p, a in zip(entry.params, c.args):
            if A.draws(a):
                raise ctx.error(a.pos, f"`{q.name}.{c.verb}`: the argument for `{p}` draws; a parameter is "
                                "substituted, so a name used twice would draw twice")
            # as a statement definition's argument (docs/language.md, defs): the entry's statements read it
            # where they run, after its waits and admissions
            holds = any(isinstance(x, A.SHold) for x in A.walk_stmts(entry.body))
            set_by_hold = [x for x in A.walk_expr(a) if type(x) is A.Var and x.simple in ("cached", "computed")]
            if holds and set_by_hold:
                x = set_by_hold[0]
                raise ctx.error(x.pos, f"`{q.name}.{c.verb}`: the argument for `{p}` reads `{x.simple}`, which the "
                                "entry's holds set: the entry would read the new value; name the value with `set` "
                                "first and pass the name")
            live = reads_live(a)
            if live is not None:
                what = "the clock" if isinstance(live, A.Var) else f"live state, `{live.name}(…)`"
                raise ctx.error(live.pos, f"`{q.name}.{c.verb}`: the argument for `{p}` reads {what}: the "
                                "entry would read it after its runs; name the value with `set` first and pass "
                                "the name")
        indexes = [("the member's index", c.index)]
        if c.src is not None and c.src.parts[0][1] is not None and c.src.parts[0][0] in self.queues:
            indexes.append((f"the index of `from {c.src.parts[0][0]}[…]`", c.src.parts[0][1]))
        for what, idx in indexes:
            # substituted into every statement of the entry (`self`, its pools, its stage), as an argument
            # is: one that draws would draw a member for each, one that reads the clock or live state would
            # name another member once time has passed
            if idx is None:
                continue
            why = "draws" if A.draws(idx) else None
            live = live_read(idx)
            if why is None and live is not None:
                why = f"reads {live}, which changes while the entry runs"
            if why is not None:
                raise ctx.error(idx.pos, f"`{q.name}{'[…]' if q.family else ''}.{c.verb}`: {what} {why}; it is substituted into every "
                                "statement of the entry, so they would not name one member: choose it into an "
                                "attribute first (`choose j in N by (…);` or `set j = …;`)")
        self._member_in_range(q, c.index, f"`{q.name}[…].{c.verb}`")
        if c.src is not None and c.src.parts[0][0] in self.queues:
            self._member_in_range(self.queues[c.src.parts[0][0]], c.src.parts[0][1], f"`from {c.src.parts[0][0]}[…]`")
        src = self.source(c) if c.src is not None else None
        key = (q.name, c.verb, takes_from)
        if key in stack:
            raise ctx.error(c.pos, f"`{q.name}.{c.verb}`: the entries call each other in a cycle")
        inst = Instance(self, q, entry, dict(zip(entry.params, c.args)), c.index, src, c.pos)
        self.called.add(key)
        out = self._expand(inst, entry, key, stack, c.pos)
        if is_transfer:
            assert c.to is not None and src is not None
            problem = transfer_problem(src, c.to, ctx.lets())
            if problem is not None:
                raise ctx.error(c.to.pos, problem)
            out.append(A.SLoad(c.to, c.to_amount, c.pos, "transfer … to"))
            out.append(A.SRelease(src, c.pos, "transfer … from"))
        return out

    def _arguments_written(self, q: Queue, c: A.SQCall, entry: A.QEntry) -> None:
        """Count what the call ``c`` writes out by its arguments, each put in at every read of its parameter in
        the entry's body, before anything walks them (Context.write_out; its depth held to the bound of a
        definition's use): an argument is shared where it is put in, not copied, so entries that each call the
        next on ``max(prompt, prompt)`` passed an argument of 2**k nodes in a few objects, and forty queues
        never compiled; an argument of 5 000 terms read 5 000 times made 25 000 000 nodes (2.6 GB in a minute)."""
        if not c.args:
            return
        facts = self._entry_reads.get(id(entry))
        if facts is None:
            d = A.DefItem(f"{q.name}.{c.verb}", list(entry.params), None, entry.body, entry.pos)
            facts = self._entry_reads[id(entry)] = (param_reads(d), param_depths(d))
        reads, (body, at) = facts
        added = deepest = 0
        for p, a in zip(entry.params, c.args):
            if reads.get(p):
                n, depth = shared_size(a)
                added += reads[p] * (n - 1)
                deepest = max(deepest, at[p] - 1 + depth)
        what = f"this call of `{q.name}.{c.verb}`, its arguments put in where the entry reads them,"
        if added:
            self.ctx.write_out(added, c.pos, what)
        if deepest > body and self._nest + deepest > MAX_EXPANDED_DEPTH:  # (the body's own: :meth:`_expand`'s)
            raise too_deep(self.ctx, c.pos, f"{what} nests", self._nest + deepest, IN_BLOCKS)

    def _member_in_range(self, q: Queue, idx: Any, what: str) -> None:
        """A constant member index of a family's call (``D[5].decode``, ``from P[5]``) that names no member, told
        of the queue, at the index: it was told by the kernel's name of a pool or stage the entry's body holds or
        runs (`` `D.kv[5]`: `D.kv` has members 0 … 1 ``, `P.nic[5]`), which the call does not write."""
        if idx is None or not q.family:
            return
        try:
            k = fold(idx, self.ctx.lets())
        except (NotConstant, BadConstant):
            return
        if not (math.isfinite(k) and k == int(k) and 0 <= k < q.size):
            raise self.ctx.error(idx.pos, f"{what.replace('[…]', f'[{fmt_num(k)}]')}: queue `{q.name}` has members "
                                 f"0 … {q.size - 1}")

    def source(self, c: A.SQCall) -> A.Var:
        """``from S[k]``: the pool S's entries lease, member k; or a pool named outright."""
        ctx = self.ctx
        r = c.src
        assert r is not None
        head, idx = r.parts[0]
        s = self.queues.get(head)
        if s is None:
            if head not in self.pools and head.split(".")[0] not in self.queues:
                # `from Z[i]` of no declaration: told first, as an unknown name is (it was told as a source
                # other than the one the entry pulls from, or as a pool the linker did not know); `P.kv` is
                # a queue's pool, the source an entry's `from src` passes on to a link's `transfer`
                shown = r.dotted + ("[…]" if idx is not None else "")
                raise ctx.error(r.pos, f"`from {shown}`: no queue or pool `{head}` is declared"
                                + did_you_mean(head, [*self.queues, *self.pools]))
            return r
        if len(r.parts) > 1:
            raise ctx.error(r.pos, f"`from {r.dotted}`: a call takes from a queue, `from {head}`, and gets "
                            "the pool its entries lease")
        if s.leased is None:
            raise ctx.error(r.pos, f"`from {head}`: no entry of `{head}` leases a pool, so it has nothing "
                            "to take")
        if len(s.leased_all) > 1:
            # "from P[i] is the pool P's entry leases" (language.txt, Queues): one pool, or the transfer
            # would take one lease and leave the other held to the session's end
            names = ", ".join(f"`{n}`" for n in s.leased_all)
            raise ctx.error(r.pos, f"`from {head}`: the entries of `{head}` lease {names}; a `from` takes "
                            f"the one pool every entry of `{head}` leases")
        for (verb, _), leased in s.leases.items():
            if leased != s.leased:
                raise ctx.error(r.pos, f"`from {head}`: `{head}.{verb}` leases nothing on some way through "
                                "it, so a request that went through it would have no KV to take; a `from` "
                                f"needs every entry of `{head}` to lease `{s.leased}`")
        if idx is None and s.family:
            raise ctx.error(r.pos, f"`from {head}`: `{head}` is a family of {s.size}; index it")
        if idx is not None and not s.family:
            raise ctx.error(r.pos, f"`from {head}[…]`: `{head}` is one queue, not a family")
        return A.Var([(f"{head}.{s.leased}", idx)], r.pos)


@dataclass(eq=False)
class Instance:
    """One expansion of an entry's body at a call."""

    rw: QueueRewriter
    q: Queue
    entry: A.QEntry
    params: dict[str, Any]
    index: Any
    src: A.Var | None
    use: Pos
    gateway: bool = False
    locals: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not self.gateway:
            self.locals = self.q.locals[(self.entry.verb, self.entry.src is not None)]
        self.own = self.rw.own_names(self.q)
        self.name = f"{self.q.name}.{self.entry.verb}"

    def pos(self, p: Pos) -> Pos:
        return p.expanded(self.use, self.name)

    def error(self, p: Pos, msg: str) -> Exception:
        return self.rw.ctx.error(self.pos(p), msg)

    def local(self, n: str) -> str:
        return f"{self.q.name}.{n}" if n in self.locals else n

    def var(self, x: A.Var, in_index: bool = False) -> Any:
        head, idx = x.parts[0]
        src_name = self.entry.src
        if len(x.parts) == 1 and idx is None:
            if head == "self":
                if not self.q.family:
                    raise self.error(x.pos, f"`self` inside queue `{self.q.name}`, which is not a family")
                return self.index
            if head in self.params and A.own_text(x.pos):
                return self.params[head]
            if src_name is not None and head == src_name:
                assert self.src is not None
                if in_index:
                    i = self.src.parts[-1][1]
                    if i is None:
                        raise self.error(x.pos, f"`{head}` as an index: its source `{self.src.dotted}` is "
                                         "no family's member")
                    return i
                return self.src
            if head in self.locals:
                return A.Var([(self.local(head), None)], self.pos(x.pos))
        if len(x.parts) == 1 and idx is not None:
            # an index where none is written: on the member's index, a parameter (substituted whole), or
            # what the entry sets (the request's attribute `Q.x`, which the linker then says takes none)
            if head == "self":
                raise self.error(x.pos, "`self` is the member's index; it takes no index")
            if head in self.params and A.own_text(x.pos):
                raise self.error(x.pos, f"`{head}` is a parameter of `{self.name}`; it takes no index")
            if head in self.locals:
                return A.Var([(self.local(head), self.expr(idx, True))], self.pos(x.pos))
        if src_name is not None and head == src_name and len(x.parts) == 1:
            raise self.error(x.pos, f"`{head}` is the source pool; it takes no index")
        if head in self.own and len(x.parts) == 1:
            if idx is not None:
                raise self.error(x.pos, f"`{head}[…]` inside queue `{self.q.name}`: the queue's own is the "
                                 f"member's; write `{head}`")
            return A.Var([(self.own[head], self.index)], self.pos(x.pos))
        parts = [(n, None if i is None else self.expr(i, True)) for n, i in x.parts]
        return A.Var(parts, self.pos(x.pos))

    def expr(self, e: Any, in_index: bool = False) -> Any:
        t = type(e)
        if t is A.Var:
            return self.var(e, in_index)
        if t is A.Num:
            return A.Num(e.value, self.pos(e.pos))
        if t is A.Call:
            return A.Call(e.name, [self.expr(a) for a in e.args], self.pos(e.pos))
        if t is A.Draw:
            return A.Draw(e.dist, [self.expr(a) for a in e.args], self.pos(e.pos))
        if t is A.Unary:
            return A.Unary(e.op, self.expr(e.arg, in_index), self.pos(e.pos))
        if t is A.Binary:
            return A.Binary(e.op, self.expr(e.lhs, in_index), self.expr(e.rhs, in_index), self.pos(e.pos))
        if t is A.Cond:
            return A.Cond(self.expr(e.test, in_index), self.expr(e.then, in_index),
                          self.expr(e.orelse, in_index), self.pos(e.pos))
        if t is A.Agg:
            taken = {"self", *(self.params if A.own_text(e.pos) else ()), *self.locals, self.entry.src}
            if e.var in taken:
                raise self.error(e.var_at, f"`{e.op} {e.var} in` inside queue `{self.q.name}`: `{e.var}` is a "
                                 "name of the entry; " + own_index(e.op, e.var, taken))
            return A.Agg(e.op, e.var, self.expr(e.n), self.expr(e.body), self.pos(e.pos),
                         None if e.var_pos is None else self.pos(e.var_pos))
        return e

    def ref(self, r: A.Var) -> A.Var:
        out = self.expr(r)
        if not isinstance(out, A.Var):
            raise self.error(r.pos, f"`{r.dotted}` names a pool or stage here")
        return out

    def own_stage(self, p: Pos) -> A.Var:
        if self.q.item.serve is None:
            raise self.error(p, f"queue `{self.q.name}` has no `serve`, so it has no stage of its own to run")
        return A.Var([(self.q.name, self.index)], self.pos(p))

    def stmt(self, s: Any, fb: Any) -> list[Any]:
        t = type(s)
        if t is A.SMark:
            return [A.SSet(f"{self.q.name}.{s.name}", A.Var([("now", None)], self.pos(s.pos)), self.pos(s.pos))]
        if t is A.STransfer and not s.on and s.index is None and not self.gateway:
            return self.pull(s)
        n = A.map_stmt(s, self.expr, self.ref, fb, self.pos)
        if t is A.SSet or t is A.SChoose:
            n.name = self.local(s.name)
        elif t is A.SRun and not s.stages:
            n.stages = [self.own_stage(s.pos)]
        elif (t is A.SServing and not s.on and s.index is None and s.verb != "tool"
              and self.q.item.serve is not None):
            n.on = [self.own_stage(s.pos)]
        return [n]

    def pull(self, s: A.STransfer) -> list[Any]:
        q = self.q
        rel = q.pulls
        if rel is None:
            raise self.error(s.pos, f"`{q.name}`'s `transfer` names no NIC and `{q.name}` pulls from no "
                             f"queue: declare `{q.name} pull SOURCE share …;`, or write `transfer on …`")
        if self.src is None:
            raise self.error(s.pos, "a read takes `from` the entry's source; call the entry with `from`")
        if s.src.simple != self.entry.src:
            raise self.error(s.src.pos, f"a read takes from the entry's source, `from {self.entry.src}`")
        src_queue = self.src.parts[0][0].split(".")[0]
        if src_queue != rel.source:
            # at the call's `from`, what its writer chose, as the caller wrote it (`from Q`, not the pool it
            # gets, `Q.kv`), and a note at the read: it was at the read inside the entry, `from Q.kv`, the
            # call a note under it
            ctx = self.rw.ctx
            source = self.rw.queues.get(rel.source)
            want = rel.source + ("[…]" if source is not None and source.family else "")
            given = src_queue + ("[…]" if self.src.parts[0][1] is not None else "")
            name = f"{q.name}.{self.entry.verb}"
            e = ctx.error(self.src.pos, f"`{name}` is called `from {given}`, and `{q.name}` pulls from "
                          f"`{rel.source}` (`{q.name} pull {rel.source}`): an entry of `{q.name}` that reads is "
                          f"called `from {want}`")
            raise ctx.reporter.noted(e, s.pos, f"the read of `{name}`, a `transfer` without `on`, takes from "
                                     "the call's `from`")
        p = self.pos(s.pos)
        out: list[Any] = []
        if q.pull_latency is not None:
            out.append(A.SRun([A.Var([(f"{q.name}.nic.latency", self.index)], p)], "plain", q.pull_latency, p))
        src_idx = self.src.parts[-1][1]
        on = [A.Var([(f"{rel.source}.nic", src_idx)], p), A.Var([(f"{q.name}.nic", self.index)], p)]
        out.append(A.STransfer(None, on, self.expr(s.work), self.src, self.ref(s.dst), self.expr(s.amount), p,
                               pulled=True))
        self.rw.ctx.notes.setdefault("pull_read", set()).add(q.name)
        return out


def rewrite(module: A.Module, ctx: Any) -> A.Module:
    if not any(isinstance(i, (A.QueueItem, A.PullItem)) for i in module.items) and not _has_sugar(module):
        return module
    return QueueRewriter(module, ctx).run()


def _has_sugar(module: A.Module) -> bool:
    for item in module.items:
        for b in A.item_blocks(item):
            for s in A.walk_stmts(b):
                if isinstance(s, (A.SQCall, A.SMark)) or (isinstance(s, A.SRequest) and s.gateway):
                    return True
    return False


LAYER = SugarLayer("queues", grammar_text("queues"), BUILDERS, rewrite)

__all__ = ["LAYER", "ROLES", "TRACE_ATTRIBUTES"]
