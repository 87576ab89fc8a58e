"""A scenario whose request cannot end by the scenario program's horizon (step 1 000 000,
programs/scenario.sq) whatever the others do is refused before its run, with the error a run to the horizon
gives after it (docs/vllm-oracle.md): the run simulated up to the horizon's million steps first (4.8 s for
one request of 8 000 000 000 000 prompt tokens, 8 a step; 7.4 s for test_hostile_scenarios.py's 10**15, 48 a
step; 6.3 s for the prompt of 2**53 - 2**21 tokens below).

The earliest end, by hand from the step clock (oracle/README.md: step k runs from k to k + 1; ``first``
is the end of the step that completed the prefill, ``done`` of the one that produced the last token): a
request submitted at s, of P prompt tokens and ``out`` tokens, under a budget B a step, ends at
s + ceil(P / B) + out - 1 at the earliest; a turn is submitted ``think`` after its turn before ends."""

from __future__ import annotations

import json
import time

import pytest
from serq.cli import main
from serq_vllm.scenarios import (
    ScenarioError,
    _chains,
    _past_horizon,
    _unfinished,
    run_scenario,
    scenario_program,
)

pytestmark = pytest.mark.timeout(60)

HORIZON = "did not finish by step 1000000, the scenario program's horizon"


def serq(argv, capsys) -> tuple[int, str, float]:
    """The command's status, its output and the CPU seconds it took (this process's: a machine loaded by other work
    stretches the wall time, and the run the refusal saves takes minutes of CPU)."""
    t = time.process_time()
    with pytest.raises(SystemExit) as info:
        main(argv)
    took = time.process_time() - t
    out = capsys.readouterr()
    return info.value.code, out.out + out.err, took


def _refused(tmp_path, capsys, sc: dict) -> tuple[list[str], float]:
    f = tmp_path / "s.json"
    f.write_text(json.dumps(sc))
    serq(["vllm", "scenario", "vllm/basic"], capsys)  # the scenario program compiled (and cached) once
    code, out, took = serq(["vllm", "scenario", str(f)], capsys)
    assert code == 1
    return out.splitlines(), took


def test_an_output_past_the_horizon_is_refused_before_the_run_with_the_after_run_message(tmp_path, capsys):
    # 0 + ceil(10 / 8) + 2000000 - 1 = 2000001: past 1 000 000 by its out alone
    sc = {"budget": 8, "max_seqs": 1, "block_size": 16, "num_blocks": 200000,
          "requests": [{"prompt": 10, "out": 2000000}]}
    out, took = _refused(tmp_path, capsys, sc)
    text = json.dumps(sc)
    expected = (f"request(s) 0 {HORIZON}: requests[0] ends at step 2000001 at the earliest (submitted at step 0 at "
                "the earliest, its 10 prompt tokens in 2 step(s) of at most 8 tokens, then its 2000000 output "
                "tokens one a step)")
    assert out[0] == f"{tmp_path / 's.json'}:1:{text.index('2000000') + 1}: error: {expected}"
    assert took < 1.0, took
    # the run to the horizon (the program run without the check) leaves request 0 unfinished, and the error
    # of that run is the refusal's, at the same place
    from serq_sim import run

    program, chains = scenario_program(sc)
    report = run(program)
    done = report.observe("done")
    assert list(done.buffer("values")) == []
    after = _unfinished(sc, chains, [0], program.run.horizon)
    before = _past_horizon(sc, chains, program.run.horizon)
    assert str(before) == str(after) == expected
    assert before.json_path == after.json_path == ("requests", 0, "out")


