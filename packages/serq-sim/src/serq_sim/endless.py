"""A session block no session ever leaves: a ``loop`` with no ``end;`` in it that every session reaches.

``loop { … }`` repeats its block until an ``end;`` in it ends the session (docs/language.md), and a session
ends otherwise only at the end of its block or where a pool rejects a hold that can never fit it
(pools.admission.reject). A loop whose block has no ``end;`` and no hold that a pool could reject keeps every
session that reaches it for ever; when the statements before it can end no session either, every session
that starts stays live to the end of the run. Under ``arrivals N`` (which drains, so ends, only when every
session has ended), a batch or presets (which end when no event is left) and a horizon of inf, such a run
never ends: it ran until the process was killed. The simulation refuses it at its set-up
(:func:`endless_loop`, read by engine.Simulation), unless ``--max-events`` or ``--max-wall`` bounds it. A
loop with no run, hold or grow in it, whose passes never take simulated time, is left to the no-progress
guard, which stops it at its millionth pass at one instant naming the time and the session.

The judgement is sound, not complete: it names a loop only where no session can leave it, whatever the
values of the program's expressions (a hold a pool rejects is one of constant units and reserve above the
pool's capacity; one of computed units or reserve is taken as one a pool may reject; a growth, ``grow`` or
a run ``growing`` a pool, is taken as one that may end it: it may preempt its own hold, which is executed
again, and the errors of a hold that outgrows its pool say more). A loop left only
through an ``end;`` that no value ever reaches (``branch (0) { end; }``) is not judged, and runs until a bound
or a signal stops it.
"""

from __future__ import annotations

import math

from serq_ir import nodes as N


def endless_loop(program) -> N.Loop | None:
    """The ``loop`` every session of ``program`` reaches and none leaves (the module's rule), ``None`` when
    some session may end: the first statement of the session block, at its top or in the body of a hold
    there, that is a loop with no way out, before which no statement can end a session."""
    return _first_endless(program, program.session)


def _first_endless(program, stmts) -> N.Loop | None:
    for st in stmts:
        if isinstance(st, N.Loop):
            return None if _may_end(program, st.body) or not _may_wait(st.body) else st
        if isinstance(st, N.Hold):
            if not all(_never_rejected(program, hp) for hp in st.pools):
                return None
            inner = _first_endless(program, st.body)
            if inner is not None:
                return inner
            if _may_end(program, st.body):
                return None
            continue
        if _may_end(program, [st]):
            return None
    return None


def _may_end(program, stmts) -> bool:
    """Whether running ``stmts`` can end the session: an ``end;`` in them, or a hold a pool may reject."""
    for st in stmts:
        if isinstance(st, N.End):
            return True
        if isinstance(st, N.Hold):
            if not all(_never_rejected(program, hp) for hp in st.pools) or _may_end(program, st.body):
                return True
        elif isinstance(st, N.Branch):
            if _may_end(program, st.then) or _may_end(program, st.orelse):
                return True
        elif isinstance(st, N.Loop):
            if _may_end(program, st.body):
                return True
        elif isinstance(st, N.Grow) or (isinstance(st, N.Run) and st.growing is not None):
            return True  # (a growth may preempt: the hold is executed again, and its errors say more)
        elif not isinstance(st, (N.Turn, N.Set, N.Observe, N.Record, N.Drop, N.Release, N.Load, N.Run, N.Choose)):
            return True  # (a statement of a kind this rule does not know: taken as one that may end it)
    return False


def _may_wait(stmts) -> bool:
    """Whether running ``stmts`` can take simulated time: a run, a hold or a grow in them. A loop whose passes
    never do is stopped by the no-progress guard at its millionth pass at one instant, an error naming the
    time and the session (engine.Simulation.spin_error), and is left to it."""
    for st in stmts:
        if isinstance(st, (N.Run, N.Hold, N.Grow)):
            return True
        if isinstance(st, N.Branch) and (_may_wait(st.then) or _may_wait(st.orelse)):
            return True
        if isinstance(st, N.Loop) and _may_wait(st.body):
            return True
    return False


def _never_rejected(program, hp: N.HoldPool) -> bool:
    """Whether no pool can reject this pool's part of a hold: its units and reserve are constants that fit the
    pool's capacity, rounded up to its blocks as the admission rounds them."""
    pool = program.pools[hp.pool.pool]
    # (every member may be the one the hold names: the least of their caps where they differ)
    cap = min(math.inf if c == "inf" else float(c) for c in (pool.caps or (pool.cap,)))
    for amount in (hp.units, hp.reserve):
        if amount is None:
            continue
        if not isinstance(amount, N.Num) or amount.value == "inf":
            return False
        v = float(amount.value)
        if pool.block:
            v = math.ceil(v / pool.block) * pool.block
        if not 0.0 <= v <= cap:
            return False
    return True


def starts_sessions(program, arrivals) -> bool:
    """Whether a run of ``program`` under ``arrivals`` (the run's count of open arrivals, None without one)
    starts a session: a preset, an open workload that may arrive, a batch or a population of at least one."""
    w = program.workload
    a = w.arrive
    if w.presets:
        return True
    if isinstance(a, N.Poisson | N.Renewal):
        return arrivals is None or arrivals > 0
    return isinstance(a, N.Batch | N.Closed) and a.n > 0


def endless_message(origins: dict, arrivals) -> str:
    """The refusal of a run no session of which ever ends, said at the loop: the settings that make it one
    with no end, as ``origins`` (errors.setting_origins) name them."""
    from serq.errors import printable

    def named(name: str, value: str) -> str:
        origin = origins.get(name)
        return printable(origin) if isinstance(origin, str) else f"`run {{ {name} {value}; }}`"

    horizon = named("horizon", "inf") if origins.get("horizon") is not None else "no horizon"
    ends = (f"{named('arrivals', str(arrivals))} ends the run only when every session has ended"
            if arrivals is not None else "the run ends only when no event is left")
    return (f"this `loop` has no `end;` in it, so every session that starts stays in it for ever, and the run "
            f"never ends: {ends}, under {horizon}, and no --max-events or --max-wall stops it; give the loop a "
            "way out (`branch (…) { end; }` in it), a finite horizon, or --max-events N or --max-wall S (a "
            "partial report where it stops)")
