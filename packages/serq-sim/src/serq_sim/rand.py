"""The random streams of a run.

One seed gives six independent streams, spawned from ``numpy.random.SeedSequence(seed)`` in this order:
``arrivals`` (Poisson and renewal gaps), ``workload`` (draws in ``init`` and ``turn``), ``session``
(draws made for no session's block: none a valid program makes, since a stage's expressions, a pool's
queue and preemption keys and gauges may not draw, ``serq_ir.rules.DRAWS_AT``; spawned all the same, so that
the others keep their seeds),
``eviction`` (draws in eviction keys and spill clauses), ``trace`` (which trace session an arrival
replays) and ``places`` (one 64-bit word per session at its spawn, which its session block's draws start
from: :func:`place_draw`). Each child sequence seeds a
``random.Random`` (Mersenne Twister) with 128 bits of its state: a draw in the hot path is one call of a C
method, which is several times faster than a numpy scalar draw, and a stream is unaffected by how many
draws the others make.

Common random numbers: the ``workload`` stream does not run on from one draw to the next across sessions.
Before a session's ``init`` block it is reseeded (:func:`workload_key`) from the seed and the session's
serial (turn 0), and before each ``turn`` block from the seed, the serial and the turn number (1, 2, ...):
so a session's ``init`` and ``turn`` draws (its prompt and output lengths, ``more``) depend only on the
seed, its serial, its turn and the draw's place in the block, never on the order in which the deployment's
schedule happened to reach the sessions' turns. Two programs that differ only in the deployment draw the
same workload under one seed. The session block's draws (tool times, ``branch with``, a hold's header:
every draw under ``program.session``) likewise come from a stream of their own per session, turn and
place (the draw's position among the session block's draws): :func:`place_draw`. The arrival gaps (``arrivals``) and the trace session each arrival replays
(``trace``) are drawn in the order of the sessions' serials already, one stream each.

The seed sequence is computed here in pure Python (:func:`seed_state`), without importing numpy: the
entropy mixing of numpy's ``SeedSequence`` (O'Neill's ``seed_seq`` hash: ``hashmix`` and ``mix`` on 32-bit
words, a pool of four words), its ``spawn`` (the child's spawn key appended to the entropy) and its
``generate_state``. The states are numpy's word for word (``tests/test_rand.py`` compares them), so the
streams are the ones a numpy-seeded run had.
"""

from __future__ import annotations

import math
import random

from serq_ir.rules import MAX_CV2, MAX_PHASES

STREAMS = ("arrivals", "workload", "session", "eviction", "trace", "places")


_M32 = 0xFFFFFFFF
# The constants of numpy's SeedSequence (O'Neill's seed_seq).
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_POOL = 4  # words of the entropy pool (numpy's default, 128 bits)


def _entropy_words(seed: int, spawn_key: tuple[int, ...]) -> list[int]:
    """The seed and the spawn key as 32-bit words, least significant first, the seed's words padded with
    zeros to the pool size when there is a spawn key (as numpy does since 1.19)."""

    def words(n: int) -> list[int]:
        out = [n & _M32]
        n >>= 32
        while n:
            out.append(n & _M32)
            n >>= 32
        return out

    run = words(seed)
    key = [w for k in spawn_key for w in words(k)]
    if key and len(run) < _POOL:
        run += [0] * (_POOL - len(run))
    return run + key


def _pool(entropy: list[int]) -> list[int]:
    """The four pool words after mixing ``entropy`` in."""
    hc = _INIT_A

    def hashed(value: int) -> int:
        nonlocal hc
        value ^= hc
        hc = (hc * _MULT_A) & _M32
        value = (value * hc) & _M32
        return value ^ (value >> 16)

    def mix(x: int, y: int) -> int:
        r = (_MIX_L * x - _MIX_R * y) & _M32
        return r ^ (r >> 16)

    pool = [hashed(entropy[i] if i < len(entropy) else 0) for i in range(_POOL)]
    for src in range(_POOL):  # every word affects every other, later words the earlier ones too
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = mix(pool[dst], hashed(pool[src]))
    for extra in entropy[_POOL:]:  # entropy beyond the pool, mixed into every word
        for dst in range(_POOL):
            pool[dst] = mix(pool[dst], hashed(extra))
    return pool


