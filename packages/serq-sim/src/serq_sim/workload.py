"""The workload: arrivals (poisson, renewal, batch, closed, presets, ``arrivals N``), a session's spawn
(``init``, a preset's attributes or a trace session), and ``turn`` (the next preset or trace turn,
``more``, the workload's ``turn`` block). The functions are the simulation's methods of the same
names (arrival events are its callbacks)."""

from __future__ import annotations

import heapq
import math

from serq_ir import nodes as N
from serq_ir.rules import gap_problem, show_number

from .compile import num
from .errors import SimError, format_error
from .rand import place_turn
from .session import SLOT_TURN, Session
from .stats import HUGE_SPAN

INF = math.inf
_log = math.log
_heappush = heapq.heappush

#: the no-progress guard of a closed workload: more than REPLACE_LIMIT + REPLACE_PER_MEMBER × n sessions
#: replaced at one instant (``arrive closed(n)``) is a run-time error. A session that ends at the instant
#: it started (its runs take no time, or its hold is rejected as never fitting) is replaced at that instant
#: by one that does the same, for ever, and no event is made on the way (the other guards count events and
#: loop passes): the run never left its instant. Legitimate work at one instant replaces each member a few
#: times at most.
REPLACE_LIMIT = 100_000
REPLACE_PER_MEMBER = 100
#: and more than REPLACE_SECONDS of CPU time (time.process_time) spent at one instant once it replaced more
#: sessions there than the workload has members (then some member's session started and ended at that
#: instant) is the same error, whatever the count: a session that draws ~erlang(100000, 1) takes some 60 ms,
#: so the count alone came after hours. The clock is read only past that many replacements at one instant,
#: and reading it draws nothing: a run that never replaces more than its members at one instant is
#: untouched, and none draws another number.
REPLACE_SECONDS = 5.0


def replace_limit(n: int) -> int:
    """The replacements of ``arrive closed(n)`` allowed at one instant."""
    return REPLACE_LIMIT + REPLACE_PER_MEMBER * n


#: what the closed workload's guard says of the sessions it replaced: what each did, not what the program has
#: (a session that reaches its run of time one time in a million, `branch with (0.999999) { run d (0); }
#: else { run d (1); }`, has one, and meets the guard all the same some nine runs in ten)
_ENDLESS = ("(sessions ended at the instant they started, having reached no run, hold or grow that took time or "
            "met a hold rejected as never fitting, and each was replaced at once)")


def replace_message(limit: int, rejected: tuple | None = None) -> str:
    """The run-time error of a closed workload past :func:`replace_limit` (both tiers); ``rejected``: see
    :func:`rejected_words`."""
    if rejected is not None:
        return (f"no progress: {rejected_words(*rejected)}; the closed workload replaced more than {limit} ended "
                f"sessions at one instant without simulated time passing, the last of them ended by this rejection "
                f"{_REJECTED_ADVICE}")
    return (f"no progress: the closed workload replaced more than {limit} ended sessions at one instant "
            f"without simulated time passing {_ENDLESS}")


def replace_time_message(n: int, seconds: float, rejected: tuple | None = None) -> str:
    """The run-time error of a closed workload past :data:`REPLACE_SECONDS` (both tiers); ``rejected``: see
    :func:`rejected_words`."""
    members = f"{n} member{'s' if n != 1 else ''}"
    if rejected is not None:
        return (f"no progress: {rejected_words(*rejected)}; the closed workload replaced more ended sessions at one "
                f"instant than its {members} and spent more than {seconds:g} s of CPU time there without simulated "
                f"time passing, the last of them ended by this rejection {_REJECTED_ADVICE}")
    return (f"no progress: the closed workload replaced more ended sessions at one instant than its {members} "
            f"and spent more than {seconds:g} s of CPU time there without simulated time passing {_ENDLESS}")


#: what the guard's error located at a rejecting hold tells the user to change
_REJECTED_ADVICE = "(give the pool a larger capacity, or the hold an amount within it)"


def rejected_words(pool: str, what: str, ask: float, rounded: float, cap: float) -> str:
    """What a hold rejected as never fitting did, when the session whose end tripped a closed workload's guard
    was ended by it: the guard's error is located at that hold (the statement to change), not at ``arrive
    closed``. ``pool`` the member's label, ``what`` ``"units"`` or ``"reserve"`` (the amount it was judged by),
    ``ask`` that amount, ``rounded`` it in the pool's blocks, ``cap`` the pool's capacity."""
    verb = "asks" if what == "units" else "reserves"
    blocks = f" ({show_number(rounded)} in its blocks)" if rounded != ask else ""
    return (f"the hold {verb} {show_number(ask)} units of pool {pool}{blocks}, above its capacity "
            f"{show_number(cap)}, so it is rejected as never fitting and its session ends at the instant it started")


