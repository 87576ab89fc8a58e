"""An independent model of a fifo(c), ps(φ) or delay stage (test_conformance_round32_stage_model.py), written
from language.txt §3's words, not from the simulator's code: "fifo(c): c servers, jobs in arrival order at
rate 1. ps(φ): every job at once, each at φ(present)/present. delay: every job on its own at rate 1", and
Ties: "Events at one instant: the order they were scheduled". A session: `run d (A); run s (W); observe t =
now;`, sessions of `arrive batch(n)` started at 0 in serial order (a delay of 0 completes at once, so those
sessions reach s first, in serial order, then the others by the time their delay ends, ties in serial
order, the order their delays were scheduled).
"""

from __future__ import annotations

import math
import random


def draw(rng: random.Random) -> tuple[str, float | None, list[dict]]:
    kind = rng.choice(["fifo", "ps", "delay"])
    par = rng.choice([1, 2, 3]) if kind == "fifo" else rng.choice([0.5, 1, 2.5]) if kind == "ps" else None
    sessions = [dict(A=rng.choice([0, 0.5, 1, rng.uniform(0, 3)]), W=rng.choice([0.5, 1, rng.uniform(0.1, 3)]))
                for _ in range(rng.randint(2, 8))]
    return kind, par, sessions


def program(kind: str, par, sessions: list[dict]) -> str:
    def table(k):
        e = repr(sessions[-1][k])
        for s in range(len(sessions) - 2, -1, -1):
            e = f"serial == {s} ? {sessions[s][k]!r} : ({e})"
        return e

    stage = {"fifo": f"fifo({par})", "ps": f"ps({par})", "delay": "delay"}[kind]
    return (f"stage s : {stage};\nstage d : delay;\nworkload {{ arrive batch({len(sessions)}); }}\n"
            f"session {{\n  set A = {table('A')};\n  set W = {table('W')};\n  run d (A);\n  run s (W);\n"
            "  observe t = now;\n}\nrun { horizon 1000; }\n")


def model(kind: str, par, sessions: list[dict]) -> dict[int, float]:
    """Each session's end at s."""
    arrival = sorted(range(len(sessions)), key=lambda s: (sessions[s]["A"] > 0, sessions[s]["A"], s))
    done = {}
    if kind == "delay":
        return {s: p["A"] + p["W"] for s, p in enumerate(sessions)}
    if kind == "fifo":
        free = [0.0] * par
        for s in arrival:
            i = min(range(par), key=lambda i: free[i])  # the server free first
            free[i] = max(free[i], sessions[s]["A"]) + sessions[s]["W"]
            done[s] = free[i]
        return done
    t, left, pending = 0.0, {}, list(arrival)
    while pending or left:
        t_arrive = sessions[pending[0]]["A"] if pending else math.inf
        rate = par / len(left) if left else 0.0
        t_end = t + min(left.values()) / rate if left else math.inf
        step = min(t_arrive, t_end) - t
        for s in left:
            left[s] -= step * rate
        t += step
        if t_arrive <= t_end and pending:
            s = pending.pop(0)
            left[s] = sessions[s]["W"]
        else:
            for s in [s for s in left if left[s] <= 1e-12 * max(1.0, sessions[s]["W"])]:
                done[s] = t
                del left[s]
    return done
