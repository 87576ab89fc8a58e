"""Known defects, round 27 (serq-sim)."""

from __future__ import annotations

import sys

import pytest
import serq_frontend
import serq_sim
from tiers import same_json

pytestmark = pytest.mark.timeout(120)

# 1. a head of an `admit via` queue that never fits waits for ever, and so do the sessions behind it, when its
# units read the clock (no admission attempt keeps such a demand) or its queue is ordered by keys read at the
# join; one whose units fall as time passes is not told. Arrivals at t = 1, ..., 10 (sessions 0 to 9); session
# 0 holds 8 of kv's 10 for ever (a run of infinite work) when WORK is inf; session 1 needs 5 (u)
QUEUE = """pool reqs {{ cap 4; queue by ({key}); admit via E; }}
pool kv {{ cap 10; }}
stage E : step {{ budget 8; cost 0.25; }}
stage d : delay;
workload {{ arrive renewal(1); }}
session {{
  set u = serial == 0 ? 8 : (serial == 1 ? 5 : 1);
  set w = serial == 0 ? {work} : 0;
  hold reqs ({reqs}), kv ({kv}) {{
    run E prefill (2);
    run d (w);
  }}
}}
run {{ horizon {horizon}; }}
"""


def _run(monkeypatch, key: str, reqs: str, kv: str, work: str = "inf", horizon: str = "10.5") -> dict:
    src = QUEUE.format(key=key, reqs=reqs, kv=kv, work=work, horizon=horizon)
    return same_json(serq_frontend.compile(source=src), monkeypatch)


def _forever(r: dict) -> list[str]:
    return [n for n, c in zip(r["notes"], r["codes"]) if c == "waits-for-ever"]


HELD = "for pools that only sessions that never release them hold: session 0, whose run of infinite work never completes"
#: session 0 itself, in its run of infinite work
OWN = "; or in a run of infinite work of its own, which never completes"
SESSION_0 = "1 at stage d, in a run of infinite work (session 0, in the run at <source>:11:5)"


def test_a_head_whose_units_read_the_clock_and_never_fit_waits_for_ever(monkeypatch):
    # queue by (-serial): each newcomer is the head and fits (1 of the 2 free units), so session 1 is left alone;
    # its units max(5, now / 100) are at least 5 from the end on, beside 2 free that only session 0 holds
    r = _run(monkeypatch, "-serial", "1", "max(u, now / 100)")
    assert (r["arrivals"], r["ended"]) == (10, 8)
    assert _forever(r) == [f"warning: 2 sessions wait for ever at the end of the run (each waits {HELD}{OWN}): "
                           f"{SESSION_0}; 1 queued at reqs (session 1)"]


@pytest.mark.parametrize("kv", ["u", "max(u, now / 100)"])
def test_the_sessions_behind_a_head_of_keys_read_at_the_join_wait_for_ever(monkeypatch, kv):
    # queue by (-u): session 1 (u = 5) is the head from its join on, and every later session (u = 1) joins behind
    # it; a newcomer of lesser keys could pass it, none lifts those behind it past it
    r = _run(monkeypatch, "-u", "1", kv)
    assert (r["arrivals"], r["ended"]) == (10, 0)
    assert _forever(r) == [
        "warning: 10 sessions wait for ever at the end of the run (each waits in the queue of reqs behind a head "
        f"that waits for ever and so blocks the rest: head-of-line blocking; or {HELD}{OWN}): {SESSION_0}; 9 queued "
        "at reqs (sessions 1, 2, 3, 4, 5, …)"]


def test_a_head_that_needs_more_than_the_capacity_waits_for_ever_whatever_frees(monkeypatch):
    # reqs of 4, session 1's units max(5, now / 100): never rejected at its join (they read the clock), never
    # admitted; at t = 10.1 session 9 holds reqs and will release it, which frees room but never 5
    r = _run(monkeypatch, "-serial", "serial == 1 ? max(5, now / 100) : 1", "1", work="0", horizon="10.1")
    assert (r["arrivals"], r["ended"]) == (10, 8)
    # (told by its cause, the capacity, since round 46: it was "for pools that only they hold: a deadlock, or a
    # demand beyond the capacity", and session 9, not it, held reqs)
    assert _forever(r) == ["warning: 1 session waits for ever at the end of the run (each waits for more of a pool "
                           "than its capacity, which never fits whatever is released: reqs (5 of a capacity of 4)): "
                           "1 queued at reqs (session 1)"]