def seed_state(seed: int, spawn_key: tuple[int, ...] = (), words: int = 4) -> list[int]:
    """``numpy.random.SeedSequence(seed, spawn_key=spawn_key).generate_state(words, numpy.uint32)`` as
    a list of ints, computed without numpy. ``seed`` and the keys are non-negative integers."""
    if seed < 0 or any(k < 0 for k in spawn_key):
        raise ValueError("seed sequence entropy must be non-negative")
    pool = _pool(_entropy_words(seed, spawn_key))
    hc = _INIT_B
    out = []
    for i in range(words):
        value = pool[i % _POOL] ^ hc
        hc = (hc * _MULT_B) & _M32
        value = (value * hc) & _M32
        out.append(value ^ (value >> 16))
    return out


def streams(seed: int) -> dict[str, random.Random]:
    """The six streams of ``seed`` (any integer; negative seeds are taken modulo 2**64): stream ``i``
    is seeded with the 128 bits of child ``i`` of the seed sequence of ``seed``, word ``j`` of its state
    as bits ``32 j`` to ``32 j + 31``."""
    root = int(seed) % (1 << 64)
    out = {}
    for i, name in enumerate(STREAMS):
        state = seed_state(root, (i,))
        out[name] = random.Random(sum(w << (32 * j) for j, w in enumerate(state)))
    return out


#: bit offsets of the key a workload block reseeds its stream with: seed, then serial, then turn
_KEY_SEED, _KEY_SERIAL = 96, 32


def workload_base(seed: int) -> int:
    """The part of every :func:`workload_key` of ``seed`` that the seed makes (above a tag bit, so no key
    is a plain seed's)."""
    return ((int(seed) % (1 << 64)) << _KEY_SEED) | (1 << (_KEY_SEED - 1))


def workload_key(seed: int, serial: int, turn: int) -> int:
    """What the ``workload`` stream is seeded with (``random.Random.seed``) before session ``serial``'s
    ``init`` block (``turn`` 0) or its ``turn`` block number ``turn``: ``workload_base(seed) + serial *
    2**32 + turn`` (serials below 2**63, turns below 2**32: every key distinct)."""
    return workload_base(seed) + (serial << _KEY_SERIAL) + turn


# The session block's draws: a counter-based stream per (seed, serial, turn, place). A draw is SplitMix64's
# output function (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014: Stafford's
# variant 13 of the MurmurHash3 finalizer, a bijection of 64-bit words) applied to a word that only the
# session's word, its turn, the draw's place and how many draws that place made before in that turn make.
# A session's word is the next 64 bits of the ``places`` stream at its spawn (sessions spawn in the order
# of their serials, one word each), so no stream object is seeded per session (seeding a Mersenne Twister
# costs ~5 us).
_M64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_MIX_1, _MIX_2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
_U53 = 2.0 ** -53


def mix64(z: int) -> int:
    """SplitMix64's output function of the 64-bit word ``z``."""
    z = ((z ^ (z >> 30)) * _MIX_1) & _M64
    z = ((z ^ (z >> 27)) * _MIX_2) & _M64
    return z ^ (z >> 31)


def place_state(word: int, nplaces: int) -> list:
    """A session's draw state for its turn 0, from its session word (64 bits of the ``places`` stream):
    ``[turn word, session word, count of place 0, ...]``; turn 0's word is the session word."""
    return [word, word] + [0] * nplaces


_ZEROS = [0] * 64


def place_turn(d: list, turn) -> None:
    """Move draw state ``d`` to turn number ``turn`` (the session's ``turn_no``, counted by ``turn;``): the
    turn word becomes ``mix64(session word + turn * GAMMA)``, every place's count 0."""
    t = int(turn) if turn == turn and abs(turn) < 2.0 ** 62 else 0
    d[0] = mix64((d[1] + t * _GAMMA) & _M64) if t else d[1]
    d[2:] = _ZEROS[:len(d) - 2] if len(d) - 2 <= len(_ZEROS) else [0] * (len(d) - 2)


def place_draw(d: list, p: int) -> float:
    """The next uniform in [0, 1) of place ``p`` in draw state ``d``: its draw number ``k`` (0, 1, ... in
    this turn) is ``mix64(turn word + (p * 2**32 + k) * GAMMA) >> 11`` times 2**-53."""
    k = d[p + 2]
    d[p + 2] = k + 1
    z = (d[0] + ((p << 32) + k) * _GAMMA) & _M64
    z = ((z ^ (z >> 30)) * _MIX_1) & _M64
    z = ((z ^ (z >> 27)) * _MIX_2) & _M64
    return ((z ^ (z >> 31)) >> 11) * _U53


