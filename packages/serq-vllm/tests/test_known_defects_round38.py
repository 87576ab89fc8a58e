"""Known defects, round 38, in serq-vllm.

8. A scenario's ``arrive`` (or ``think``) of 2**53 + 1 was read as a double by the horizon's check, which told
   it as "submitted at step 9007199254740992": refused as the other counts are, naming the field.
9. Sessions ``1`` and ``"1"`` are two sessions to JSON and to both sides, one to a reader (the second's
   ``think`` was refused as a first turn's): refused, naming both requests.
11. ``serq vllm target`` of a step family whose members' budgets differ said "the engine's budget is not a
    constant": it names each member's budget; members that agree give the one budget.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq.errors import UserError
from serq_vllm.real import ScenarioError, check_scenario
from serq_vllm.scenarios import read_scenario
from serq_vllm.target import target

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
BASE = {"budget": 48, "max_seqs": 8, "block_size": 16, "num_blocks": 13}

# ---------------------------------------------------------------- 8. an arrive or a think past 2**53


@pytest.mark.parametrize("request_, field", [
    ({"prompt": 79, "out": 3, "arrive": 2**53 + 1}, "arrive"),
    ({"prompt": 79, "out": 3, "arrive": 2**53}, "arrive"),
    ({"prompt": 79, "out": 3, "arrive": -(2**53) - 1}, "arrive"),
])
def test_an_arrive_a_double_cannot_hold_is_refused_named(request_, field):
    sc = dict(BASE, requests=[{"prompt": 47, "out": 17}, request_])
    with pytest.raises(ScenarioError) as e:
        check_scenario(sc)
    assert str(e.value).startswith(f"requests[1].{field}: {request_[field]} is not below 2**53 in size")
    assert e.value.json_path == ("requests", 1, field)


def test_a_think_a_double_cannot_hold_is_refused_named():
    sc = dict(BASE, requests=[{"prompt": 47, "out": 3, "session": 1},
                              {"prompt": 79, "out": 3, "session": 1, "turn": 1, "think": 2**53 + 1}])
    with pytest.raises(ScenarioError) as e:
        check_scenario(sc)
    assert str(e.value).startswith("requests[1].think: 9007199254740993 is not below 2**53 in size")


def test_the_command_says_it_at_the_value(tmp_path):
    text = ('{"budget": 48, "max_seqs": 8, "block_size": 16, "num_blocks": 13,\n'
            ' "requests": [{"prompt": 47, "out": 17}, {"prompt": 79, "out": 3, "arrive": 9007199254740993}]}\n')
    (tmp_path / "s.json").write_text(text)
    r = subprocess.run([SERQ, "vllm", "scenario", "s.json"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=100)
    assert r.returncode == 1 and r.stdout == ""
    col = text.splitlines()[1].index("9007199254740993") + 1
    assert r.stderr.startswith(f"s.json:2:{col}: error: requests[1].arrive: 9007199254740993 is not below 2**53")
    assert "9007199254740992" not in r.stderr


def test_a_large_arrive_a_double_holds_is_still_past_the_horizon(tmp_path):
    # 2**53 - 1 is held exactly: the horizon's error, which quotes it by every digit
    p = tmp_path / "s.json"
    p.write_text(json.dumps(dict(BASE, requests=[{"prompt": 47, "out": 3, "arrive": 2**53 - 1}])))
    r = subprocess.run([SERQ, "vllm", "scenario", str(p)], capture_output=True, text=True, timeout=100)
    assert r.returncode == 1
    assert "submitted at step 9007199254740991" in r.stderr


# ---------------------------------------------------------------- 9. sessions 1 and "1"


@pytest.mark.parametrize("a, b", [(1, "1"), ("1", 1), (7, "7"), ("-2", -2)])
def test_a_session_written_as_an_integer_and_a_string_is_refused(a, b):
    sc = dict(BASE, requests=[{"prompt": 47, "out": 3, "session": a},
                              {"prompt": 79, "out": 3, "session": b, "turn": 1, "think": 2}])
    with pytest.raises(ScenarioError) as e:
        check_scenario(sc)
    assert str(e.value) == (f"requests[1].session: {b!r} and requests[0].session {a!r} are two different sessions "
                            "(one an integer, the other a string); write a session's id one way in every request")
    assert e.value.json_path == ("requests", 1, "session")


@pytest.mark.parametrize("a, b", [(1, 1), ("1", "1")])
def test_a_session_written_one_way_is_one_session(a, b):
    check_scenario(dict(BASE, requests=[{"prompt": 47, "out": 3, "session": a},
                                        {"prompt": 79, "out": 3, "session": b, "turn": 1, "think": 2}]))


@pytest.mark.parametrize("a, b", [(1, "a"), ("x1", 1), (1, 2), ("1", "01")])
def test_sessions_of_other_ids_are_two(a, b):
    # two first turns: each may not have a think, and neither is refused as a twin
    check_scenario(dict(BASE, requests=[{"prompt": 47, "out": 3, "session": a},
                                        {"prompt": 79, "out": 3, "session": b}]))


def test_the_refusal_is_at_the_second_session_value(tmp_path):
    p = tmp_path / "s.json"
    text = ('{"budget": 48, "max_seqs": 8, "block_size": 16, "num_blocks": 13,\n "requests": [\n'
            '  {"prompt": 47, "out": 3, "session": 1},\n'
            '  {"prompt": 79, "out": 3, "session": "1", "turn": 1, "think": 2}]}\n')
    p.write_text(text)
    with pytest.raises(UserError) as e:
        read_scenario(str(p))
    col = text.splitlines()[3].index('"1"') + 1
    assert str(e.value).startswith(f"{p}:4:{col}: error: requests[1].session: '1' and requests[0].session 1 ")


# ---------------------------------------------------------------- 11. a step family's budgets

FAMILY = """use "vllm.sq";
let B = 512;
pool reqs[2] { cap 64; admit via engine; }
pool kv[2] { cap 1000 * 16; block 16; evict lru; preempt lifo; }
stage engine[2] : step {
  budget BUDGET;
  cost 0.01;
  memory kv;
}
workload {
  arrive poisson(1);
}
session {
  set t0 = now;
  choose j in 2 by (queued(reqs[j]));
  vllm_request(reqs[j], kv[j], engine[j], 100, 10, t0);
}
run { horizon 100; }
"""


def _target(tmp_path, budget: str):
    p = tmp_path / "f.sq"
    p.write_text(FAMILY.replace("BUDGET", budget))
    return target(serq_frontend.compile(str(p)), str(p))


@pytest.mark.parametrize("budget, shown", [
    ("member(engine) == 0 ? 256 : B", "engine[0] 256, engine[1] 512"),
    ("B / (member(engine) + 1)", "engine[0] 512, engine[1] 256"),
    ("max(B - 100 * member(engine), 64)", "engine[0] 512, engine[1] 412"),
])
def test_members_of_other_budgets_are_named(tmp_path, budget, shown):
    with pytest.raises(UserError) as e:
        _target(tmp_path, budget)
    first = str(e.value).splitlines()[0]
    assert first.endswith(f"f.sq:6:10: error: the engine's budget differs between the members of step family "
                          f"`engine` ({shown}), and a vLLM target is one configuration for every engine: give the "
                          "members one budget"), first


@pytest.mark.parametrize("budget", ["B", "member(engine) == 0 ? B : 512", "B + 0 * member(engine)"])
def test_members_of_one_budget_give_it(tmp_path, budget):
    assert _target(tmp_path, budget)["config"]["max_num_batched_tokens"] == 512


def test_a_budget_no_member_can_fold_is_still_not_a_constant(tmp_path):
    with pytest.raises(UserError) as e:
        _target(tmp_path, "B - used(kv)")
    assert "the engine's budget is not a constant, so it has no vLLM setting" in str(e.value)