def test_a_prompt_near_2_53_tokens_is_refused_before_the_run(tmp_path, capsys):
    # (2**33 - 1) blocks of 2**20 tokens hold 2**53 - 2**20 tokens; a prompt of 2**53 - 2**21 tokens, 2**20 a
    # step, is 2**33 - 2 steps of prefill: 0 + 8589934590 + 1 - 1
    sc = {"budget": 2**20, "max_seqs": 1, "block_size": 2**20, "num_blocks": 2**33,
          "requests": [{"prompt": 2**53 - 2**21, "out": 1}]}
    out, took = _refused(tmp_path, capsys, sc)
    text = json.dumps(sc)
    assert out[0] == (f"{tmp_path / 's.json'}:1:{text.index(str(2**53 - 2**21)) + 1}: error: request(s) 0 {HORIZON}: "
                      "requests[0] ends at step 8589934590 at the earliest (submitted at step 0 at the earliest, its "
                      "9007199252643840 prompt tokens in 8589934590 step(s) of at most 1048576 tokens, then its 1 "
                      "output tokens one a step)")
    assert took < 1.0, took


def test_the_refusal_names_every_request_that_cannot_end_in_time_and_only_those():
    # request 0 ends at 0 + 1 + 999999 - 1 = 999999 (in time); the session's turn 0 at 3 + 1 + 600000 - 1 =
    # 600003, its turn 1 submitted 7 later, 600010, ends at 600010 + ceil(600010 / 2048) + 400000 - 1 =
    # 600010 + 293 + 399999 = 1000302, past it by its submission (the request itself); turn 2 after it
    sc = {"budget": 2048, "max_seqs": 4, "block_size": 16, "num_blocks": 200000,
          "requests": [{"prompt": 10, "out": 999999},
                       {"prompt": 10, "out": 600000, "session": "a", "turn": 0, "arrive": 3},
                       {"prompt": 600010, "out": 400000, "session": "a", "turn": 1, "think": 7},
                       {"prompt": 1000010, "out": 1, "session": "a", "turn": 2, "think": 1}]}
    with pytest.raises(ScenarioError) as info:
        run_scenario(sc)
    e = info.value
    assert str(e).startswith(f"request(s) 2, 3 {HORIZON}: requests[2] ends at step 1000302 at the earliest")
    assert e.json_path == ("requests", 2)


@pytest.mark.parametrize("out, refused", [(999995, False), (999996, True)])
def test_an_end_at_the_horizon_itself_is_not_refused(out, refused):
    # with prefix caching a prefill is one step at the least: 5 + 1 + 999995 - 1 = 1000000, the horizon
    sc = {"budget": 16, "max_seqs": 1, "block_size": 16, "num_blocks": 200000, "prefix_caching": True,
          "requests": [{"prompt": 4000, "out": out, "arrive": 5}]}
    e = _past_horizon(sc, _chains(sc), 1e6)
    assert (e is not None) == refused
    if refused:
        assert e.json_path == ("requests", 0, "out")


# serq vllm target warns of an engine whose chunk is long_prefill(reqs, C) with a finite C while its requests
# call vllm_request, whose first chunk at admission is cut at no threshold (it passes inf): vLLM cuts a waiting
# request's first chunk at the engine's threshold (lib/vllm.sq's comments on vllm_request and
# vllm_request_at; docs/vllm.md). It printed the threshold without a word.

TINY = """use "vllm.sq";

let B = 8;
let C = CHUNK;
let max_seqs = 2;
let bs = 4;
let blocks = 100;

pool reqs { cap max_seqs; admit via engine; }
pool kv { cap blocks * bs; block bs; evict lru; preempt lifo; }
stage engine : step {
  budget B;
  cost 1;
  chunk long_prefill(reqs, C);
  memory kv;
}

workload {
  arrive batch(2);
  hidden o;
  turn {
    set o = 3;
  }
}

session {
  turn;
  set t0 = now;
  CALL;
}

run { horizon inf; warmup 0; seed 1; }
"""
#: the configuration every variant implies (budget 8, block 4, 100 blocks and vLLM's null block, 2 slots)
CONFIG = {"block_size": 4, "enable_prefix_caching": True, "max_num_batched_tokens": 8, "max_num_seqs": 2,
          "num_gpu_blocks": 101}
