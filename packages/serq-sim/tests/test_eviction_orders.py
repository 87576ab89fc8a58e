"""Eviction orders: which end LRU evicts from, how ties fall (release order, also for a dead remainder,
which keeps its entry's), an order that re-ranks an entry as it shrinks, and the keyed fast path (an
order with a fixed key) against the scan it replaces: the same evictions, block for block.

The small programs use a delay stage ``d`` (a run of w takes exactly w) and preset sessions, so every
expectation is worked out by hand in the comment above it.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import msgspec
import pytest
import serq_frontend
import serq_report
import serq_sim
from irb import P, at, b, obs, roles, samples
from serq import hookimpl
from serq.plugins import get_plugin_manager
from serq_ir import nodes as N
from serq_sim.policies import EvictionOrder, eviction

ROOT = Path(__file__).resolve().parents[3]


class ByRelease(EvictionOrder):
    """A plugin's order ``key = (last,)``, declared fixed: LRU's order through the keyed path."""

    fixed_key = True

    def key(self, entry):
        return (entry.last,)


class ByReleaseScan(EvictionOrder):
    """The same order, undeclared: every pick evaluates every key."""

    def key(self, entry):
        return (entry.last,)


class LargestFirst(EvictionOrder):
    """``-size``, declared fixed with a key that reads the size."""

    fixed_key = True
    reads_size = True

    def key(self, entry):
        return (-entry.size,)


class Plugin:
    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        register("by_release", ByRelease)
        register("by_release_scan", ByReleaseScan)
        register("largest_first", LargestFirst)


@pytest.fixture(scope="module")
def pm():
    return get_plugin_manager(plugins=[Plugin()])


LAST = N.EvictBy(keys=[N.Ctx(name="last")])
#: Every order here ranks by release time, then release order: lru's.
RELEASE_ORDERS = [N.EvictLru(), LAST, N.Extension(name="by_release"), N.Extension(name="by_release_scan")]


def run(prog, pm):
    return serq_sim.run(prog, pm=pm, check_invariants=True)


@pytest.mark.parametrize("evict", RELEASE_ORDERS, ids=["lru", "by-last", "plugin-fixed", "plugin-scan"])
def test_least_recently_released_goes_first_ties_in_release_order(evict, pm):
    p = P()
    pool = p.pool("p", cap=64.0, block=16.0, evict=evict)
    d = p.stage("d", N.Delay())
    probe = [p.run(d, b("-", 10, p.ex("now"))), p.observe("left", obs("cachedin", pool))]
    prog = p.build(roles(p, [
        [p.hold([(pool, 16)], [p.run(d, 2)], cache=16), *probe],
        [p.hold([(pool, 16)], [p.run(d, 1)], cache=16), *probe],
        [p.hold([(pool, 16)], [p.run(d, 1)], cache=16), *probe],
        [p.hold([(pool, 48)], [p.run(d, 1)])],
    ]), presets=[at(p, 0, 0), at(p, 0, 1), at(p, 0, 2), at(p, 3, 3)])
    r = run(prog, pm)
    # B and C release at 1, B first (both ran from 0, B started first); A releases at 2. D takes 48 at 3:
    # 48 + 48 cached > 64, short 32: the two released at 1 go; A, the most recent, stays (from the wrong
    # end A would go first).
    assert sorted(samples(r, "left"), key=lambda x: x[1]) == [(16.0, 0), (0.0, 1), (0.0, 2)]
    # The same with cap 80: short 16, one entry goes, and of B and C, tied at 1, it is B, released first
    # (ties broken the other way round, C would go).
    p2 = P()
    pool2 = p2.pool("p", cap=80.0, block=16.0, evict=evict)
    d2 = p2.stage("d", N.Delay())
    probe2 = [p2.run(d2, b("-", 10, p2.ex("now"))), p2.observe("left", obs("cachedin", pool2))]
    prog2 = p2.build(roles(p2, [
        [p2.hold([(pool2, 16)], [p2.run(d2, 2)], cache=16), *probe2],
        [p2.hold([(pool2, 16)], [p2.run(d2, 1)], cache=16), *probe2],
        [p2.hold([(pool2, 16)], [p2.run(d2, 1)], cache=16), *probe2],
        [p2.hold([(pool2, 48)], [p2.run(d2, 1)])],
    ]), presets=[at(p2, 0, 0), at(p2, 0, 1), at(p2, 0, 2), at(p2, 3, 3)])
    r2 = run(prog2, pm)
    assert sorted(samples(r2, "left"), key=lambda x: x[1]) == [(16.0, 0), (0.0, 1), (16.0, 2)]
    assert (r2.pool("p").evicted_entries, r2.pool("p").evicted_units) == (1, 16.0)


@pytest.mark.parametrize("evict", RELEASE_ORDERS, ids=["lru", "by-last", "plugin-fixed", "plugin-scan"])
def test_a_dead_remainder_keeps_its_release_order(evict, pm):
    p = P()
    pool = p.pool("p", cap=48.0, block=16.0, evict=evict)
    d = p.stage("d", N.Delay())
    prog = p.build(roles(p, [
        [p.hold([(pool, 32)], [p.run(d, 1)], cache=32), p.run(d, 1),
         p.hold([(pool, 16)], [p.run(d, 5)], reuse=16, cache=0)],
        [p.hold([(pool, 16)], [p.run(d, 1)], cache=16), p.run(d, 9), p.observe("b_left", obs("cachedin", pool))],
        [p.hold([(pool, 16)], [p.run(d, 1)])],
    ]), presets=[at(p, 0, 0), at(p, 0, 1), at(p, 3, 2)])
    r = run(prog, pm)
    # A and B release at 1 (A first: 32 and 16 cached). At 2 A consumes 16 of its 32 (reuse 16): the
    # other 16 stay as a dead entry released at 1 in A's place of the release order, though made after
    # B's. At 3 C takes 16: used 16 + cached 32 + 16 > 48, short 16: the dead remainder goes (released
    # before B), and B keeps its 16. Ranked by when the entries were made, B would go.
    assert samples(r, "b_left") == [(16.0, 1)]
    assert (r.pool("p").evicted_entries, r.pool("p").evicted_units) == (1, 16.0)


@pytest.mark.parametrize("evict", [N.EvictBy(keys=[b("-", 0, N.Ctx(name="size"))]), N.Extension(name="largest_first")],
                         ids=["by-minus-size", "plugin"])
def test_an_order_that_reads_the_size_ranks_a_shrinking_entry_again(evict, pm):
    p = P()
    pool = p.pool("p", cap=96.0, block=16.0, evict=evict)
    d = p.stage("d", N.Delay())
    probe = [p.run(d, b("-", 10, p.ex("now"))), p.observe("left", obs("cachedin", pool))]
    prog = p.build(roles(p, [
        [p.hold([(pool, 32)], [p.run(d, 1)], cache=32), *probe],
        [p.hold([(pool, 48)], [p.run(d, 1)], cache=48), *probe],
        [p.hold([(pool, 48)], [p.run(d, 1)])],
    ]), presets=[at(p, 0, 0), at(p, 0.5, 1), at(p, 2, 2)])
    r = run(prog, pm)
    # B (32) released at 1, A (48) at 1.5. C takes 48 at 2: 48 + 80 > 96, short 32, a block at a time:
    # the largest first, A (48 -> 32); then A and B tie at 32 and B, released first, gives a block
    # (32 -> 16). Ranked once, A would give both blocks.
    assert sorted(samples(r, "left"), key=lambda x: x[1]) == [(16.0, 0), (32.0, 1)]


def _keys(p: P, names):
    out = []
    for n in names:
        if n == "-size":
            out.append(b("-", 0, N.Ctx(name="size")))
        elif n == "nan_if_odd":  # NaN for sessions of odd serial: no total order
            out.append(b("/", b("%", p.ex("serial"), 2), b("%", p.ex("serial"), 2, p)))
        else:
            out.append(p.ex(n))
    return out


#: Keys the keyed path takes (fixed) and keys it leaves to the scan.
FIXED_KEYS = [["last"], ["-size"], ["serial"], ["g"], ["g", "-size"], ["nan_if_odd", "last"], ["size", "g"]]
SCAN_KEYS = [["age"], ["waiting", "last"], ["h"]]


def _random_program(rng: random.Random, keys, bs: float = 16.0):
    p = P()
    pool = p.pool("p", cap=bs * rng.randint(6, 14) + rng.choice([0.0, bs / 3]), block=bs,
                  evict=N.EvictBy(keys=_keys(p, keys)))
    d = p.stage("d", N.Delay())
    sessions = []
    presets = []
    for k in range(rng.randint(8, 16)):
        body = []
        for _turn in range(rng.randint(1, 3)):
            units = bs * rng.randint(1, 5)
            cache = bs * rng.randint(0, 5) + rng.choice([0.0, bs / 2])
            reuse = rng.choice([None, bs * rng.randint(0, 2)])
            body += [p.hold([(pool, units)], [p.run(d, rng.choice([0.5, 1, 2]))], cache=cache, reuse=reuse),
                     p.set_("h", rng.randint(0, 3)),
                     p.observe("left", obs("cachedin", pool)),
                     p.run(d, rng.choice([0, 0.5, 1, 3]))]
        sessions.append(body)
        presets.append(at(p, rng.choice([0, 0.5, 1, 1.5, 2, 3, 4]) + k * 0.25 * rng.randint(0, 1), k))
    init = [p.set_("g", float(rng.randint(0, 2)))]
    return p.build(roles(p, sessions), presets=presets, init=init)


def _report(prog, pm):
    r = serq_sim.run(prog, pm=pm, check_invariants=True)
    return serq_report.render(r, "json") + repr([samples(r, "left")])


def test_key_reads_classifies_what_changes_while_cached():
    p = P()
    prog = p.build([p.set_("h", 1)], init=[p.set_("g", 1)])

    def reads(*names):
        return eviction.key_reads(prog, _keys(p, names))

    assert reads("last") == (True, False, False)
    assert reads("-size") == (True, True, False)
    assert reads("serial") == (True, False, True)
    assert reads("g") == (True, False, True)  # set in init only: fixed once the session runs
    assert reads("h")[0] is False  # set in the session block
    assert reads("turn_no")[0] is False and reads("cached")[0] is False and reads("computed")[0] is False
    assert reads("age")[0] is False and reads("waiting")[0] is False and reads("now")[0] is False
    assert eviction.key_reads(prog, [N.Draw(dist="exp", args=[N.Num(value=1.0)])])[0] is False
    assert eviction.key_reads(prog, [obs("used", N.PoolRef(pool=0))])[0] is False


@pytest.mark.parametrize("keys", FIXED_KEYS + SCAN_KEYS, ids=lambda k: ",".join(k))
def test_the_keyed_path_evicts_as_the_scan_does(keys, pm, monkeypatch):
    """Random programs of preset sessions caching and re-reading prefixes: an ``evict by`` whose keys
    are fixed, run through the keyed path and again through the scan (the order told its key is not
    fixed), gives the same report and the same cachedin samples, with blocks of 16 and of 0.1 (whose
    sums round: a block at a time must subtract as the scan's picks do)."""
    rng = random.Random(zlib.crc32(",".join(keys).encode()))
    fixed = eviction.key_reads(_random_program(random.Random(0), keys), _keys(P(), keys))[0]
    assert fixed == (keys in FIXED_KEYS)
    real = eviction.key_reads
    for k in range(8):
        prog = _random_program(rng, keys, 16.0 if k % 2 else 0.1)
        want_keyed = _report(prog, pm)
        with monkeypatch.context() as m:
            m.setattr(eviction, "key_reads", lambda program, ks: (False, *real(program, ks)[1:]))
            want_scan = _report(prog, pm)
        assert want_keyed == want_scan


def test_release_orders_agree_on_a_vllm_program_under_pressure(pm):
    """vllm.sq with a small KV pool (evicting thousands of blocks): lru, evict by (last) and a plugin
    order by release time, with and without a fixed key, give the same report."""
    program = serq_frontend.compile(ROOT / "examples/multi-turn/vllm.sq", sets={"blocks": 600})

    out = []
    for evict in RELEASE_ORDERS:
        pools = [msgspec.structs.replace(pl, evict=evict) if pl.name == "kv" else pl for pl in program.pools]
        prog = msgspec.structs.replace(program, pools=pools,
                                       run=msgspec.structs.replace(program.run, horizon=200.0, warmup=0.0))
        r = serq_sim.run(prog, pm=pm)
        assert r.pool("kv").evicted_units > 50_000
        out.append(serq_report.render(r, "json"))
    assert out[1:] == out[:1] * 3
