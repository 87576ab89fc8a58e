"""Known defects, each checked against the language's rules (docs/language.md, docs/simulator.md) on small
programs whose answers are worked out by hand."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

TIERS = ["general", ""]


def _forever(src: str, tier: str, monkeypatch) -> list[str]:
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(source=src), max_events=10_000)
    assert r.tier == (tier or "fast")
    return [w for w in r.warnings if "wait for ever" in w]


# ---------------------------------------------------------------- a fifo queue behind a run of infinite work
#
# language.txt, Stages: fifo(c) has c servers, jobs in arrival order at rate 1. A job of infinite work keeps
# its server for ever, so once c such jobs are in service (or queued ahead, to be served first) no job queued
# behind them is ever served: those sessions wait for ever, as sessions queued at a pool held by such a run
# do (docs/simulator.md, Waiting for ever). By hand, arrivals at t = 0, 1, ..., 9 under horizon 10.

FIFO = """stage f : fifo{c};
workload {{ arrive renewal(1); }}
session {{ run f ({work}); }}
run {{ horizon 10; }}
"""


@pytest.mark.parametrize("tier", TIERS)
def test_sessions_behind_a_run_of_infinite_work_at_a_fifo_stage_wait_for_ever(tier, monkeypatch):
    # session 0 takes the one server for ever; sessions 1 to 9 queue behind it
    w = _forever(FIFO.format(c="", work="serial == 0 ? inf : 1"), tier, monkeypatch)
    assert w == ["warning: 10 sessions wait for ever at the end of the run (each waits in a fifo stage's queue "
                 "behind a run of infinite work (session 0), which never completes; or in a run of infinite work of "
                 "its own, which never completes): 1 at stage f, in a run of infinite work (session 0, in the run at "
                 "<source>:3:11); 9 queued at stage f (sessions 1, 2, 3, 4, 5, …)"], w


@pytest.mark.parametrize("tier", TIERS)
def test_two_servers_both_kept_by_runs_of_infinite_work(tier, monkeypatch):
    # fifo(2): session 0 (inf) on one server, session 1 (0.5) on the other until 1.5, session 2 (inf) takes it
    # at 2; sessions 3 to 9 queue behind both
    w = _forever(FIFO.format(c="(2)", work="serial == 0 || serial == 2 ? inf : 0.5"), tier, monkeypatch)
    assert w == ["warning: 9 sessions wait for ever at the end of the run (each waits in a fifo stage's queue "
                 "behind runs of infinite work (sessions 0, 2), which never complete; or in a run of infinite work "
                 "of its own, which never completes): 2 at stage f, in a run of infinite work (sessions 0, 2, in the "
                 "run at <source>:3:11); 7 queued at stage f (sessions 3, 4, 5, 6, 7, …)"], w


@pytest.mark.parametrize("tier", TIERS)
def test_a_run_of_infinite_work_queued_ahead_keeps_those_behind_it(tier, monkeypatch):
    # session 0 (100) serves until 100, past the horizon; session 1 (inf) is queued next and then keeps the
    # server: it will be served, sessions 2 to 9 behind it never are
    w = _forever(FIFO.format(c="", work="serial == 0 ? 100 : serial == 1 ? inf : 1"), tier, monkeypatch)
    assert w == ["warning: 9 sessions wait for ever at the end of the run (each waits in a fifo stage's queue "
                 "behind a run of infinite work (session 1), which never completes; or in a run of infinite work of "
                 "its own, which never completes): 1 at stage f, in a run of infinite work (session 1, in the run at "
                 "<source>:3:11); 8 queued at stage f (sessions 2, 3, 4, 5, 6, …)"], w


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("c, work", [("", "serial == 0 ? 100 : 1"), ("(2)", "serial == 0 ? inf : 3"),
                                     ("(inf)", "serial == 0 ? inf : 3")])
def test_a_queue_a_server_will_reach_is_not_waiting_for_ever(c, work, tier, monkeypatch):
    # a long run ahead (it ends at 100), or a second server left to the queue: every queued session is served
    assert _forever(FIFO.format(c=c, work=work), tier, monkeypatch) == []


@pytest.mark.parametrize("tier", TIERS)
def test_each_member_of_a_family_is_judged_on_its_own(tier, monkeypatch):
    # f[0] serves the even serials, f[1] the odd: sessions 0 and 1 take them for ever, the others queue behind
    src = """stage f[2] : fifo;
workload { arrive renewal(1); }
session { run f[serial % 2] (serial < 2 ? inf : 1); }
run { horizon 10; }
"""
    w = _forever(src, tier, monkeypatch)
    assert w == ["warning: 10 sessions wait for ever at the end of the run (each waits in a fifo stage's queue "
                 "behind runs of infinite work (sessions 0, 1), which never complete; or in a run of infinite work "
                 "of its own, which never completes): 1 at stage f[0], in a run of infinite work (session 0, in the "
                 "run at <source>:3:11); 1 at stage f[1], in a run of infinite work (session 1, in the run at "
                 "<source>:3:11); 4 queued at stage f[0] (sessions 2, 4, 6, 8); 4 queued at stage f[1] (sessions 3, "
                 "5, 7, 9)"], w


def test_a_session_a_preemption_could_take_out_of_the_queue_is_not_counted(monkeypatch):
    # m has a preemption rule (docs/simulator.md: a session whose holds a preemption rule could take is counted
    # in neither case); the same program without it has the 9 sessions behind session 0 (the general tier runs
    # it: the fast one takes no preemption rule)
    src = """pool m {{ cap 10;{rule} }}
