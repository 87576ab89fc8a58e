"""Record vLLM's own serving metrics of the oracle scenarios, for the test that holds serQ's report to them
(packages/serq-vllm/tests/test_metrics_audit_round6_oracle.py).

Run it with an interpreter that has vLLM (see docs/vllm-oracle.md); serQ itself need not be installed there,
since the bridge (``serq_vllm/real.py``) is loaded from its file:

    ~/vllm-venv/bin/python packages/serq-vllm/scripts/make_metrics_oracle.py           # rewrite the file
    ~/vllm-venv/bin/python packages/serq-vllm/scripts/make_metrics_oracle.py --check   # compare, write nothing

Each scenario runs through the bridge's step clock (one ``schedule()`` a step; step k over [k, k + 1]) with the
real ``Scheduler`` built with ``log_stats=True``. vLLM stamps its events with ``time.monotonic()`` and its
iterations with ``time.time()``; both are replaced, in this process only, by the step clock offset by
``OFFSET`` (vLLM takes a ``scheduled_ts`` of 0.0 for "not scheduled yet", ``stats.py``
``update_from_events``, so a first scheduling at step 0 would otherwise be overwritten by a rescheduling after
a preemption): a ``schedule()`` call reads the step's start, the outputs of ``update_from_output`` its end.
Those outputs are fed, request by request, to vLLM's own ``IterationStats`` (``update_from_output``, with
``is_prefilling`` true until a request's first output, as the output processor keeps it, and
``update_from_finished_request`` at its finish), and the prefix-cache statistics are taken from the KV cache
manager after every step (``make_prefix_cache_stats``). What is written, per scenario (``GROUP/NAME``):

* ``requests``: per request index, vLLM's ``FinishedRequestStats`` (``e2e_latency``, ``queued_time``,
  ``prefill_time``, ``decode_time``, ``inference_time``, ``mean_time_per_output_token``,
  ``num_generation_tokens``, ``num_preemptions``) and the request's ``first_token_latency`` (its TTFT);
* ``itl``: every ``inter_token_latencies_iter`` value, in the order vLLM observed them;
* ``num_preemptions``: the sum of ``num_preempted_reqs`` (``vllm:num_preemptions``);
* ``prefix_cache``: ``queries``, ``hits`` (``vllm:prefix_cache_queries``, ``_hits``), ``preempted_queries``,
  ``preempted_hits`` summed over the steps.

A scenario with a serving order of its own (``serve``) runs through the bridge's subclass of this measuring
scheduler (``real._serve_scheduler``), which reorders the running requests before each ``schedule()``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from make_oracle import load_real  # (this folder: the script's first entry of sys.path)

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "serq_vllm"
ORACLE = PACKAGE / "oracle"
OUT = Path(__file__).resolve().parents[1] / "tests" / "metrics_oracle_round6.json"
FOLDERS = ("vllm", "vllm-serve", "generated")
OFFSET = 100.0
FINISHED = ("e2e_latency", "queued_time", "prefill_time", "decode_time", "inference_time",
            "mean_time_per_output_token", "num_generation_tokens", "num_preemptions")


def scenarios() -> list[Path]:
    out = []
    for folder in FOLDERS:
        for p in sorted((ORACLE / folder).glob("*.json")):
            if p.name.endswith((".out.json", ".target.json")):
                continue
            sc = json.loads(p.read_text(encoding="utf-8"))
            if "requests" in sc:
                out.append(p)
    return out


def measuring(base: type, clock: list[float], stats: dict) -> type:
    """The scheduler class ``base`` with log_stats on, feeding its outputs to vLLM's IterationStats."""
    from vllm.v1.metrics.stats import IterationStats, LoRARequestStates, RequestStateStats

    class Measuring(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):
            kwargs["log_stats"] = True
            super().__init__(*args, **kwargs)
            self._step = 0
            self._state: dict[str, RequestStateStats] = {}
            self._prefilling: dict[str, bool] = {}
            self._lora = LoRARequestStates(False)
            stats.update(requests={}, itl=[], num_preemptions=0,
                         prefix_cache=dict.fromkeys(("queries", "hits", "preempted_queries", "preempted_hits"), 0))

        def add_request(self, request):
            clock[0] = request.arrival_time + OFFSET
            self._state[request.request_id] = RequestStateStats(arrival_time=request.arrival_time + OFFSET)
            self._prefilling[request.request_id] = True
            return super().add_request(request)

        def schedule(self, *args, **kwargs):
            clock[0] = self._step + OFFSET
            out = super().schedule(*args, **kwargs)
            got = self.kv_cache_manager.make_prefix_cache_stats()
            for k in stats["prefix_cache"]:
                stats["prefix_cache"][k] += getattr(got, k)
            return out

        def update_from_output(self, scheduler_output, model_runner_output):
            end = self._step + 1 + OFFSET
            clock[0] = end
            outputs = super().update_from_output(scheduler_output, model_runner_output)
            it = IterationStats()
            for batch in outputs.values():
                for o in batch.outputs:
                    state = self._state[o.request_id]
                    it.update_from_output(o, end, self._prefilling[o.request_id], state, self._lora, None)
                    self._prefilling[o.request_id] = False
                    if o.finish_reason is not None:
                        it.update_from_finished_request(o.finish_reason, o.request_id, 0, None, state)
                        f = it.finished_requests[-1]
                        row = {k: getattr(f, k) for k in FINISHED}
                        row["first_token_latency"] = state.first_token_latency
                        stats["requests"][o.request_id] = row
            stats["itl"] += it.inter_token_latencies_iter
            stats["num_preemptions"] += it.num_preempted_reqs
            self._step += 1
            clock[0] = self._step + OFFSET
            return outputs

    return Measuring


def measure(real, paths: list[Path]) -> dict:
    clock = [0.0]
    time.monotonic = lambda: clock[0]  # the step clock, in this process only
    time.time = lambda: clock[0]
    v = real._import_vllm()
    stats: dict = {}
    v["Scheduler"] = measuring(v["Scheduler"], clock, stats)
    out: dict = {"vllm": real.vllm_version(), "scenarios": {}}
    with tempfile.TemporaryDirectory(prefix="serq-vllm-model-") as d:
        model = real._write_model_config(d)
        for p in paths:
            sc = json.loads(p.read_text(encoding="utf-8"))
            real.check_scenario(sc)
            real._run(v, sc, model)
            out["scenarios"][f"{p.parent.name}/{p.stem}"] = {
                "requests": dict(sorted(stats["requests"].items(), key=lambda kv: int(kv[0]))),
                "itl": stats["itl"], "num_preemptions": stats["num_preemptions"],
                "prefix_cache": stats["prefix_cache"],
            }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the stored file, write nothing")
    args = ap.parse_args(argv)
    got = measure(load_real(), scenarios())
    rows = [f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in got["scenarios"].items()]
    text = f'{{"vllm": {json.dumps(got["vllm"])}, "scenarios": {{\n' + ",\n".join(rows) + "\n}}\n"  # a line each
    if args.check:
        same = OUT.exists() and json.loads(OUT.read_text(encoding="utf-8"))["scenarios"] == got["scenarios"]
        print("the same" if same else f"differs from {OUT}")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(got['scenarios'])} scenarios, vLLM {got['vllm']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
