"""A run on a step stage's member that holds another member's memory, or that another member admitted.

Memory: `prefill on engine[0] … growing kv[1]` beside `stage engine[N] : step { memory kv; }` and `pool kv[N]`,
which pair `engine[i]` with `kv[i]` (language.txt §3, Pools: "stage E[N] : step { memory kv; } next to pool
kv[N] counts kv[i] for E[i]"). The linker refuses it where both indexes are numbers; where one is computed
(lib/vllm.sq's `vllm_request(reqs[j], kv[j], engine[0], …)`), the run says so once a statement, at the first
run that does it, with the time and the session, in a warning of the report (code ``other-memory``,
:func:`warnings`). The run goes on as written: the iteration counts that KV in no `kv_decode` or `kv_prefill`
of its engine, and a growth of it preempts among the residents of the engine whose memory it is (§3, grow),
not among the grower's (docs/language.md, "A run on another member's memory").

Admission: `run engine[1] …` inside a hold whose first pool is `reqs[0]`, beside `pool reqs[N] { admit via
engine; }`, which pairs `reqs[i]` with `engine[i]` (§3: "pool q[N] { admit via S; } next to stage S[N] serves
q[i] by S[i]"): engine 0's waiting loop admitted the request, with its budget and its slots, and engine 1
serves it. Refused by the linker where both indexes are numbers, told once a statement where one is computed
(code ``other-admitter``; docs/language.md, "A run on another member's engine"). The hold looked at is the
innermost of the session's holds whose first pool (the queue it waited in) a member of the run's family admits.

The check is compiled into a run statement only where it can find something: a run on a member of a step
family, the stage named by an index, whose memory is a pool family of the same size or whose family admits a
pool (serq_sim.compile, the run of a member)."""

from __future__ import annotations

from typing import Any


def wanted(program: Any, ref: Any) -> bool:
    """Whether a run on stage reference ``ref`` of ``program`` may hold another member's memory or run inside a
    hold another member admitted: a step family of several members whose ``memory`` is a pool family of its size,
    or that a pool's ``admit via`` names."""
    from serq_ir import nodes as N

    stage = program.stages[ref.stage]
    kind = stage.kind
    if ref.index is None or stage.size < 2 or not isinstance(kind, N.Step):
        return False
    if kind.memory is not None and program.pools[kind.memory].size == stage.size:
        return True
    return any(p.admit_via == ref.stage for p in program.pools)


def checker(sim: Any):
    """The check of a run statement (``check(s, stage, growing, sid)``: the session, the stage member its run
    starts on, the pool member it grows or None, the statement's span id); the first run of each statement
    that holds another member's memory is kept in ``sim.other_memory``, by span id: ``(t, serial, stage,
    held, memory)``, the stage member, the pool member it holds and the stage's own memory; the first that runs
    inside a hold another member admitted in ``sim.other_admitter``: ``(t, serial, stage, pool, admitter)``, the
    hold's first pool and the stage member that admits it."""
    first: dict[int, tuple] = sim.other_memory
    admitted: dict[int, tuple] = sim.other_admitter

    def check(s: Any, st: Any, growing: Any, sid: int) -> None:
        mem = st.memory
        if mem is not None and sid not in first:
            family = mem.node
            held = growing if growing is not None and growing.node is family else None
            if held is None:
                for h in reversed(s.holds):
                    pools = [sl.pool for sl in h.slots if sl.pool.node is family]
                    if pools:
                        held = mem if mem in pools else pools[0]
                        break
            if held is not None and held is not mem:
                first[sid] = (sim.now, s.serial, st, held, mem)
        if sid not in admitted:
            family = st.node
            for h in reversed(s.holds):
                via = h.slots[0].pool.via if h.slots else None
                if via is not None and via.node is family:
                    if via is not st:
                        admitted[sid] = (sim.now, s.serial, st, h.slots[0].pool, via)
                    break

    return check


def warnings(sim: Any) -> list[str]:
    """The report's warning of each run statement that held another member's memory (code ``other-memory``),
    in the order they were first met, then of each that ran inside a hold another member admitted (code
    ``other-admitter``)."""
    from serq.errors import place

    from .errors import fmt_time
    from .notes import warning
    from .report import member_label

    def at(sid: int) -> str:
        span = sim.spans[sid] if 0 <= sid < len(sim.spans) else None
        return f" at {place(span)}" if span is not None else ""

    out = []
    for sid, (t, serial, st, held, mem) in getattr(sim, "other_memory", {}).items():
        stage, pool, own = member_label(st), member_label(held), member_label(mem)
        out.append(warning("other-memory", f"the run{at(sid)} on `{stage}` holds `{pool}`, another member's memory "
                           f"(first at t={fmt_time(t)}, session {serial}): `{stage}`'s memory is `{own}`, so "
                           f"its iterations count none of that KV (`kv_decode`, `kv_prefill`), and a growth of "
                           f"`{pool}` preempts among the residents of the engine whose memory it is; run the "
                           f"request on the member whose memory it holds"))
    for sid, (t, serial, st, pool, via) in getattr(sim, "other_admitter", {}).items():
        stage, queue, admitter = member_label(st), member_label(pool), member_label(via)
        out.append(warning("other-admitter", f"the run{at(sid)} on `{stage}` is inside a hold of `{queue}`, which "
                           f"`{admitter}` admits (first at t={fmt_time(t)}, session {serial}): `{admitter}`'s "
                           f"waiting loop admitted the request, with its budget and its slots, and `{stage}` "
                           f"serves it; run the request on the member that admits it"))
    return out
