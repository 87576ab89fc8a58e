"""The vLLM engine configuration a serQ program implies (the ``*.target.json`` shape).

A program that is a vLLM engine has one ``step`` stage whose memory is a block pool with ``preempt
lifo`` and whose admission pool (``admit via``) has a cap: the stage's budget is
``max_num_batched_tokens``, the admission pool's cap ``max_num_seqs``, the memory pool's block
``block_size`` and ``cap / block + 1`` blocks ``num_gpu_blocks`` (vLLM keeps one null block), the chunk
cap ``long_prefill_token_threshold``, and the ``serve by`` keys the running order, written in the
reference implementation's serde form (``{"Ctx": "Admission"}``, ``{"Unary": ["Neg", …]}``).
"""

from __future__ import annotations

import math
from typing import Any

from serq import UserError
from serq_ir import nodes as n

_BINARY = {"+": "Add", "-": "Sub", "*": "Mul", "/": "Div", "%": "Rem", "<": "Lt", "<=": "Le", ">": "Gt",
           ">=": "Ge", "==": "Eq", "!=": "Ne", "&&": "And", "||": "Or"}


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def serde_expr(e: n.Expr) -> Any:
    """An IR expression in the reference implementation's serde (externally tagged) form."""
    if isinstance(e, n.Num):
        return {"Num": float(e.value) if not isinstance(e.value, str) else e.value}
    if isinstance(e, n.Ctx):
        return {"Ctx": _camel(e.name)}
    if isinstance(e, n.Unary):
        return {"Unary": ["Neg" if e.op == "-" else "Not", serde_expr(e.arg)]}
    if isinstance(e, n.Binary):
        return {"Binary": [_BINARY[e.op], serde_expr(e.lhs), serde_expr(e.rhs)]}
    if isinstance(e, n.Cond):
        return {"Cond": [serde_expr(e.test), serde_expr(e.then), serde_expr(e.orelse)]}
    if isinstance(e, n.Attr):
        return {"Attr": e.slot}
    if isinstance(e, n.Call):
        return {"Call": [e.fn, [serde_expr(a) for a in e.args]]}
    raise UserError(f"serve key {type(e).__name__} has no vLLM form")


def _const(e: n.Expr | None, what: str) -> float:
    if isinstance(e, n.Num):
        return math.inf if e.value == "inf" else float(e.value)
    raise UserError(f"the engine's {what} is not a constant, so it has no vLLM setting")


def _chunk(e: n.Expr | None) -> int:
    """``long_prefill_token_threshold``: 0 for no cap; the constant of ``long_prefill(reqs, c)``."""
    if e is None:
        return 0
    if isinstance(e, n.Num):
        v = _const(e, "chunk")
        return 0 if math.isinf(v) or v <= 0 else int(v)
    if isinstance(e, n.Cond):  # the lone-request exception: `… ? c : inf`, either way round
        finite = [_chunk(x) for x in (e.then, e.orelse) if isinstance(x, n.Num)]
        if finite:
            return max(finite)
    raise UserError("the engine's chunk is neither a constant nor `test ? c : inf`, so it has no vLLM setting")


def _walk(e: Any) -> Any:
    yield e
    if hasattr(e, "__struct_fields__"):
        for f in e.__struct_fields__:
            v = getattr(e, f)
            if isinstance(v, list):
                for x in v:
                    yield from _walk(x)
            elif hasattr(v, "__struct_fields__"):
                yield from _walk(v)


def _selected(e: n.Expr | None) -> n.Expr | None:
    """``e`` with conditionals on a constant test replaced by the branch they take."""
    while isinstance(e, n.Cond) and isinstance(e.test, n.Num):
        e = e.orelse if e.test.value == 0 else e.then
    return e


def _uses_cache(program: n.Program, pool: int) -> bool:
    """Whether some hold on ``pool`` reads the prefix cache: a cache clause, and a reuse (or, without
    one, the units) that reads ``cachedin`` of the pool."""
    for x in _walk_program(program):
        if isinstance(x, n.Hold) and x.cache is not None and any(hp.pool.pool == pool for hp in x.pools):
            reads = [x.reuse] if x.reuse is not None else [hp.units for hp in x.pools if hp.pool.pool == pool]
            for e in reads:
                if any(isinstance(o, n.Observable) and o.name == "cachedin" for o in _walk(_selected(e))):
                    return True
    return False


def _walk_program(program: n.Program):
    for block in (program.session, program.workload.init, program.workload.turn):
        for s in block:
            yield from _walk(s)


def target(program: n.Program) -> dict[str, Any]:
    steps = [(i, s) for i, s in enumerate(program.stages) if isinstance(s.kind, n.Step)]
    if len(steps) != 1:
        raise UserError(f"a vLLM target needs exactly one step stage; the program has {len(steps)}")
    sid, stage = steps[0]
    kind = stage.kind
    if kind.memory is None:
        raise UserError(f"step stage {stage.name!r} names no memory pool, so it has no KV cache")
    kv = program.pools[kind.memory]
    if kv.block is None:
        raise UserError(f"memory pool {kv.name!r} has no block size")
    admitted = [p for p in program.pools if p.admit_via == sid]
    seqs = min((_const(n.Num(value=p.cap), "cap") for p in admitted), default=math.inf)
    cap = _const(n.Num(value=kv.cap), "memory cap")
    if math.isinf(cap):
        raise UserError(f"memory pool {kv.name!r} has no cap")
    serve = kind.serve
    serve_by = [serde_expr(k) for k in serve.keys] if isinstance(serve, n.ServeBy) else "ExclusivePrefill"
    if serve_by == []:
        serve_by = [{"Ctx": "Admission"}]
    config = {
        "block_size": int(kv.block),
        "enable_prefix_caching": _uses_cache(program, kind.memory),
        "long_prefill_token_threshold": _chunk(kind.chunk),
        "max_num_batched_tokens": int(_const(kind.budget, "budget")),
        "max_num_seqs": None if math.isinf(seqs) else int(seqs),
        "num_gpu_blocks": int(cap // kv.block) + 1,
        "scheduler_cls": "serq_vllm.SerqScheduler",
    }
    return {"config": config, "engine": "vllm", "serve_by": serve_by, "target": "vllm"}