stage f : fifo;
workload {{ arrive renewal(1); }}
session {{ hold m (1) {{ run f (serial == 0 ? inf : 1); }} }}
run {{ horizon 10; }}
"""
    assert _forever(src.format(rule=" preempt lifo;"), "general", monkeypatch) == []
    w = _forever(src.format(rule=""), "general", monkeypatch)
    assert w == ["warning: 10 sessions wait for ever at the end of the run (each waits in a fifo stage's queue "
                 "behind a run of infinite work (session 0), which never completes; or in a run of infinite work of "
                 "its own, which never completes): 1 at stage f, in a run of infinite work (session 0, in the run at "
                 "<source>:4:24); 9 queued at stage f (sessions 1, 2, 3, 4, 5, …)"], w


@pytest.mark.parametrize("tier", TIERS)
def test_the_pool_held_by_a_session_that_is_never_served_is_never_freed(tier, monkeypatch):
    # m (cap 2): session 0 holds a unit and runs inf on f; session 1 holds the other and queues behind it at f;
    # sessions 2 to 9 queue at m, whose holders never release it
    src = """pool m { cap 2; }
stage f : fifo;
workload { arrive renewal(1); }
session { hold m (1) { run f (serial == 0 ? inf : 1); } }
run { horizon 10; }
"""
    w = _forever(src, tier, monkeypatch)
    # (m's holders never release it, each for a reason of its own: no deadlock; engine._why_forever)
    assert w == ["warning: 10 sessions wait for ever at the end of the run (each waits in a fifo stage's queue "
                 "behind a run of infinite work (session 0), which never completes; or for pools that only "
                 "sessions that never release them hold: session 0, whose run of infinite work never completes, "
                 "and sessions in a fifo stage's queue behind a run of infinite work; or in a run of infinite work "
                 "of its own, which never completes): 1 at stage f, in a run of infinite work (session 0, in the run "
                 "at <source>:4:24); 1 queued at stage f (session 1); 8 queued at m (sessions 2, 3, 4, 5, 6, …)"], w


# ---------------------------------------------------------------- an eviction order that drops the pool's entries
#
# docs/hooks.md: pick(pool) returns an entry cached in the pool now, or None when the pool caches nothing. The
# pool's entries (pool.own, pool.dead) are the engine's; an order that takes one out of pool.own leaves its units
# counted as cached in no entry, where no eviction can free them, and a pick of None then admitted the hold beyond
# the pool's capacity without a word. By hand: session 0 holds 6 of p (cap 10) over [0, 1] and caches them;
# session 1 asks for 6 at t = 2: 6 + 6 > 10, so the 6 cached must be evicted (a pool without blocks evicts an
# entry whole).

EVICT = """pool p { cap 10; evict @dropping; }
stage d : delay;
workload { arrive batch(2); }
session { run d (2 * serial); set t0 = now; hold p (6) { run d (1); } cache (6); observe t = now - t0; }
run { horizon 10; }
"""


def _evict_run(case: str):
    from serq import hookimpl
    from serq.plugins import get_plugin_manager
    from serq_sim.policies import EvictionOrder

    class Dropping(EvictionOrder):
        """The release order; its case takes entries out of pool.own."""

        fixed_key = case == "on_insert, ranked"

        def key(self, entry):
            return (entry.seq,)

        def on_insert(self, entry):
            super().on_insert(entry)
            if case.startswith("on_insert"):
                del self.pool.own[entry.owner.serial]

    class Clearing(Dropping):
        def pick(self, pool):
            pool.own.clear()
            return None

    class Plugin:
        @hookimpl
        def serq_sim_register_eviction_orders(self, register):
            register("dropping", Clearing if case == "pick clears" else Dropping)

    pm = get_plugin_manager(plugins=[Plugin()])
    return serq_sim.run(serq_frontend.compile(source=EVICT, pm=pm), pm=pm), Plugin


def test_an_order_that_leaves_the_entries_alone_evicts_as_before():
    r, _ = _evict_run("")
    assert r.observe("t").values.tolist() == [1.0, 1.0]
    p = r.pool("p")
    assert (p.evicted_entries, p.evicted_units) == (1, 6.0)
    # cached: 6 over [1, 2], none over [2, 3], session 1's 6 over [3, 10]: (6 + 0 + 42) / 10
    assert p.cached == pytest.approx(4.8)


@pytest.mark.parametrize("case, why", [
    ("pick clears", "returned None while the pool caches 6 unit(s) in no entry of pool.own or pool.dead: entries "
                    "were taken out of them, which the engine keeps and an order only reads (the pool would hold "
                    "more than its capacity)"),
    # its pick inherited (the scan over the pool's entries, which finds none)
    ("on_insert, scanned", "returned None while the pool caches 6 unit(s) in no entry of pool.own or pool.dead: "
                           "entries were taken out of them, which the engine keeps and an order only reads (the "
                           "pool would hold more than its capacity)"),
    # its pick inherited (the ranking, which still holds the entry)
    ("on_insert, ranked", "returned an entry that is not cached in the pool now (evicted or consumed before)"),
])
def test_an_order_that_takes_entries_out_of_the_pool_is_refused(case, why):
    from serq.errors import PluginError

    with pytest.raises(PluginError) as e:
        _evict_run(case)
    head, _, hint = str(e.value).partition("\n")
    assert head == (f"error: plugin '{__name__}._evict_run.<locals>.Plugin' failed in its eviction order "
                    f"'dropping' (pool p): pick(pool) {why} (at t=2)"), head
    assert hint.startswith(
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)")