def test_a_head_whose_units_fall_as_time_passes_is_not_told(monkeypatch):
    # session 1 needs 5 until t = 20, then 1: at the end (t = 10.5) it waits, not for ever; a run to t = 30.5
    # admits it at the arrival after t = 20
    kv = "serial == 1 ? (now > 20 ? 1 : 5) : u"
    early = _run(monkeypatch, "-serial", "1", kv)
    # (session 0, in its run of infinite work, is told: it waits for ever itself)
    alone = [f"warning: 1 session waits for ever at the end of the run (each waits{OWN[4:]}): {SESSION_0}"]
    assert (early["arrivals"], early["ended"]) == (10, 8)
    assert _forever(early) == alone
    late = _run(monkeypatch, "-serial", "1", kv, horizon="30.5")
    assert (late["arrivals"], late["ended"]) == (30, 29)
    assert _forever(late) == alone


# 2. a contract a plugin breaks where no session is at hand (an eviction order's key(entry) and pick(pool), a
# stage kind's busy_level()) names the pool or the stage's declaration, the source line and a caret, as a
# run-time error is placed, and the time; one rule with the others (attach(job), sim.job_done)
PLUGIN = '''from serq import hookimpl
from serq_sim.policies import EvictionOrder
from serq_sim.stages import StageKind

CASE = ""


class Order(EvictionOrder):
    def key(self, entry):
        return None if CASE == "key" else (entry.seq,)

    def pick(self, pool):
        got = super().pick(pool)
        return "the oldest" if CASE == "pick" else got


class Kind(StageKind):
    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.sim.at(self.sim.now + job.work, self._done, job)

    def _done(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)
        if CASE == "job_done":  # (a completion booked twice)
            self.sim.job_done(self, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None

    def busy_level(self):
        return 2.0 if CASE == "busy_level" else min(1.0, float(self.present))


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("order", Order)


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("k", Kind)
'''

# session k caches its 8 units in pool p[k] (its first hold, ending at t = 1 + k) and makes room there for its
# 16 at t = 11 + k: an eviction each
PROGRAM = """pool p[2] {{ cap 16; evict @order; }}
stage s : @k;
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  hold p[serial] (8) {{ run {first} (1 + serial); }} cache (8);
  run d (10);
  hold p[serial] (16) {{ run d (1); }}
}}
run {{ horizon 100; }}
"""

HINT = "(run without it: SERQ_DISABLED_PLUGINS=acme, or uninstall serq-acme)"