def start_arrivals(sim) -> None:
    """Schedule the first arrivals, the presets', and spawn a batch or closed workload's sessions."""
    wl = sim.program.workload
    a = sim.arrive
    for k, pr in enumerate(wl.presets):
        sim.at(float(pr.at), sim._arrive_preset, k)
    if isinstance(a, N.Poisson):
        sim.rate = num(a.rate)
        sim._arrive_cb = sim._arrive_poisson
        sim.at(0.0, sim._arrive_poisson)
    elif isinstance(a, N.Renewal):
        _schedule_renewal(sim)
    elif isinstance(a, (N.Batch, N.Closed)):
        for i in range(a.n):
            spawn(sim)
            if i & 4095 == 4095:
                sim.spawn_tick(i + 1)


def _arrive_poisson(sim, _=None) -> None:
    limit = sim.arr_limit
    n = sim.open_arrivals = sim.open_arrivals + 1
    if limit is None or n < limit:
        gap = -_log(1.0 - sim._rand_arr()) / sim.rate
        _heappush(sim.heap, (sim.now + gap, next(sim._seq), sim._arrive_cb, None))
    spawn(sim)


def _schedule_renewal(sim) -> None:
    g = sim.gap_fn(None, None, sim.null_ctx)
    if not (g > 0) or g == INF:
        span = getattr(sim.arrive.gap, "span", None)
        raise SimError(format_error(span, sim.now, None, f"arrive renewal: {gap_problem(g)}", sim.source))
    sim.at(sim.now + g, sim._arrive_renewal)


def _arrive_renewal(sim, _=None) -> None:
    sim.open_arrivals += 1
    if sim.arr_limit is None or sim.open_arrivals < sim.arr_limit:
        _schedule_renewal(sim)
    spawn(sim)


def _arrive_preset(sim, k: int) -> None:
    spawn(sim, sim.program.workload.presets[k])


def spawn(sim, preset: N.Preset | None = None) -> Session:
    serial = sim.next_serial
    sim.next_serial += 1
    s = Session(serial, sim.nattrs)
    now = sim.now  # sim._acc_live(), inlined: once per session (a call costs a few % of an M/M/1)
    if now >= sim.live_next:
        # (the live count's whole integral, its spans of HUGE_SPAN or longer too: Simulation.live_integral)
        sim.live_next = sim.backlog.cut(now, sim.live, sim.live_t, sim.live_integral(), sim.arrivals)
    sim.arrivals += 1
    dt = now - sim.live_t
    if dt > 0.0:
        if dt < HUGE_SPAN:
            sim.a_live += sim.live * dt
        else:
            sim.acc_live_huge(dt)
        sim.live0 = sim.live
    sim.live_t = now
    sim.live += 1
    if preset is not None:
        for sv in preset.attrs:
            s.attrs[sv.slot] = sv.value
        if preset.turns:
            s.preset = [preset.turns, 0]
    elif sim.trace is not None:
        sessions = sim.trace.sessions
        if sim.trace_ordered:
            i = serial % len(sessions)
        else:
            i = int(sim.rngs["trace"].random() * len(sessions))
        s.trace = [sessions[i], 0, i]  # its turns, the next, and which trace session (for its errors)
    if sim.nplaces:  # the session block's draws: a stream per (serial, turn, place)
        w = sim._pl_word(64)  # place_state(w, sim.nplaces), inlined
        s.draws = [w, w] + [0] * sim.nplaces
    if sim.init_fn is not None:  # common random numbers (rand.py): the workload stream of (serial, turn 0)
        sim._wl_seed(sim._wl_base + (serial << 32))
        sim.init_fn(s)
    s.gen = sim.session_fn(s)
    s.in_ready = True
    sim.ready.append(s)
    return s


def turn(sim, s: Session) -> None:
    A = s.attrs
    A[SLOT_TURN] += 1.0
    if s.draws is not None:
        place_turn(s.draws, A[SLOT_TURN])
    if sim.warm:
        sim.turns += 1
    # the next preset turn, or the next trace row: [rows, index of the next] (and a trace's session)
    nxt = s.preset if s.preset is not None else s.trace
    if nxt is not None:
        rows, i = nxt[0], nxt[1]
        if i < len(rows):
            if nxt is s.preset:
                for sv in rows[i]:
                    A[sv.slot] = sv.value
            else:
                for slot, v in zip(sim.trace_slots, rows[i]):
                    if slot is not None:
                        A[slot] = v
            nxt[1] = i + 1
            more = 1.0 if i + 1 < len(rows) else 0.0
            # a row loaded is progress through a finite input: a loop's passes at one instant that each load
            # one do not count towards the spin guard (compile.SPIN_LIMIT), which stopped a trace session of
            # a million turns of no time as a loop that never ends
            s.spin_k = 0
        else:
            more = 0.0
        if sim.slot_more is not None:
            A[sim.slot_more] = more
    if sim.turn_fn is not None:  # the workload stream of (serial, turn)
        sim._wl_seed(sim._wl_base + (s.serial << 32) + int(A[SLOT_TURN]))
        sim.turn_fn(s)