REQUEST = "vllm_request(reqs, kv, engine, 10, o, t0)"
REQUEST_AT = "vllm_request_at(reqs, kv, engine, 10, o, t0, inf, {})"


def _target(tmp_path, capsys, chunk: str, call: str, *extra: str) -> tuple[dict, str, str]:
    f = tmp_path / "tiny.sq"
    text = TINY.replace("CHUNK", chunk).replace("CALL", call)
    f.write_text(text)
    with pytest.raises(SystemExit) as info:
        main(["vllm", "target", str(f), *extra])
    out = capsys.readouterr()
    assert info.value.code in (0, None), out.err
    line = text[:text.index(call)].count("\n") + 1
    return json.loads(out.out), f"{f}:{line}:3", out.err.rstrip("\n")


def test_vllm_request_beside_a_finite_threshold_is_warned_of_at_the_call(tmp_path, capsys):
    answer, where, err = _target(tmp_path, capsys, "4", REQUEST)
    said = (f"the engine `engine` cuts a prefill at 4 tokens (chunk long_prefill(reqs, 4): "
            f"long_prefill_token_threshold 4), and the request admitted at {where} on memory pool `kv` takes its "
            "first chunk uncut (lib/vllm.sq's vllm_request passes the threshold inf): vLLM cuts a waiting request's "
            "first chunk at the engine's threshold (scheduler.py:1115-1128), so the blocks this program takes at "
            "admission are not vLLM's; call vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, 4)")
    assert answer["warnings"] == [said]
    assert err == f"warning: {said}"  # on standard error too, for whoever reads the JSON into a file
    # the configuration is what it was: the existing keys, the same values
    assert answer["config"] == {**CONFIG, "long_prefill_token_threshold": 4}
    assert sorted(answer) == ["config", "engine", "serve_by", "target", "warnings"]


def test_vllm_request_at_with_the_engines_threshold_is_not(tmp_path, capsys):
    for chunk, passed in (("4", "C"), ("4", "4"), ("inf", "inf"), ("inf", "C")):
        answer, _, err = _target(tmp_path, capsys, chunk, REQUEST_AT.format(passed))
        assert sorted(answer) == ["config", "engine", "serve_by", "target"] and err == ""
        assert answer["config"]["long_prefill_token_threshold"] == (4 if chunk == "4" else 0)
    answer, _, err = _target(tmp_path, capsys, "inf", REQUEST)  # no threshold on either side
    assert "warnings" not in answer and err == ""


def test_a_first_chunk_cut_where_the_engine_has_no_threshold_is_warned_of(tmp_path, capsys):
    answer, where, _ = _target(tmp_path, capsys, "inf", REQUEST_AT.format(16))
    assert answer["warnings"] == [
        f"the engine `engine` has no long-prefill threshold (long_prefill_token_threshold 0), and the request "
        f"admitted at {where} on memory pool `kv` cuts its first chunk at 16 tokens: vLLM cuts a waiting request's "
        "first chunk at the engine's threshold (scheduler.py:1115-1128), so the blocks this program takes at "
        "admission are not vLLM's; pass the threshold inf (vllm_request)"]
    answer, where, _ = _target(tmp_path, capsys, "4", REQUEST_AT.format(16))  # another finite one
    assert len(answer["warnings"]) == 1 and "cuts its first chunk at 16 tokens" in answer["warnings"][0]


def test_the_threshold_a_set_gives_is_the_one_compared(tmp_path, capsys):
    # --set C=4 of a program written with C = inf: the constants after --set decide both sides
    answer, _, _ = _target(tmp_path, capsys, "inf", REQUEST, "--set", "C=4")
    assert len(answer["warnings"]) == 1 and "cuts a prefill at 4 tokens" in answer["warnings"][0]
    answer, _, _ = _target(tmp_path, capsys, "inf", REQUEST_AT.format("C"), "--set", "C=4")
    assert "warnings" not in answer
