"""A scenario whose run ends at the scenario program's horizon (step 1 000 000, programs/scenario.sq) with
a request unfinished was told by the file's name alone; it is told as any other fault of a scenario is, at
its line and column with the line quoted (docs/vllm-oracle.md): at the first unfinished request, and at the
value that puts its end past the horizon when the request cannot end by then whatever the others do.

The earliest end, by hand from the step clock (oracle/README.md: step k runs from k to k + 1; ``first``
is the end of the step that completed the prefill, ``done`` of the one that produced the last token): a
request submitted at s, of P prompt tokens and ``out`` tokens, under a budget B a step, ends at
s + ceil(P / B) + out - 1 at the earliest; a turn is submitted ``think`` after its turn before ends."""

from __future__ import annotations

import pytest
from serq.cli import main
from serq_vllm.scenarios import ScenarioError, _chains, _unfinished

pytestmark = pytest.mark.timeout(60)

HEAD = '{"budget": 2048, "max_seqs": 4, "block_size": 16, "num_blocks": 200000,\n "requests": [\n'


def serq(argv, capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out + out.err


def _fault(tmp_path, capsys, lines: list[str]) -> list[str]:
    f = tmp_path / "s.json"
    f.write_text(HEAD + ",\n".join(lines) + "\n]}\n")
    code, out = serq(["vllm", "scenario", str(f)], capsys)
    assert code == 1
    return out.splitlines()


def test_a_request_whose_output_alone_passes_the_horizon_is_told_at_its_out(tmp_path, capsys):
    # request 1: submitted at 2, its 10 tokens in one step, then 1 000 005 tokens: 2 + 1 + 1000005 - 1
    req = '  {"prompt": 10, "out": 1000005, "arrive": 2}'
    out = _fault(tmp_path, capsys, ['  {"prompt": 10, "out": 3}', req])
    assert out[0] == (f"{tmp_path / 's.json'}:4:{req.index('1000005') + 1}: error: request(s) 1 did not finish by "
                      "step 1000000, the scenario program's horizon: requests[1] ends at step 1000007 at the "
                      "earliest (submitted at step 2 at the earliest, its 10 prompt tokens in 1 step(s) of at most "
                      "2048 tokens, then its 1000005 output tokens one a step)")
    assert out[1].strip() == req.strip() and out[2].index("^") - 2 == req.index("1000005")


def test_a_turn_after_its_session_turns_is_told_at_the_request(tmp_path, capsys):
    # turn 0 ends at 0 + 1 + 600000 - 1 = 600000; turn 1 is submitted 7 later, 600007, and its prompt of
    # 600010 tokens takes ceil(600010 / 2048) = 293 steps: 600007 + 293 + 400001 - 1 = 1000300. The largest
    # term is the submission, which the turns before it make: the request itself is pointed at
    turn = '  {"prompt": 600010, "out": 400001, "session": "a", "turn": 1, "think": 7}'
    out = _fault(tmp_path, capsys, ['  {"prompt": 10, "out": 600000, "session": "a", "turn": 0}', turn])
    assert out[0] == (f"{tmp_path / 's.json'}:4:3: error: request(s) 1 did not finish by step 1000000, the "
                      "scenario program's horizon: requests[1] ends at step 1000300 at the earliest (submitted at "
                      "step 600007 at the earliest, after its session's turns before it, its 600010 prompt tokens "
                      "in 293 step(s) of at most 2048 tokens, then its 400001 output tokens one a step)")


def test_a_request_that_could_end_in_time_alone_is_told_at_itself_as_stuck_or_long():
    # max_seqs 1: request 1 waits for request 0's 600 000 steps, though alone it ends at 0 + 1 + 600000 - 1
    sc = {"budget": 2048, "max_seqs": 1, "block_size": 16, "num_blocks": 200000,
          "requests": [{"prompt": 10, "out": 600000}, {"prompt": 10, "out": 600000}]}
    e = _unfinished(sc, _chains(sc), [1], 1e6)
    assert isinstance(e, ScenarioError) and e.json_path == ("requests", 1)
    assert str(e) == ("request(s) 1 did not finish by step 1000000, the scenario program's horizon (a request "
                      "stuck, or a scenario longer than that)")


def test_with_prefix_caching_a_prefill_is_counted_as_one_step_at_the_least():
    # all but its last token may be cached: 5 + 1 + 999995 - 1 = 1000000 is not past the horizon
    sc = {"budget": 16, "max_seqs": 1, "block_size": 16, "num_blocks": 200000, "prefix_caching": True,
          "requests": [{"prompt": 4000, "out": 999995, "arrive": 5}]}
    assert _unfinished(sc, _chains(sc), [0], 1e6).json_path == ("requests", 0)
    sc["requests"][0]["out"] = 999996  # ends at 1000001 at the earliest: past it, at its out
    assert _unfinished(sc, _chains(sc), [0], 1e6).json_path == ("requests", 0, "out")


# serq vllm target quotes a setting as every message shows a number (docs/language.md, "A message shows a
# number short": a whole number below 10**16 in its digits): 2**53 is 9007199254740992, not 9.0072e+15

@pytest.mark.parametrize("v, shown", [(2.0**53, "9007199254740992"), (1e300, "1e+300")])
def test_a_target_setting_beyond_2_to_the_53_is_shown_as_messages_show_numbers(v, shown):
    from serq_vllm.target import TargetError, _whole

    with pytest.raises(TargetError) as info:
        _whole(v, "max_num_seqs", "the cap", None, None)
    assert str(info.value) == (f"error: the cap is {shown}, not below 2**53, where serQ's numbers (doubles) do not "
                               "tell one whole number from the next: no whole number for vLLM's max_num_seqs")