@pytest.fixture
def plugged(tmp_path, monkeypatch):
    """The plugin above installed as serq-acme's entry point ``acme`` (a ``*.dist-info`` beside its module on
    ``sys.path``, as a wheel leaves it); ``failure(case, first)``: the lines of the run's PluginError, the
    program written to ``P.sq`` with ``first`` the stage of each session's first run."""
    import sys

    from serq.errors import PluginError
    from serq.plugins import get_plugin_manager

    site = tmp_path / "site"
    info = site / "serq_acme-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme = acme27_plugin\n")
    (site / "acme27_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(site))

    def failure(case: str, first: str = "d") -> list[str]:
        path = tmp_path / "P.sq"
        path.write_text(PROGRAM.format(first=first))
        pm = get_plugin_manager()
        sys.modules["acme27_plugin"].CASE = case
        with pytest.raises(PluginError) as e:
            serq_sim.run(serq_frontend.compile(str(path), pm=pm), pm=pm, seed=1)
        return str(e.value).replace(str(path), "P.sq").splitlines()

    yield failure
    sys.modules.pop("acme27_plugin", None)


def pool_note(member: int) -> list[str]:
    return [f"P.sq:1:1: note: pool p[{member}] is declared here", "  pool p[2] { cap 16; evict @order; }", "  ^"]


STAGE_NOTE = ["P.sq:2:1: note: stage s is declared here", "  stage s : @k;", "  ^"]
HEAD = "error: plugin 'acme' (from serq-acme 0.3.0) "


def test_an_eviction_orders_key_that_is_no_tuple_names_the_pool_its_place_and_the_time(plugged):
    # the key is read at the first eviction, t = 11: session 0's hold of 16 makes room in p[0], where its own 8
    # units are cached (session 1's, in p[1], at t = 12)
    assert plugged("key") == [
        HEAD + "failed in its eviction order 'order' (pool p): key(entry) returned None, not a tuple of numbers "
        "(at t=11)", HINT, *pool_note(0)]


def test_an_eviction_orders_pick_of_no_entry_names_the_pool_its_place_and_the_time(plugged):
    # session 0's hold of 16 at t = 11 finds p[0] holding its own 8 units cached: pick makes room there
    assert plugged("pick") == [
        HEAD + "failed in its eviction order 'order' (pool p): pick(pool) returned 'the oldest', not an entry of "
        "the pool (at t=11)", HINT, *pool_note(0)]


def test_a_stage_kinds_signal_out_of_range_names_the_stage_its_place_and_the_time(plugged):
    # read where the stage's time averages are integrated: at t = 1, session 0's completion
    assert plugged("busy_level", first="s") == [
        HEAD + "failed in its stage s: busy_level() returned 2.0, not a number from 0 to 1 (at t=1)", HINT,
        *STAGE_NOTE]


def test_a_completion_asked_wrongly_names_the_stage_its_place_and_the_time_as_well(plugged):
    lines = plugged("job_done", first="s")
    assert lines[0].startswith(HEAD + "failed in Kind._done during the run: ContractError: sim.job_done(s, job): "
                               "the job of session 0 is not its session's current run (completed twice"), lines
    assert lines[0].endswith(" (at t=1, session 0)") and lines[1:] == [HINT, *STAGE_NOTE], lines


# 5. with no warm-up, a step stage whose one iteration outlasts the run counts it (planned after the warm-up)
# and never applies its tokens: the same unfinished-iteration warning as one planned before the warm-up's end.
# One request of 100 tokens on an engine whose cost reads kv_prefill, the units held on kv (one block)
ENGINE = """pool kv {{ cap 1e20; block {block}; }}
stage E : step {{ budget 64; cost 1 + 0.0000001 * kv_prefill; memory kv; }}
workload {{ arrive batch(1); }}
session {{
  hold kv (100) {{ prefill on E (100) growing kv; }}
}}
run {{ horizon 100; warmup {warmup}; seed 1; }}
"""


def _unfinished(r: dict) -> list[str]:
    return [n for n, c in zip(r["notes"], r["codes"]) if c == "unfinished-iteration"]


@pytest.mark.parametrize("warmup", ["0", "1e-300"])
def test_a_counted_iteration_past_the_run_is_said(monkeypatch, warmup):
    # one block of 1e16 units: kv_prefill 1e16, an iteration of 1 + 1e9 s planned at t = 0; under warmup 1e-300
    # it is planned before the warm-up's end, and said so as before (round 26)
    r = same_json(serq_frontend.compile(source=ENGINE.format(block="1e16", warmup=warmup)), monkeypatch)
    engine = r["stages"][0]
    tail = ("and still under way at the end of the run (t=100); its cost ends it at t=1000000001; the cost reads "
            "kv_decode or kv_prefill, the units the residents hold on kv (a block is 1e+16 units), not tokens; ")
    if warmup == "0":
        assert (engine["iterations"], engine["utilisation"]) == (1, 1.0)
        assert _unfinished(r) == [
            "warning: step stage E was busy after the warm-up with one iteration that never ended: planned at t=0, "
            "not before the warm-up's end (t=0), " + tail + "its iterations (1) and engine figures count it, "
            "though its tokens, applied when it ends, never were: they describe no iteration the run finished"]
    else:
        assert (engine["iterations"], engine["utilisation"]) == (0, 1.0)
        assert _unfinished(r) == [
            "warning: step stage E was busy after the warm-up with one iteration that no figure counts: planned at "
            "t=0, before the warm-up's end (t=1e-300), " + tail + "its iterations (0) and engine figures describe "
            "no iteration of the run"]


def test_iterations_that_end_are_not_said(monkeypatch):
    # blocks of 16: seven blocks, the prefill of 100 tokens in two iterations of about 1 s, both ended by t = 3
    r = same_json(serq_frontend.compile(source=ENGINE.format(block="16", warmup="0")), monkeypatch)
    assert r["stages"][0]["iterations"] == 2 and _unfinished(r) == []


def test_a_family_of_one_is_named_by_its_member_as_the_report_names_it(plugged, monkeypatch):
    # pool p[1] and stage s[1]: families of one, whose member the report calls p[0] and s[0] (report.member_label);
    # the declaration's note and the stage's failure said p and s. Session 0 caches 8 in p[0] at t = 1, session 1
    # another 8 at t = 2, and session 0's hold of 16 at t = 11 evicts; s[0]'s signal is read at t = 1
    program = PROGRAM.replace("pool p[2]", "pool p[1]").replace("p[serial]", "p[0]").replace(
        "stage s : @k;", "stage s[1] : @k;")
    monkeypatch.setattr(sys.modules[__name__], "PROGRAM", program)
    note = ["P.sq:1:1: note: pool p[0] is declared here", "  pool p[1] { cap 16; evict @order; }", "  ^"]
    assert plugged("pick") == [
        HEAD + "failed in its eviction order 'order' (pool p): pick(pool) returned 'the oldest', not an entry of "
        "the pool (at t=11)", HINT, *note]
    assert plugged("busy_level", first="s[0]") == [
        HEAD + "failed in its stage s[0]: busy_level() returned 2.0, not a number from 0 to 1 (at t=1)", HINT,
        "P.sq:2:1: note: stage s[0] is declared here", "  stage s[1] : @k;", "  ^"]
