"""examples/single-turn/vllm_priority.sq's pool options (vLLM's priority policy) on a schedule traced by hand.

A serving researcher compared first come first served with priority classes on one engine and checked the
difference on the smallest case that shows it: a KV pool of 12 tokens (block 1), budget 100, cost 1 a step,
two requests of 4 prompt and 6 output tokens each, A (batch, priority 1) sent at 0 and B (interactive,
priority 0) sent at 1.5.

By hand: A prefills its 4 tokens in [0, 1) (first token at 1) and decodes one token a step, its KV 5 after
[1, 2), 6 after [2, 3), 7 after [3, 4). B is admitted at 2 (units 4: 6 + 4 <= 12), prefills in [2, 3) (first
token at 3) and decodes, its KV 5 after [3, 4). At 4 the pool is full (7 + 5) and A grows:

* vLLM's default (`preempt lifo`: the last admitted, B; `queue fifo`): B is preempted with 5 computed (4 + 1)
  and 2 tokens out; A decodes to its sixth token at 6 (KV 8, 9: each takes a block of B's cached prefix, which
  keeps 3). B comes back at 6 with known = 6, hit 3, prefills 3 in [6, 7) and decodes its last 3 tokens: done
  at 10, first token still 3.
* the example's priority policy (`preempt by (-prio, -t0, admission) requeue tail`): the least keys lose,
  A's (-1, 0, …) before B's (0, -1.5, …): A preempts itself, with 7 computed and 4 tokens out, and the serving
  goes on to B (a policy other than lifo does not stop at a self-preemption), which decodes its 6 tokens by 8
  (first token at 3). A comes back at 8 with known = 8 and the part of its cached 7 that B's growth to 9 left
  (3), prefills 5 in [8, 9) and decodes its last token: done at 10, first token still 1.

So under the priority policy the interactive request ends 2 steps earlier and the batch one at the same step.
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "single-turn" / "vllm_priority.sq"
SERQ = str(Path(sys.executable).with_name("serq"))

TINY = """use "vllm.sq";
let blocks = 12;
let bs = 1;
REQS
KV
stage engine : step { budget 100; cost 1; memory kv; }
stage gap : delay;

workload {
  arrive batch(2);
  hidden o;
}

session {
  run gap (serial == 1 ? 1.5 : 0);
  set prompt = 4;
  set o = 6;
  set prio = serial == 1 ? 0 : 1;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}

run { horizon inf; }
"""


def pools_of_the_example() -> tuple[str, str]:
    text = EXAMPLE.read_text()
    reqs = re.search(r"^pool reqs \{.*\}$", text, re.M)
    kv = re.search(r"^pool kv \{.*\}$", text, re.M)
    assert reqs and kv
    return reqs.group(0).replace("cap 256", "cap 2"), kv.group(0)


def schedule(tmp_path: Path, reqs: str, kv: str) -> dict[int, tuple[float, float, float, int]]:
    """session -> (admitted, first_token, last_token, preemptions) of the tiny case."""
    p = tmp_path / "tiny.sq"
    p.write_text(TINY.replace("REQS", reqs).replace("KV", kv))
    out = tmp_path / "r.csv"
    r = subprocess.run([SERQ, "run", str(p), "--no-progress", "--records", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    with out.open() as f:
        return {int(row["session"]): (float(row["admitted"]), float(row["first_token"]), float(row["last_token"]),
                                      int(row["preemptions"])) for row in csv.DictReader(f)}


def test_the_examples_priority_policy_preempts_the_batch_request(tmp_path):
    reqs, kv = pools_of_the_example()
    assert "queue by (prio, t0)" in reqs and "preempt by (-prio, -t0, admission) requeue tail" in kv
    assert schedule(tmp_path, reqs, kv) == {0: (0.0, 1.0, 10.0, 1), 1: (2.0, 3.0, 8.0, 0)}


def test_vllms_default_preempts_the_last_admitted(tmp_path):
    reqs, kv = "pool reqs { cap 2; admit via engine; }", "pool kv { cap blocks * bs; block bs; evict lru; preempt lifo; }"
    assert schedule(tmp_path, reqs, kv) == {0: (0.0, 1.0, 6.0, 0), 1: (2.0, 3.0, 10.0, 1)}
