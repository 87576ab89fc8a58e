"""examples/replay/vllm_replay.sq, the A100 replay of language.txt §8: its clock and its metrics by
hand on one- and two-turn traces, and the full trace at 5 s against §8's model figures.

The expectations are written from §8 and the fit (examples/replay/a100_step_fit.json), not read
back from a run: an iteration costs c_it + d * decoders + e * kv_decode + a * prefilled +
b * attention (attention = sum of n * (K + n / 2) over the prefill chunks, K the position before the
chunk), with c_it = 4 ms in place of the fit's fixed c, and a request reaches the scheduler c0 =
40 ms after it is sent, which its TTFT counts. docs/vllm.md, The A100 replay, says why.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
REPLAY = ROOT / "examples" / "replay" / "vllm_replay.sq"
FIT = json.loads((ROOT / "examples" / "replay" / "a100_step_fit.json").read_text())["sum"]
C_IT = 0.004  # s per iteration on the served path, in place of FIT["c"]
C0 = 0.040  # s per request before the scheduler
SPACING = 3.5  # the program's default; session 0 is sent after one gap
HEADER = "session,turn,new,out,think,forced\n"


def prefill_step(n: float, k: float) -> float:
    """One iteration that prefills n tokens from position k and nothing else."""
    return C_IT + FIT["a"] * n + FIT["b"] * n * (k + n / 2)


def decode_step(decoders: int, kv: float) -> float:
    """One iteration of `decoders` decodes holding kv KV tokens (allocated blocks) between them."""
    return C_IT + FIT["d"] * decoders + FIT["e"] * kv


@pytest.fixture
def run(serq_in_process):
    """``run(trace, tmp_path, *args)``: the report and the per-request samples ({observe: {(session, turn):
    value}}) of ``serq run`` of the replay (in this process: what is checked is the figures)."""

    def call(trace: Path, tmp_path: Path, *args: str) -> tuple[dict, dict]:
        dump = tmp_path / "dump"
        r = serq_in_process("run", str(REPLAY), "--no-progress", "--json", "--trace", str(trace), "--dump",
                            str(dump), *args)
        assert r.returncode == 0, r.stderr
        samples = {}
        for f in dump.glob("*.csv"):
            with f.open() as fh:
                samples[f.stem] = {(int(row["session"]), int(row["turn"])): float(row["value"])
                                   for row in csv.DictReader(fh)}
        return json.loads(r.stdout), samples

    return call


def test_one_request_costs_c0_and_its_prefill_chunks_with_c_it_in_place_of_c(tmp_path, run):
    # 1000 tokens, nothing cached: chunks of 512 (K = 0) and 488 (K = 512); then 3 decodes on 63
    # blocks (1008 tokens held). With the fit's c added to c_it (17.9 ms a step) the TTFT would be
    # 27.9 ms longer and the response 69.7 ms longer.
    trace = tmp_path / "one.csv"
    trace.write_text(HEADER + "0,1,1000,4,0.0,0\n")
    _report, s = run(trace, tmp_path, "--arrivals", "1")
    ttft = C0 + prefill_step(512, 0) + prefill_step(488, 512)
    assert s["ttft"][(0, 1)] == pytest.approx(ttft, abs=1e-12)
    assert s["first_token"][(0, 1)] == pytest.approx(SPACING + ttft, abs=1e-12)
    assert s["response"][(0, 1)] == pytest.approx(ttft + 3 * decode_step(1, 1008), abs=1e-12)
    assert s["hit"][(0, 1)] == 0


def test_a_follow_up_reuses_the_previous_prompt_and_is_the_only_full_hit_sample(tmp_path, run):
    # Turn 2 (1100 tokens) is sent 1 s after turn 1's last token; it reuses turn 1's prompt in
    # whole blocks, floor(1000 / 16) * 16 = 992 tokens (not turn 1's outputs), and prefills the
    # remaining 108 in one chunk from K = 992. Turn 1 has nothing to find: no full_hit sample.
    trace = tmp_path / "two.csv"
    trace.write_text(HEADER + "0,1,1000,4,1.0,0\n0,2,1100,2,0.0,0\n")
    report, s = run(trace, tmp_path, "--arrivals", "1")
    done1 = SPACING + C0 + prefill_step(512, 0) + prefill_step(488, 512) + 3 * decode_step(1, 1008)
    assert s["done"][(0, 1)] == pytest.approx(done1, abs=1e-12)
    assert s["hit"][(0, 2)] == 992
    ttft2 = C0 + prefill_step(108, 992)
    assert s["ttft"][(0, 2)] == pytest.approx(ttft2, abs=1e-12)
    assert s["first_token"][(0, 2)] == pytest.approx(done1 + 1.0 + ttft2, abs=1e-12)
    assert s["full_hit"] == {(0, 2): 1.0}
    assert report["observes"]["full_hit"]["count"] == 1


def test_a_forced_follow_up_is_a_miss(tmp_path, run):
    trace = tmp_path / "forced.csv"
    trace.write_text(HEADER + "0,1,1000,4,1.0,0\n0,2,1100,2,0.0,1\n")
    _report, s = run(trace, tmp_path, "--arrivals", "1")
    assert s["hit"][(0, 2)] == 0
    assert s["ttft"][(0, 2)] == pytest.approx(C0 + prefill_step(512, 0) + prefill_step(512, 512)
                                              + prefill_step(76, 1024), abs=1e-12)
    assert s["full_hit"] == {(0, 2): 0.0}


def test_the_full_trace_at_5s_gives_the_model_figures_of_section_8(serq_in_process):
    # §8: at 5 s the reference program predicts TTFT 0.168 s and full-hit 0.947 (measured: 0.177 s,
    # 0.966). Tolerances: §8 quotes three digits; the served constants are calibrated on a grid
    # whose last digit (c_it 4 +- 0.1 ms, c0 40 +- 1 ms) moves this run's TTFT by at most 0.5 %, and
    # +-10 blocks of pool move nothing at 5 s. 2 % on TTFT is four times that and a twentieth of
    # the fault this guards against (c_it added to the fit's c: 0.237 s, +41 %). 0.005 on full-hit
    # is 15 of the 2 988 follow-ups; this run is 6 requests (0.002) above §8, which is not
    # explained (docs/vllm.md), and counting first turns as hits would give 0.954 (+0.007).
    r = serq_in_process("run", str(REPLAY), "--no-progress", "--json", "--set", "spacing=5")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["arrivals"] == 333 and report["ended"] == 333
    ob = report["observes"]
    assert ob["ttft"]["count"] == 3321 and ob["full_hit"]["count"] == 3321 - 333
    assert ob["ttft"]["mean"] == pytest.approx(0.168, rel=0.02)
    assert ob["full_hit"]["mean"] == pytest.approx(0.947, abs=0.005)
