"""A performance engineer's calibration, end to end: a step trace timed by a known cost, ``serq fit``, the
fitted definition as the cost of lib/vllm.sq's engine, and two requests' TTFT and TPOT against the fitted
coefficients by hand; and traces that cannot determine a fit, told with the relation that makes them so
(``serq fit`` said only "the terms are linearly dependent", whichever terms, and named no term for three
steps: the docs' own example)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
from serq.cli import main
from tiers import run_on_tier

TRUE = {"c": 0.01, "d": 2e-4, "e": 3e-8, "a": 5e-5, "b": 1e-9}


def serq(argv, capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out + out.err


def write(path: Path, steps: list[dict]) -> Path:
    path.write_text("".join(json.dumps(s) + "\n" for s in steps))
    return path


def timed(dec, kvd, pre, att) -> dict:
    t = TRUE["c"] + TRUE["d"] * dec + TRUE["e"] * kvd + TRUE["a"] * pre + TRUE["b"] * att
    return {"decoders": dec, "kv_decode": kvd, "prefilled": pre, "attention": att, "time": t}


def varied(n: int, seed: int = 1) -> list[dict]:
    rng = np.random.default_rng(seed)
    steps = []
    for i in range(n):
        dec = 0 if i % 3 == 1 else int(rng.integers(1, 64))
        pre = 0 if i % 3 == 0 else int(rng.integers(16, 2048))
        steps.append(timed(dec, dec * int(rng.integers(100, 4000)), pre, pre * (int(rng.integers(0, 4000)) + pre / 2)))
    return steps


ENGINE = """use "vllm.sq";

{definition}

pool reqs {{ cap 4; admit via engine; }}
pool kv {{ cap 1000 * 16; block 16; evict lru; preempt lifo; }}
stage engine : step {{ budget 2048; cost mygpu(); memory kv; }}

workload {{
  arrive batch(2);
  hidden o;
}}

session {{
  set prompt = 100 + 50 * serial;
  set o = 4;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}}

