"""Checks of an IR program beyond its schema: every reference names something the program has.

The schema says a slot is an integer; only the program says how many attributes there are. A file a
user wrote by hand, or a tool built, is checked here when it is read, so that a bad reference is one
error naming the place (``$.session[0].slot``) rather than a failure deep inside a simulation.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from .errors import IRError
from .nodes import (
    BUILTIN_ATTRIBUTES,
    Attr,
    Batch,
    Choose,
    Closed,
    Fifo,
    Hold,
    Num,
    Observe,
    Poisson,
    Pool,
    PoolRef,
    Program,
    Ps,
    Run,
    Set,
    SlotValue,
    Stage,
    StageRef,
    Step,
)


def validate(program: Program, *, name: str = "<ir>") -> Program:
    """Raise :class:`IRError` at the first reference to something the program does not have."""
    n_attrs, n_obs = len(program.attributes), len(program.observes)
    n_pools, n_stages = len(program.pools), len(program.stages)

    def fail(path: str, message: str) -> None:
        raise IRError(f"error: {name}: {message} - at '{path}'")

    head = tuple(a.name for a in program.attributes[: len(BUILTIN_ATTRIBUTES)])
    if head != BUILTIN_ATTRIBUTES:
        fail("$.attributes", f"the first attributes must be the built-in {', '.join(BUILTIN_ATTRIBUTES)}")

    def slot(path: str, k: int) -> None:
        if not 0 <= k < n_attrs:
            fail(path, f"attribute slot {k} does not exist (the program has {n_attrs})")

    def walk(obj: Any, path: str) -> None:
        if isinstance(obj, list):
            for i, x in enumerate(obj):
                walk(x, f"{path}[{i}]")
            return
        if not isinstance(obj, msgspec.Struct):
            return
        if isinstance(obj, Attr | Set | Choose | SlotValue):
            slot(f"{path}.slot", obj.slot)
        elif isinstance(obj, Observe) and not 0 <= obj.observe < n_obs:
            fail(f"{path}.observe", f"observe {obj.observe} does not exist (the program has {n_obs})")
        elif isinstance(obj, PoolRef) and not 0 <= obj.pool < n_pools:
            fail(f"{path}.pool", f"pool {obj.pool} does not exist (the program has {n_pools})")
        elif isinstance(obj, StageRef) and not 0 <= obj.stage < n_stages:
            fail(f"{path}.stage", f"stage {obj.stage} does not exist (the program has {n_stages})")
        elif isinstance(obj, Pool | Stage) and obj.size < 1:
            fail(f"{path}.size", f"a family has at least one member, not {obj.size}")
        elif isinstance(obj, Pool) and obj.admit_via is not None and not 0 <= obj.admit_via < n_stages:
            fail(f"{path}.admit_via", f"stage {obj.admit_via} does not exist (the program has {n_stages})")
        elif isinstance(obj, Step) and obj.memory is not None and not 0 <= obj.memory < n_pools:
            fail(f"{path}.memory", f"pool {obj.memory} does not exist (the program has {n_pools})")
        elif isinstance(obj, Hold) and not obj.pools:
            fail(f"{path}.pools", "a hold names at least one pool")
        elif isinstance(obj, Run) and not obj.stages:
            fail(f"{path}.stages", "a run names at least one stage")
        elif isinstance(obj, Run) and len(obj.stages) > 1:
            for i, ref in enumerate(obj.stages):
                if not 0 <= ref.stage < n_stages:
                    break  # the walk below names the dangling reference
                kind = program.stages[ref.stage].kind
                if not (isinstance(kind, Ps) and isinstance(kind.capacity, Num)
                        and kind.capacity.value != "-inf" and (kind.capacity.value == "inf"
                                                              or kind.capacity.value > 0)):
                    fail(f"{path}.stages[{i}]", "every stage of a run over several stages is ps with a "
                         f"constant capacity above 0; {program.stages[ref.stage].name!r} is not")
        elif isinstance(obj, Closed | Batch) and obj.n < 0:
            fail(f"{path}.n", f"a population is not negative ({obj.n})")
        elif isinstance(obj, Fifo) and not (obj.servers == "inf" or (isinstance(obj.servers, float)
                                                                     and obj.servers >= 1
                                                                     and obj.servers == int(obj.servers))):
            fail(f"{path}.servers", f"a fifo has a whole number of servers, at least 1, not {obj.servers}")
        elif isinstance(obj, Poisson) and not (isinstance(obj.rate, float) and 0 < obj.rate < math.inf):
            fail(f"{path}.rate", f"an arrival rate is positive and finite, not {obj.rate}")
        elif isinstance(obj, Pool):
            if isinstance(obj.cap, float) and not obj.cap >= 0 or obj.cap == "-inf":
                fail(f"{path}.cap", f"a capacity is not negative ({obj.cap})")
            if obj.block is not None and not 0 < obj.block < math.inf:
                fail(f"{path}.block", f"a block is positive and finite, not {obj.block}")
        for field in obj.__struct_fields__:
            if field != "span":
                walk(getattr(obj, field), f"{path}.{field}")

    walk(program, "$")
    run = program.run
    if run.arrivals is not None and run.arrivals < 1:
        fail("$.run.arrivals", f"arrivals is a positive integer, not {run.arrivals}")
    if not run.warmup >= 0:
        fail("$.run.warmup", f"warmup is not negative ({run.warmup})")
    return program
