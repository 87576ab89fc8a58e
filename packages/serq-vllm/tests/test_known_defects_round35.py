"""Known defects, round 35, in serq-vllm.

3. ``serq vllm target`` refused a program at a construct in a ``--def`` body without quoting the body
   (``--def bud:1:1: error: the engine's budget is inf: …`` and nothing under it), where ``serq run`` quotes
   it: the target is made within serq.loading.defs_quoted too.
"""

from __future__ import annotations

import pytest
from serq.cli import main

PROGRAM = """\
def bud() = 512;
pool reqs { cap 64; admit via engine; }
pool kv { cap 8010 * 16; block 16; evict lru; preempt lifo; admit via engine; }
stage engine : step { budget bud(); cost 0.014 + 4.1e-5 * decoders + 5.2e-5 * prefilled; memory kv; }
workload { arrive poisson(1); }
session {
  hold reqs (1), kv (100) reserve (100) { run engine prefill (100) growing kv; } cache (100);
  end;
}
run { horizon 10; }
"""


def test_a_target_refused_at_a_def_body_quotes_the_body(tmp_path, monkeypatch, capsys):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["vllm", "target", "p.sq", "--def", "bud=1/0"])
    assert info.value.code == 1
    assert capsys.readouterr().err.splitlines()[:4] == [
        "--def bud:1:1: error: the engine's budget is inf: vLLM's max_num_batched_tokens is a whole number, at "
        "least 1",
        "  1/0",
        "  ^",
        "p.sq:4:30: note: in the expansion of `bud`, used here",
    ]
