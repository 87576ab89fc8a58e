"""Which changes keep the random streams aligned (docs/simulator.md, "What keeps the streams aligned"),
each value checked against the layout written out by hand: the `workload` stream of (seed, serial, turn)
is a Mersenne Twister seeded with `rand.workload_key` and taken in order; a session block's draw is the
uniform of its place (crn_draws.py's `_uniform`); a Poisson gap is `-ln(1 - u) / rate`."""

from __future__ import annotations

import math
import random

import pytest
import serq_frontend
import serq_sim
from crn_draws import _uniform, per_turn
from serq_sim import rand

pytestmark = pytest.mark.timeout(60)

SEED = 5


def _run(tmp_path, text, tier, monkeypatch, sets=None, defs=None):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    path = tmp_path / "p.sq"
    path.write_text(text)
    r = serq_sim.run(serq_frontend.compile(str(path), sets=sets or {}, defs=defs or {}), seed=SEED)
    assert r.tier == tier
    return r


def _workload_uniforms(serial, turn, n):
    rnd = random.Random(rand.workload_key(SEED, serial, turn))
    return [rnd.random() for _ in range(n)]


# a turn block with an erlang of k phases, then an exp; a draw made only when the session waited long (which
# the server's speed decides), then another exp; the session block: the work drawn (place 0),
# a definition that draws (place 1), then a draw (place 2)
TURNS = """
def first() = ~exp(1);
let k = 1;
let mu = 1;
stage svc : fifo;
workload {
  arrive poisson(0.5);
  init { set t0 = now; }
  turn {
    set a = ~erlang(k, 1);
    set b = ~exp(1);
    set x = now - t0 > 2 ? ~exp(1) : 0;
    set c = ~exp(1);
  }
}
session {
  run svc (~exp(1 / mu));
  turn;
  observe late = now - t0 > 2;
  observe bb = b;
  observe cc = c;
  set u = first();
  set v = ~exp(1);
  observe vv = v;
  end;
}
run { horizon 120; warmup 0; }
"""


def _exp(u):
    return -math.log(1.0 - u)


# the fast tier runs workload blocks of set and observe only: a `branch` there runs on the general tier
@pytest.mark.parametrize("tier, skip", [("fast", "?:"), ("general", "?:"), ("general", "branch")])
def test_turn_block_draws_are_taken_in_order_and_a_draw_the_deployment_skips_moves_the_later_ones(
        tmp_path, monkeypatch, tier, skip):
    text = TURNS if skip == "?:" else TURNS.replace("set x = now - t0 > 2 ? ~exp(1) : 0;",
                                                    "branch (now - t0 > 2) { set x = ~exp(1); }")
    moved = 0
    for k, mu in ((1, 1.0), (3, 1.0), (1, 3.0)):
        r = _run(tmp_path, text, tier, monkeypatch, sets={"k": k, "mu": mu})
        got = per_turn(r, "late", "bb", "cc")
        assert len(got) > 40
        for (serial, turn), (late, b, c) in got.items():
            u = _workload_uniforms(serial, turn, k + 3)
            # b follows the erlang's k uniforms; c follows b and, when the branch drew, the branch's draw
            assert b == _exp(u[k]) and c == _exp(u[k + 1 + int(late)]), (serial, k, mu)
        moved += sum(late for late, _, _ in got.values())
    assert moved > 10  # the branch drew for some sessions, and not for others


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_session_block_places_stay_unless_a_draw_is_added_or_removed(tmp_path, monkeypatch, tier):
    def vv(**kw):
        return per_turn(_run(tmp_path, TURNS, tier, monkeypatch, **kw), "vv")

    base = vv()
    assert len(base) > 40
    for (serial, turn), (v,) in base.items():  # v is place 2: the work drawn is place 0, first()'s 1
        assert v == _exp(_uniform(SEED, serial, turn, 2))
    # another law or parameter at place 0, another erlang k in the turn block, a slower server: v stays
    for kw in ({"defs": {"first": "~erlang(4, 1)"}}, {"defs": {"first": "~det(1)"}}, {"sets": {"k": 3}},
               {"sets": {"mu": 3}}):
        other = vv(**kw)
        assert other.keys() & base.keys() and all(other[s] == base[s] for s in other.keys() & base.keys()), kw
    # a body without a draw: v becomes place 1
    for (serial, turn), (v,) in vv(defs={"first": "1"}).items():
        assert v == _exp(_uniform(SEED, serial, turn, 1))


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_a_set_keeps_every_draw_so_every_place(tmp_path, monkeypatch, tier):
    text = TURNS.replace("let k = 1;", "let k = 1;\nlet flag = 1;").replace(
        "set u = first();", "set u = flag == 1 ? ~exp(1) : 2;")
    runs = [per_turn(_run(tmp_path, text, tier, monkeypatch, sets={"flag": f}), "vv") for f in (1, 0)]
    for got in runs:
        assert len(got) > 40
        for (serial, turn), (v,) in got.items():
            assert v == _exp(_uniform(SEED, serial, turn, 2))


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_half_the_poisson_rate_doubles_every_arrival_time_and_keeps_the_sizes(tmp_path, monkeypatch, tier):
    text = """let lambda = 0.8;
let c = 1;
stage svc : fifo(c);
workload { arrive poisson(lambda); turn { set n = ~exp(1); } }
session { observe arr = now; turn; observe size = n; run svc (n); end; }
run { horizon 400; warmup 0; }
"""
    runs = []
    for lam, c in ((0.8, 1), (0.4, 1), (0.8, 2)):
        r = _run(tmp_path, text, tier, monkeypatch, sets={"lambda": lam, "c": c})
        runs.append((per_turn(r, "arr"), per_turn(r, "size")))
    (arr, size), (slow, slow_size), (two, two_size) = runs
    # poisson(rate) arrives at 0, then after gaps -ln(1 - u) / rate, u the arrivals stream's uniforms
    stream = rand.streams(SEED)["arrivals"]
    t = 0.0
    for serial in range(len(arr)):
        assert arr[(serial, 0)] == (t,)
        t += -math.log(1.0 - stream.random()) / 0.8
    assert len(slow) > 100 and all(slow[s] == (2 * arr[s][0],) for s in slow)
    assert two == arr and two_size == size  # a second server: the same arrivals and sizes
    assert all(slow_size[s] == size[s] for s in slow_size)
    for (serial, turn), (n,) in size.items():
        assert n == _exp(_workload_uniforms(serial, turn, 1)[0])


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_an_aggregate_over_a_drawing_body_is_a_place_a_term(tmp_path, monkeypatch, tier):
    text = """let n = 2;
let R = 2;
stage svc[R] : fifo;
workload { arrive poisson(0.5); }
session {
  choose r in R by (queue(svc[r]), ~uniform(0, 1));
  set s = sum j in n (~exp(1));
  set v = ~exp(1);
  observe vv = v;
  run svc[r] (s);
  end;
}
run { horizon 100; warmup 0; }
"""
    for n, R in ((2, 2), (3, 2), (2, 5)):
        got = per_turn(_run(tmp_path, text, tier, monkeypatch, sets={"n": n, "R": R}), "vv")
        assert len(got) > 30
        for (serial, turn), (v,) in got.items():  # the choose is place 0 whatever R, the n terms 1 to n
            assert v == _exp(_uniform(SEED, serial, turn, 1 + n)), (n, R)