_log = math.log


def d_exp(rnd, mean: float) -> float:
    return -mean * _log(1.0 - rnd())


def d_uniform(rnd, lo: float, hi: float) -> float:
    w = hi - lo
    if w == math.inf:  # finite bounds farther apart than the largest double (-1e308, 1e308): lo + inf * u
        u = rnd()  # was inf (or NaN at u = 0); weighed, the draw stays between the bounds
        return lo * (1.0 - u) + hi * u
    return lo + w * rnd()


def d_erlang(rnd, k: float, mean: float) -> float:
    if not -math.inf < k < math.inf:  # NaN or infinitely many phases: not a number (the caller says where)
        return math.nan
    n = max(int(k), 1)
    m = mean / n
    return sum(-m * _log(1.0 - rnd()) for _ in range(n))


def d_h2(rnd, mean: float, cv2: float) -> float:
    """Hyperexponential with balanced means: ``p/λ1 = (1-p)/λ2``; mean and cv² as given (cv² ≥ 1)."""
    cv2 = max(cv2, 1.0)
    p = 0.5 * (1.0 + math.sqrt((cv2 - 1.0) / (cv2 + 1.0)))
    q = p if rnd() < p else 1.0 - p  # the branch drawn: its rate is 2q / mean
    u = rnd()
    if mean == 0:  # both branches are the point 0 (as ~exp(0) is)
        return 0.0
    if mean in (math.inf, -math.inf):  # the rate 2q / mean is 0: the draw is the mean (as ~exp(inf) is)
        return mean
    return -_log(1.0 - u) / (2.0 * q / mean)


def d_bernoulli(rnd, p: float) -> float:
    return 1.0 if rnd() < p else 0.0


def d_det(rnd, x: float) -> float:
    return x


# Checked draws: a draw whose parameters are computed (a constant one was checked at link time) checks them
# when it is made (serq_ir.rules.draw_problem); ``fail(message, sid, who, t)`` raises the run-time error.


def _bad(dist, args, fail, sid, who, t):
    from serq_ir.rules import draw_problem

    fail(draw_problem(dist, list(args)), sid, who, t)


def k_det(rnd, x, fail, sid, who, t):
    if x != x:  # a NaN parameter, as every law's (serq_ir.rules.draw_problem)
        _bad("det", (x,), fail, sid, who, t)
    return x


def k_exp(rnd, mean, fail, sid, who, t):
    if not mean >= 0:
        _bad("exp", (mean,), fail, sid, who, t)
    return -mean * _log(1.0 - rnd())


def k_uniform(rnd, lo, hi, fail, sid, who, t):
    if not (-math.inf < lo <= hi < math.inf):
        _bad("uniform", (lo, hi), fail, sid, who, t)
    return d_uniform(rnd, lo, hi)


def k_erlang(rnd, k, mean, fail, sid, who, t):
    if not (1 <= k <= MAX_PHASES and k == int(k) and mean >= 0):
        _bad("erlang", (k, mean), fail, sid, who, t)
    return d_erlang(rnd, k, mean)


def k_h2(rnd, mean, cv2, fail, sid, who, t):
    if not (mean >= 0 and 1 <= cv2 <= MAX_CV2):
        _bad("h2", (mean, cv2), fail, sid, who, t)
    return d_h2(rnd, mean, cv2)


def k_bernoulli(rnd, p, fail, sid, who, t):
    if not 0 <= p <= 1:
        _bad("bernoulli", (p,), fail, sid, who, t)
    return 1.0 if rnd() < p else 0.0


def k_branch_with(rnd, p, fail, sid, who, t):
    """``k_bernoulli`` of the draw ``branch with (p)`` is written as (serq_ir.rules.branch_with_draw): its
    error in the words the program wrote (it named the internal ``~bernoulli(p)``)."""
    if not 0 <= p <= 1:
        from serq_ir.rules import branch_with_problem

        fail(branch_with_problem(p), sid, who, t)
    return 1.0 if rnd() < p else 0.0

