"""A third party's preemption policy on the KV pool of lib/vllm.sq's ``vllm_request``, installed as a wheel
leaves it (a ``*.dist-info`` with its ``entry_points.txt`` in a folder on ``sys.path``): ``@youngest``
preempts the candidate admitted last other than the grower. Three requests traced by hand: the victims it
picks, and what becomes of each request; ``preempt lifo`` preempts the mirror images. ``serq vllm target``
of the program says why it is no vLLM engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq.plugins import get_plugin_manager
from serq_report.json import encode_json

pytestmark = pytest.mark.timeout(60)

POLICY = '''from serq import hookimpl
from serq_sim.policies import PreemptionPolicy

#: (now, the grower, the candidates, the victim), by serial, of every call
CALLS = []


class Youngest(PreemptionPolicy):
    """The candidate admitted last that is not the grower (the grower when it is the only one); at the tail."""

    requeue = "tail"

    def victim(self, pool, grower):
        candidates = [s for s, _slot in self.sim.preempt_candidates(pool)]
        others = [s for s in candidates if s is not grower]
        victim = others[-1] if others else grower if grower in candidates else None
        CALLS.append((self.sim.now, grower.serial, [s.serial for s in candidates],
                      None if victim is None else victim.serial))
        return victim


@hookimpl
def serq_sim_register_preemption_policies(register):
    register("youngest", Youngest)
'''

PROGRAM = """use "vllm.sq";

pool reqs { cap 3; admit via engine; }
pool kv { cap 8; block 1; evict lru; preempt @youngest; }
stage engine : step { budget 100; cost 1; memory kv; }
workload { arrive batch(3); hidden o; }
session {
  set n = 2;
  set o = 4;
  set t0 = now;
  vllm_request(reqs, kv, engine, n, o, t0);
  end;
}
run { horizon 100; }
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    info = site / "serq_acme-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme = acme2_vpolicy\n")
    (site / "acme2_vpolicy.py").write_text(POLICY)
    monkeypatch.syspath_prepend(str(site))
    before = set(sys.modules)
    yield site
    for name in set(sys.modules) - before:
        if name.startswith("acme2_"):
            del sys.modules[name]


def _requests(pm, source: str, monkeypatch) -> dict[int, tuple]:
    """Each request's (last token, preemptions) by session, the JSON report the same on both tiers."""
    prog = serq_frontend.compile(source=source, pm=pm)
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        out.append(serq_sim.run(prog, pm=pm, seed=1))
    assert encode_json(out[0]) == encode_json(out[1])
    cols = out[0].record_table("request").arrays()
    return {int(s): (float(t), int(p)) for s, t, p in zip(cols["session"], cols["last_token"], cols["preemptions"])}


def test_the_victims_a_preemption_plugin_picks_on_a_vllm_kv_pool(site, monkeypatch):
    """Requests 0, 1, 2 of a prompt of 2 and 4 outputs, a KV pool of 8 tokens in blocks of 1, one iteration
    a unit of time. At 0 all three are admitted (2 each, 6) and prefilled; at 1 each grows by a token to
    decode: 0 to 3 (7), 1 to 3 (8), and 2 does not fit: @youngest, asked with the candidates 0, 1, 2 and the
    grower 2, preempts 1 (the last admitted but the grower), whose 3 go, and 2 grows (6 used); 1 waits,
    its 3 known tokens not fitting beside 6. At 2 both grow to 4 (8). At 3 request 0 grows for its last
    token, does not fit, and the candidates are 0 and 2: 2 is preempted (3 outputs sampled, at 1, 2, 3). 0
    ends at 4; then 1 (known 3, its 2 computed cached) and 2 (known 5, its 4 cached) are admitted together
    (8), and each prefills its one uncached token in the iteration to 5, which samples 1's second output and
    2's fourth and last: 2 ends at 5, and 1 decodes its last two, ending at 7. Under lifo the last admitted
    is preempted, the grower itself at 1 (2) and then 1 at 3: 1 and 2 swap."""
    pm = get_plugin_manager()
    calls = sys.modules["acme2_vpolicy"].CALLS
    assert _requests(pm, PROGRAM, monkeypatch) == {0: (4.0, 0), 1: (7.0, 1), 2: (5.0, 1)}
    assert calls == [(1.0, 2, [0, 1, 2], 1), (3.0, 0, [0, 2], 2)] * 2  # (once a tier)
    assert _requests(pm, PROGRAM.replace("@youngest", "lifo"), monkeypatch) == {0: (4.0, 0), 1: (5.0, 1),
                                                                                 2: (7.0, 1)}


def test_the_vllm_target_of_a_plugins_policy_says_what_vllm_does(site, tmp_path):
    program = tmp_path / "v.sq"
    program.write_text(PROGRAM)
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([str(Path(sys.executable).parent / "serq"), "vllm", "target", str(program)],
                       capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stdout) == (1, ""), r
    assert r.stderr.splitlines()[0] == (f"{program}:4:1: error: memory pool `kv` does not `preempt lifo`: vLLM "
                                        "preempts the last admitted running request and re-queues it at the head")
