"""A run on a step stage's member that holds another member's memory: `prefill on engine[0] … growing
kv[1]` beside `stage engine[N] : step { memory kv; }` and `pool kv[N]`, which pair `engine[i]` with `kv[i]`
(language.txt §3, Pools: "stage E[N] : step { memory kv; } next to pool kv[N] counts kv[i] for E[i]"). The
linker refuses it where both indexes are numbers; where one is computed (lib/vllm.sq's
`vllm_request(reqs[j], kv[j], engine[0], …)`), the run says so once a statement, at the first run that does
it, with the time and the session, in a warning of the report (code ``other-memory``, :func:`warnings`).
The run goes on as written: the iteration counts that KV in no `kv_decode` or `kv_prefill` of its engine, and
a growth of it preempts among the residents of the engine whose memory it is (§3, grow), not among the
grower's (docs/language.md, "A run on another member's memory").

The check is compiled into a run statement only where it can find something: a run on a member of a step
family whose memory is a pool family of the same size (one of several members, paired member for member),
the stage named by an index (serq_sim.compile, the run of a member). It reads the pool the run grows, when
it is of the memory's family, else the innermost of the session's holds on that family."""

from __future__ import annotations

from typing import Any


def wanted(program: Any, ref: Any) -> bool:
    """Whether a run on stage reference ``ref`` of ``program`` may hold another member's memory: a step
    family of several members whose ``memory`` is a pool family of its size."""
    from serq_ir import nodes as N

    stage = program.stages[ref.stage]
    kind = stage.kind
    if ref.index is None or stage.size < 2 or not isinstance(kind, N.Step) or kind.memory is None:
        return False
    return program.pools[kind.memory].size == stage.size


def checker(sim: Any):
    """The check of a run statement (``check(s, stage, growing, sid)``: the session, the stage member its run
    starts on, the pool member it grows or None, the statement's span id); the first run of each statement
    that holds another member's memory is kept in ``sim.other_memory``, by span id: ``(t, serial, stage,
    held, memory)``, the stage member, the pool member it holds and the stage's own memory."""
    first: dict[int, tuple] = sim.other_memory

    def check(s: Any, st: Any, growing: Any, sid: int) -> None:
        mem = st.memory
        if mem is None or sid in first:
            return
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

    return check


def warnings(sim: Any) -> list[str]:
    """The report's warning of each run statement that held another member's memory (code ``other-memory``),
    in the order they were first met."""
    from serq.errors import place

    from .errors import fmt_time
    from .notes import warning
    from .report import member_label

    out = []
    for sid, (t, serial, st, held, mem) in getattr(sim, "other_memory", {}).items():
        span = sim.spans[sid] if 0 <= sid < len(sim.spans) else None
        at = f" at {place(span)}" if span is not None else ""
        stage, pool, own = member_label(st), member_label(held), member_label(mem)
        out.append(warning("other-memory", f"the run{at} on `{stage}` holds `{pool}`, another member's memory "
                           f"(first at t={fmt_time(t)}, session {serial}): `{stage}`'s memory is `{own}`, so "
                           f"its iterations count none of that KV (`kv_decode`, `kv_prefill`), and a growth of "
                           f"`{pool}` preempts among the residents of the engine whose memory it is; run the "
                           f"request on the member whose memory it holds"))
    return out
