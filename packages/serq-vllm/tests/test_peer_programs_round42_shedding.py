"""A gateway that sheds load: a conversation whose next turn finds requests waiting at its engine ends there
(`branch (queued(reqs[j]) >= qmax) { end; }` in the session's loop, before lib/vllm.sq's request). Every such
program was refused at the library's `had` ("set from live pool or stage state (… set under the branch at …,
whose guard reads `queued(reqs[j])`) and read in a hold's header"): the first lint tainted every attribute
the loop's body sets at the loop's top, as if the guard had chosen their values, where it only chose whether
the conversation goes on; each turn's prompt is the turn's whatever the queue was. The taint now holds in the
arm that leaves the loop, where the pass is the one the guard picked (docs/language.md, "It follows the
branches that chose a value, too").

peer_programs42/shed_by_hand.sq, traced by hand (engine of one request slot, every iteration 1 s, block 1;
each conversation two turns of 10 new and 3 output tokens, 0.5 s between; conversations at 1, 2, 3):
  t=1  A arrives, nothing waits: sent, admitted at once; prefill 1-2 (first token), decode 2-3, 3-4
  t=2  B arrives, nothing waits (A runs): sent, waits for the slot
  t=3  C arrives, B waits: shed, C ends
  t=4  A's turn ends; B admitted: 4-5 first token, done at 7
  t=4.5  A's second turn (prompt 13 + 10 = 23), nothing waits (B runs): waits, admitted at 7; its 12
       computed tokens are cached (3 output tokens, the last never fed back), so it prefills 11 in 7-8 and is
       done at 10
  t=7.5  B's second turn, nothing waits (A runs): admitted at 10, first token at 11, done at 13."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim

HERE = Path(__file__).resolve().parent / "peer_programs42"
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "vllm_shedding.sq"
pytestmark = pytest.mark.timeout(60)

COLS = ("session", "turn", "sent", "admitted", "first_token", "last_token", "prompt", "output", "cached", "preemptions")


def _rows(report):
    df = report.records()
    return sorted(tuple(float(r[c]) for c in COLS) for _, r in df.iterrows())


def test_the_gateway_sheds_the_turn_that_finds_a_request_waiting_by_hand():
    r = serq_sim.run(serq_frontend.compile(str(HERE / "shed_by_hand.sq")))
    assert _rows(r) == [
        (0, 1, 1, 1, 2, 4, 10, 3, 0, 0),
        (0, 2, 4.5, 7, 8, 10, 23, 3, 12, 0),
        (1, 1, 2, 4, 5, 7, 10, 3, 0, 0),
        (1, 2, 7.5, 10, 11, 13, 23, 3, 12, 0),
    ]
    shed = r.observe("shed")
    assert list(shed.values) == [3.0] and list(shed.sessions) == [2]
    assert (r.result.arrivals, r.result.ended, r.result.end) == (3, 3, 13.0)
    assert r.result.requests.prefix_cache_hit_rate == pytest.approx(24 / 66, rel=1e-12)
    assert [w for w in r.warnings if "too few samples" not in w] == []


def test_the_arm_that_leaves_still_reads_the_pass_its_guard_picked():
    # the conversation's length read in the arm that sheds: which pass that is, the queue decided
    src = (HERE / "shed_by_hand.sq").read_text()
    src = src.replace("observe shed = now;", "hold kv (K) { }")
    assert "hold kv (K) { }" in src
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=src)
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "hold kv (K)" in t)
    at = next(i for i, t in enumerate(src.splitlines(), 1) if "branch (queued(reqs) >= qmax)" in t)
    assert (f"<source>:{line}:16: error: `K` is set from live pool or stage state (under the branch at {at}:5, "
            "whose guard reads `queued(reqs)`) and read in a hold's header") in str(info.value)


@pytest.fixture(scope="module")
def example():
    """examples/multi-turn/vllm_shedding.sq at seed 1, shedding at 4 waiting and not at all (qmax = inf)."""
    return {q: serq_sim.run(serq_frontend.compile(str(EXAMPLE), sets={"qmax": q})) for q in (4, float("inf"))}


def test_a_shedding_fleet_accounts_for_every_turn(example):
    r = example[4]
    res = r.result
    shed, accepted = res.observes["shed"].count, res.observes["accepted"].count
    assert shed > 50 and accepted > 500  # both ways are taken
    assert res.turns == shed + accepted  # every turn is sent or shed
    assert res.ended == res.arrivals == 400  # drained: every conversation ends, shed or done
    assert r.warnings == []
    df = r.records().sort_values(["session", "turn"])
    assert len(df) == accepted == res.requests.completed  # every turn sent is served
    shed_sessions = set(r.observe("shed").sessions)
    assert len(shed_sessions) == shed  # a conversation is shed once, and ends
    assert df.groupby("session").turn.apply(lambda t: list(t) == list(range(1, len(t) + 1))).all()
    # each turn's prompt extends the whole previous sequence, and its hit is at most that sequence's computed
    # tokens in whole blocks (the last output token is never fed back); a first turn finds nothing
    prev = (df.prompt + df.output).groupby(df.session).shift(1)
    first = prev.isna()
    assert (df.cached[first] == 0).all()
    later = df[~first]
    assert (later.prompt > prev[~first]).all()
    assert (later.cached <= ((prev[~first] - 1) // 16) * 16).all()
    assert later.cached.sum() > 0
    # a turn joins its engine only while fewer than qmax wait there, and at most max_seqs run: at most 16 + 4
    # requests are in flight at an engine at once (sent to last token; a departure before an arrival at one
    # instant), which without shedding the queue passes
    def peak(rows):
        moves = sorted([(t, 1) for t in rows.sent] + [(t, -1) for t in rows.last_token])
        level = top = 0
        for _, d in moves:
            level += d
            top = max(top, level)
        return top

    peaks = [peak(df[df.engine == k]) for k in (0, 1)]
    assert max(peaks) <= 20 and min(peaks) >= 15
    unshed = example[float("inf")].records()
    assert max(peak(unshed[unshed.engine == k]) for k in (0, 1)) > 20


def test_the_examples_header_figures(example):
    # "qmax = 4 sheds 135 of 1 142 turns, mean TTFT 0.37 s, p99 2.8 s, hit rate 0.32; qmax = inf serves 1 536
    # turns, mean TTFT 10.4 s, p99 27.5 s, hit rate 0.12"
    text = " ".join(line.lstrip("/ ") for line in EXAMPLE.read_text().splitlines()[:20])
    assert ("qmax = 4 sheds 135 of 1 142 turns, mean TTFT 0.37 s, p99 2.8 s, hit rate 0.32; qmax = inf serves "
            "1 536 turns, mean TTFT 10.4 s, p99 27.5 s, hit rate 0.12") in text
    got = {}
    for q, r in example.items():
        req = r.result.requests
        got[q] = (r.result.observes["shed"].count if "shed" in r.result.observes else 0, r.result.turns,
                  round(req.ttft.mean, 2 if q == 4 else 1), round(req.ttft.p99, 1),
                  round(req.prefix_cache_hit_rate, 2))
    assert got == {4: (135, 1142, 0.37, 2.8, 0.32), float("inf"): (0, 1536, 10.4, 27.5, 0.12)}
    # with nothing shed every turn is served: the conversations' whole length
    assert example[float("inf")].result.requests.completed == 1536
