"""An option written as its default compiles to the IR of the declaration that leaves it out, byte for byte.

IR equivalences are how conformance is checked, and a program's IR hash is what a report says it ran, so two
programs that mean the same have one IR. ``serve admission;`` and ``fifo (1)`` were one node with their
omission already (and a link's ``latency 0``); ``evict lru;``, ``preempt none;``, ``queue fifo;``, ``cap inf;``, ``chunk inf;`` and
``warmup 0;`` were written into the IR (``"evict":{"kind":"EvictLru"}``), since the IR leaves a field out only
when its value is the default object itself (serq_frontend.link.written_defaults_left_out). Every option
whose default can be written is here, each alone and all at once; the command line's ``--warmup 0`` and
``--seed 1`` too (serq.loading.apply_run_overrides). ``budget inf;`` is the one that stays apart: the IR keeps
``budget_given`` so that ``serq check`` can note a step stage given no budget (docs/language.md, "Defaults
written out").
"""

from __future__ import annotations

import pytest
import serq_ir
from serq.loading import apply_run_overrides
from sqhelpers import compile_src, ir_bytes

POOL = """stage svc : fifo;
pool kv { cap 10; POOL }
pool free { FREE }
workload { arrive poisson(1); }
session { hold kv (1), free (1) { run svc (1); } end; }
run { horizon 10; RUN }
"""

STEP = """pool kv { cap 100; admit via E; POOL }
stage E : step { budget 8; cost 1; STEP memory kv; }
stage svc : fifo STAGE;
workload { arrive poisson(1); }
session { hold kv (1) { run E prefill (4) growing kv; run svc (1); } end; }
run { horizon 10; }
"""

QUEUE = """queue D : decode {
  pool kv { cap 100; admit via D; POOL }
  serve step { budget 8; cost 1; STEP memory kv; }
  decode (prompt) { hold kv (prompt) { decode (1) growing kv; } }
}
workload { arrive poisson(1); }
session { set prompt = 4; D.decode (prompt); end; }
run { horizon 10; }
"""

LINK = """queue L : link { serve ps(10) STAGE; }
stage svc : fifo;
pool p { cap 10; }
pool q { cap 10; }
workload { arrive poisson(1); }
session { hold p (1) { run svc (1); } cache (1) lease p (inf); hold q (1) { transfer on L (1) from p to q (1); } end; }
run { horizon 10; }
"""

# (template, the placeholder, the option written as its default): every option with a default that can be
# written, in a top-level pool, a step stage, a fifo, a queue's own pool and serve, and the run block
DEFAULTS = [
    (POOL, "POOL", "evict lru;"),
    (POOL, "POOL", "preempt none;"),
    (POOL, "POOL", "queue fifo;"),
    (POOL, "POOL", "cache computed;"),
    (POOL, "FREE", "cap inf;"),
    (POOL, "RUN", "warmup 0;"),
    (POOL, "RUN", "seed 1;"),
    (STEP, "STEP", "serve admission;"),
    (STEP, "STEP", "chunk inf;"),
    (STEP, "STAGE", "(1)"),
    (STEP, "POOL", "evict lru;"),
    (STEP, "POOL", "preempt none;"),
    (STEP, "POOL", "queue fifo;"),
    (STEP, "POOL", "cache computed;"),
    (QUEUE, "POOL", "evict lru; preempt none; queue fifo; cache computed;"),
    (QUEUE, "STEP", "serve admission; chunk inf;"),
    (LINK, "STAGE", "latency 0"),
]
NAMES = {id(POOL): "pool", id(STEP): "step", id(QUEUE): "queue", id(LINK): "link"}
HOLES = ("POOL", "FREE", "RUN", "STEP", "STAGE")


def _ir(template: str, **given: str) -> bytes:
    src = template
    for hole in HOLES:
        src = src.replace(hole, given.get(hole, ""))
    return ir_bytes(compile_src(src, sets={}, defs={}))


@pytest.mark.parametrize("template, hole, written", DEFAULTS,
                         ids=[f"{NAMES[id(t)]}-{w}" for t, h, w in DEFAULTS])
def test_the_default_written_out_is_the_omission(template, hole, written):
    assert _ir(template, **{hole: written}) == _ir(template)


def test_every_default_at_once_is_the_omission():
    every = {h: " ".join(w for t, hh, w in DEFAULTS if t is POOL and hh == h) for h in ("POOL", "FREE", "RUN")}
    assert _ir(POOL, **every) == _ir(POOL)
    every = {h: " ".join(w for t, hh, w in DEFAULTS if t is STEP and hh == h) for h in ("POOL", "STEP", "STAGE")}
    assert _ir(STEP, **every) == _ir(STEP)


@pytest.mark.parametrize("template, hole, other", [
    (POOL, "POOL", "evict by (age);"),
    (POOL, "POOL", "queue by (serial);"),
    (POOL, "FREE", "cap 1e300;"),
    (POOL, "POOL", "block 1;"),  # (whole units, evicted block by block from the tail: not the omission)
    (POOL, "RUN", "warmup 1;"),
    (POOL, "RUN", "seed 2;"),
    (STEP, "POOL", "preempt lifo;"),
    (STEP, "POOL", "cache scheduled;"),
    (STEP, "STEP", "chunk 1e300;"),
    (STEP, "STEP", "serve decode first;"),
    (STEP, "STAGE", "(2)"),
    (LINK, "STAGE", "latency 1"),
])
def test_an_option_that_is_not_the_default_is_kept(template, hole, other):
    # (the comparison can fail: what is not the default still makes another IR)
    assert _ir(template, **{hole: other}) != _ir(template)


def test_a_budget_of_inf_written_keeps_budget_given():
    src = STEP.replace("budget 8; ", "").replace("STEP", "").replace("POOL", "").replace("STAGE", "")
    given = compile_src(src.replace("cost 1;", "cost 1; budget inf;"), sets={}, defs={})
    left = compile_src(src, sets={}, defs={})
    assert given.stages[0].kind.budget_given is True and left.stages[0].kind.budget_given is False
    assert given.stages[0].kind.budget.value == left.stages[0].kind.budget.value == "inf"


@pytest.mark.parametrize("override", [{"warmup": 0}, {"warmup": 0.0}, {"seed": 1}, {"warmup": 0, "seed": 1}])
def test_a_run_setting_given_on_the_command_line_as_its_default(override):
    base = compile_src(POOL.replace("POOL", "").replace("FREE", "").replace("RUN", ""), sets={}, defs={})
    over = apply_run_overrides(base, **override)
    assert serq_ir.encode(over, spans=False) == serq_ir.encode(base, spans=False)
    assert serq_ir.encode(apply_run_overrides(base, warmup=1), spans=False) != serq_ir.encode(base, spans=False)
