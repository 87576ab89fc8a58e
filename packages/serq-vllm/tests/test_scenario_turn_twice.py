"""A session that gives a turn number twice is refused naming the request that repeats it (the later of
the two, in request order) and the request that gave it first."""

from __future__ import annotations

import pytest
from serq_vllm.real import ScenarioError, check_scenario

BASE = {"budget": 64, "max_seqs": 8, "block_size": 16, "num_blocks": 40}


def _req(session, turn=None, prompt=100):
    r = {"session": session, "prompt": prompt, "out": 3}
    if turn is not None:
        r["turn"] = turn
    return r


@pytest.mark.timeout(30)
@pytest.mark.parametrize("requests,message", [
    # requests[3] repeats session "a"'s turn 2, first given by requests[1]; session "b" between them
    ([_req("a", 1), _req("a", 2, 200), _req("b", 1), _req("a", 2, 300)],
     "requests[3].turn: session 'a' has turn 2 twice (first at requests[1])"),
    # the repeat comes before a turn of a lower number: still the later request in request order
    ([_req(7, 3, 400), _req(7, 1), _req(7, 3, 500), _req(7, 2, 200)],
     "requests[2].turn: session 7 has turn 3 twice (first at requests[0])"),
    # no 'turn' is turn 0: two such requests of one session give turn 0 twice
    ([_req(0, 1), _req(0), _req(1, 1), _req(0)],
     "requests[3].turn: session 0 has turn 0 (no 'turn' is turn 0) twice (first at requests[1])"),
])
def test_the_request_that_repeats_a_turn_is_named(requests, message):
    with pytest.raises(ScenarioError) as e:
        check_scenario({**BASE, "requests": requests})
    assert str(e.value) == message