run {{ horizon inf; seed 1; }}
"""


def test_the_fitted_cost_times_a_tiny_schedule_as_computed_by_hand(tmp_path, capsys):
    code, out = serq(["fit", str(write(tmp_path / "s.jsonl", varied(90))), "--name", "mygpu"], capsys)
    assert code == 0, out
    fit = dict(re.findall(r"^([cdeab]) +(\S+)  \(", out, re.M))
    fit = {k: float(v) for k, v in fit.items()}
    for k, v in TRUE.items():  # exact times: the fit recovers the cost to rounding
        assert abs(fit[k] / v - 1) < 1e-9, (k, fit[k])
    definition = next(line for line in out.splitlines() if line.startswith("def mygpu() = "))
    src = tmp_path / "tiny.sq"
    src.write_text(ENGINE.format(definition=definition))
    program = serq_frontend.compile(src)
    # by hand: both requests (prompts 100 and 150, 4 output tokens) are admitted together and prefilled in
    # one iteration of 250 tokens, attention 100 * 50 + 150 * 75, which samples each one's first token; then
    # three decode iterations of 2 decoders, each request's KV grown by a token and allocated in blocks of
    # 16: 101 -> 112 and 151 -> 160 units, kv_decode 272 (103 and 153 at the third, the same blocks)
    ttft = fit["c"] + fit["a"] * 250 + fit["b"] * (100 * 50 + 150 * 75)
    tpot = fit["c"] + fit["d"] * 2 + fit["e"] * 272
    for tier in ("", "general"):
        _, outcome, _ = run_on_tier(program, tier)
        assert outcome[0] == "report", outcome
        doc = json.loads(outcome[1])
        req = doc["requests"]
        assert req["completed"] == 2
        assert req["ttft"]["mean"] == pytest.approx(ttft, rel=1e-12), tier
        assert req["tpot"]["mean"] == pytest.approx(tpot, rel=1e-12), tier
        assert req["e2el"]["mean"] == pytest.approx(ttft + 3 * tpot, rel=1e-12), tier


def _refusal(tmp_path, capsys, steps):
    path = write(tmp_path / "s.jsonl", steps)
    code, out = serq(["fit", str(path)], capsys)
    assert code == 1, out
    assert out.startswith(f"{path}: error: ") and out.count("\n") == 1, out
    return out[len(f"{path}: error: "):-1]


def test_a_term_proportional_to_another_is_named_with_its_ratio(tmp_path, capsys):
    steps = [s | {"kv_decode": 1000 * s["decoders"]} for s in varied(60)]
    assert _refusal(tmp_path, capsys, steps) == (
        "the terms are linearly dependent over these 60 steps (in every step, kv_decode = 1000 * decoders): the "
        "fit is not determined (give steps in which these terms vary apart)")


def test_a_term_constant_in_every_step_is_named_with_its_value(tmp_path, capsys):
    steps = [s | {"prefilled": 512} for s in varied(60)]
    assert "(in every step, prefilled = 512)" in _refusal(tmp_path, capsys, steps)


def test_a_combination_and_two_relations_are_each_one_equation(tmp_path, capsys):
    steps = [s | {"attention": 2 + 3 * s["decoders"] + 0.5 * s["prefilled"]} for s in varied(60)]
    assert "(in every step, attention = 2 + 3 * decoders + 0.5 * prefilled)" in _refusal(tmp_path, capsys, steps)
    # two relations at once: each term the subject of one, the other subject out of it
    steps = [s | {"kv_decode": 16 * s["decoders"], "attention": 7 * s["prefilled"]} for s in varied(60)]
    assert "(in every step, attention = 7 * prefilled; kv_decode = 16 * decoders)" in \
        _refusal(tmp_path, capsys, steps)


def test_a_relation_is_found_and_written_whatever_the_terms_units(tmp_path, capsys):
    # attention ~1e11 against decoders ~10: in the terms' own units the relation's weights are 1e-10 apart,
    # which is no rounding (it was taken for one: "decoders = 0")
    steps = [s | {"attention": 1e10 * s["decoders"]} for s in varied(60) if s["decoders"]]
    assert "(in every step, attention = 1e+10 * decoders)" in _refusal(tmp_path, capsys, steps)
    steps = [s | {"kv_decode": 5000 - s["decoders"]} for s in varied(60)]
    assert "(in every step, kv_decode = 5000 - decoders)" in _refusal(tmp_path, capsys, steps)


def test_fewer_steps_than_coefficients_say_so(tmp_path, capsys):
    # docs/step-costs.md's three example steps
    steps = [{"decoders": 12, "kv_decode": 20480, "prefilled": 0, "attention": 0, "time": 0.0171},
             {"decoders": 0, "kv_decode": 0, "prefilled": 512, "attention": 262144, "time": 0.0412},
             {"decoders": 30, "kv_decode": 61000, "prefilled": 480, "attention": 1.9e6, "time": 0.0445}]
    assert _refusal(tmp_path, capsys, steps) == (
        "3 steps cannot determine the 5 coefficients c, d, e, a and b: a fit wants many steps of each kind, over "
        "the batch sizes and contexts to simulate")
    code, out = serq(["fit", str(write(tmp_path / "five.jsonl", varied(5)))], capsys)
    assert code == 0, out  # five varied steps determine the five


def test_a_chunked_prefill_reads_attention_from_the_chunks_position(tmp_path):
    # one request of 100 prompt tokens and 2 output tokens under a budget of 64: chunks of 64 at K = 0 and
    # 36 at K = 64 (attention 64 * 32 and 36 * (64 + 18)), the second sampling the first token; one decode
    # of context 101, allocated 112
    definition = "def mygpu() = " + " + ".join(
        [repr(TRUE["c"])] + [f"{TRUE[k]!r} * {t}" for k, t in zip("deab", ("decoders", "kv_decode", "prefilled",
                                                                       "attention"))]) + ";"
    src = tmp_path / "chunk.sq"
    src.write_text(ENGINE.format(definition=definition).replace("budget 2048", "budget 64")
                   .replace("arrive batch(2)", "arrive batch(1)").replace("set o = 4", "set o = 2"))
    program = serq_frontend.compile(src)
    c, d, e, a, b = (TRUE[k] for k in "cdeab")
    ttft = (c + a * 64 + b * 64 * 32) + (c + a * 36 + b * 36 * (64 + 18))
    for tier in ("", "general"):
        _, outcome, _ = run_on_tier(program, tier)
        req = json.loads(outcome[1])["requests"]
        assert req["ttft"]["mean"] == pytest.approx(ttft, rel=1e-12)
        assert req["tpot"]["mean"] == pytest.approx(c + d + e * 112, rel=1e-12)
