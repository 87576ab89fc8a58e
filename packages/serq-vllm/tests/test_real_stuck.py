"""The real scheduler's run of a scenario that does not finish is the scenario's fault, told as one message:
``serq_vllm.real`` raises ``ScenarioStuck`` (a user error, ``serq_user_error``) where it raised a bare
``RuntimeError`` (a traceback in ``serq vllm real`` and in ``python -m serq_vllm.real``). vLLM is not a
dependency, so the scheduler here is a stand-in with its interface that never schedules anything: every
request is then one that "can never be scheduled" once nothing more is due."""

from __future__ import annotations

import json
import types

import pytest
from serq_vllm import real

pytestmark = pytest.mark.timeout(60)

SCENARIO = {"budget": 8, "max_seqs": 2, "block_size": 4, "num_blocks": 10,
            "requests": [{"prompt": 4, "out": 2}, {"prompt": 3, "out": 1, "arrive": 2}]}


class _Config:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class _Scheduler:
    """vLLM's Scheduler as far as real._run uses it, scheduling nothing."""

    def __init__(self, **kw):
        self.requests = {}
        self.steps = 0

    def add_request(self, req):
        self.requests[req.request_id] = req

    def schedule(self):
        self.steps += 1
        return types.SimpleNamespace(num_scheduled_tokens={}, preempted_req_ids=set())

    def update_from_output(self, out, runner_output):
        pass


def _fake_vllm() -> dict:
    cfg = lambda **kw: _Config(**kw)  # noqa: E731
    vllm_config = lambda **kw: _Config(cache_config=kw["cache_config"], **{k: v for k, v in kw.items()  # noqa: E731
                                                                             if k != "cache_config"})
    return {
        "ModelConfig": cfg, "CacheConfig": cfg, "SchedulerConfig": cfg, "VllmConfig": vllm_config,
        "DeviceConfig": cfg, "KVCacheConfig": cfg, "KVCacheGroupSpec": lambda *a: a, "FullAttentionSpec": cfg,
        "torch": types.SimpleNamespace(float32="float32"),
        "resolve_kv_cache_block_sizes": lambda kv, vc: (4, 4),
        "Scheduler": _Scheduler, "StructuredOutputManager": lambda vc: None,
        "SamplingParams": cfg, "Request": lambda **kw: _Config(**kw), "ModelRunnerOutput": cfg,
    }


def test_a_scenario_the_scheduler_never_serves_is_a_user_error(monkeypatch):
    monkeypatch.setattr(real, "_import_vllm", _fake_vllm)
    with pytest.raises(real.ScenarioStuck) as info:
        real.run_real(SCENARIO)
    # nothing ran and nothing more is due once the second request (due at step 2) is added
    assert str(info.value).startswith("requests [0, 1] can never be scheduled (step 2): ")
    assert info.value.serq_user_error is True


def test_python_m_serq_vllm_real_prints_the_message_and_exits_1(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(real, "_import_vllm", _fake_vllm)
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    assert real.main([str(f)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith("error: requests [0, 1] can never be scheduled (step 2)") and "Traceback" not in out.err


def test_a_scenario_past_the_step_limit_is_a_user_error(monkeypatch):
    # a stand-in that keeps scheduling nothing while a request is still due far ahead: the limit comes first
    monkeypatch.setattr(real, "_import_vllm", _fake_vllm)
    monkeypatch.setattr(real, "MAX_STEPS", 5)
    far = dict(SCENARIO, requests=[{"prompt": 4, "out": 2}, {"prompt": 3, "out": 1, "arrive": 100}])
    with pytest.raises(real.ScenarioStuck, match=r"^requests \[0, 1\] did not finish within 5 steps"):
        real.run_real(far)
