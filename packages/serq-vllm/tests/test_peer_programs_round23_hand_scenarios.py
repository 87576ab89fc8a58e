"""Scenarios a vLLM engineer wrote by hand and traced step by step from vLLM's rules before running them
(`serq vllm scenario FILE`), and the same engine written as a program (`serq run --records`).

A scenario that left out a setting (`num_blocks`) was told `'num_blocks' must be a positive integer`, at the
scenario's first character, as if a value were there and wrong; it is now told as missing, with the four
settings a scenario gives (serq_vllm.real.check_scenario).

The traces (the step clock: step k runs from k to k + 1; vLLM's running loop first, then its waiting loop with
the budget left; admission needs blocks for every token of the request, only the scheduled ones are
allocated; no admission in a step that preempted; a preempted request keeps its outputs):

* ``CHUNK_PREEMPT``: budget 16, blocks of 4, 8 usable. Step 0: r0 takes 12 (3 blocks), r1 the 4 tokens left
  (1 block, 3 reserved). Step 1: r0 decodes (4th block), r1's last 6 tokens (3 blocks): r0's first token at 1,
  r1's at 2. r2 (sent at 3) is admitted in step 3 with the one free block: first token at 4. Step 4: r1 grows
  to a 4th block, none is free: the last admitted, r2, is preempted. Step 5: r0 grows to a 5th block: r1 is
  preempted (4 outputs kept: 14 tokens). r1 needs 4 blocks, 3 are free until r0 ends at 8; step 8: r1 takes
  its 14 tokens and samples its 5th, r2 the 2 tokens the budget leaves; step 9: r1 its 6th (done 10), r2 its 3
  left and samples its 2nd (done 10).
* ``CHUNK_TURNS``: chunk 6 (a threshold while two requests run or wait), prefix caching. r0 and r2 take 6
  tokens each in step 0 and the rest in step 1 (first tokens at 2); r2 is done at 3, r0 at 4; its next turn is
  sent 1 step later, at 5, alone: no cut, its 12 tokens of history (3 full blocks) cached, 8 new: first
  token at 6, done at 7.
* ``LONE_CHUNK``: chunk 4, r0 of 40 tokens alone at 0 takes the whole budget, 16; r1 (4 tokens) is sent at 1,
  and while both run or wait each chunk is cut at 4: r0 4 a step, r1 its 4 at once (first token at 2, done at
  4); alone again at 4, r0 takes its last 12 (first token at 5, done at 6).
* ``CACHED_RESUME``: blocks of 2, 8 usable, prefix caching. r1 is preempted at step 3 with 2 outputs (8
  tokens, 7 computed), its blocks freed: its partial block first, which r0 takes. At 4 it needs 4 blocks and
  only its own 3 cached ones are free (they count, as vLLM's evictable blocks do); r0's growth at 5 evicts the
  last of them, and r1 comes back at 6 with 4 tokens cached (2 of its blocks), so the program's `c` reads 4.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from serq_vllm.real import ScenarioError, check_scenario

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).with_name("serq"))

CHUNK_PREEMPT = {"budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 9, "prefix_caching": False,
                 "requests": [{"prompt": 12, "out": 8}, {"prompt": 10, "out": 6}, {"prompt": 4, "out": 2, "arrive": 3}]}
CHUNK_TURNS = {"budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 21, "chunk": 6, "prefix_caching": True,
               "requests": [{"prompt": 10, "out": 3, "arrive": 0, "session": 0, "turn": 0},
                            {"prompt": 20, "out": 2, "session": 0, "turn": 1, "think": 1},
                            {"prompt": 9, "out": 2, "arrive": 0, "session": 1, "turn": 0}]}
LONE_CHUNK = {"budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 100, "chunk": 4,
              "requests": [{"prompt": 40, "out": 2}, {"prompt": 4, "out": 3, "arrive": 1}]}
CACHED_RESUME = {"budget": 8, "max_seqs": 4, "block_size": 2, "num_blocks": 9, "prefix_caching": True,
                 "requests": [{"prompt": 6, "out": 6}, {"prompt": 6, "out": 4}]}

BY_HAND = {
    "chunk_preempt": (CHUNK_PREEMPT, {"first": {"0": 1, "1": 2, "2": 4}, "done": {"0": 8, "1": 10, "2": 10},
                                      "preempted": {"0": 0, "1": 1, "2": 1}, "cached": {"0": 0, "1": 0, "2": 0},
                                      "preemptions": 2, "steps": 11}),
    "chunk_turns": (CHUNK_TURNS, {"first": {"0": 2, "1": 6, "2": 2}, "done": {"0": 4, "1": 7, "2": 3},
                                  "preempted": {"0": 0, "1": 0, "2": 0}, "cached": {"0": 0, "1": 12, "2": 0},
                                  "preemptions": 0, "steps": 8}),
    "lone_chunk": (LONE_CHUNK, {"first": {"0": 5, "1": 2}, "done": {"0": 6, "1": 4}, "preempted": {"0": 0, "1": 0},
                                "preemptions": 0, "steps": 7}),
    "cached_resume": (CACHED_RESUME, {"first": {"0": 1, "1": 2}, "done": {"0": 6, "1": 8},
                                      "preempted": {"0": 0, "1": 1}, "cached": {"0": 0, "1": 0},
                                      "preemptions": 1, "steps": 9}),
}


def scenario(serq, tmp_path: Path, sc: dict) -> dict:
    """The answer of ``serq vllm scenario`` of ``sc``, run by ``serq`` (the serq_in_process fixture: what is
    checked is the answer it prints)."""
    p = tmp_path / "s.json"
    p.write_text(json.dumps(sc))
    r = serq("vllm", "scenario", str(p))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_the_scenario_gives_the_hand_trace(tmp_path, name, serq_in_process):
    sc, want = BY_HAND[name]
    got = scenario(serq_in_process, tmp_path, sc)
    assert {k: got[k] for k in want} == want


PROGRAM = """use "vllm.sq";
pool reqs { cap 4; admit via engine; }
pool kv { cap 16; block 2; evict lru; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }

workload {
  arrive batch(2);
  hidden o;
}

session {
  set prompt = 6;
  set o = serial == 0 ? 6 : 4;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  record back { c = c; }
}

run { horizon inf; }
"""


def test_the_program_of_cached_resume_comes_back_with_two_blocks_cached(tmp_path, serq_in_process):
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    out = tmp_path / "r.csv"
    r = serq_in_process("run", str(p), "--no-progress", "--records", str(out))
    assert r.returncode == 0, r.stderr
    with (tmp_path / "r.request.csv").open() as f:
        rows = {int(row["session"]): row for row in csv.DictReader(f)}
    assert [(float(rows[s]["first_token"]), float(rows[s]["last_token"]), int(rows[s]["preemptions"]))
            for s in (0, 1)] == [(1.0, 6.0, 0), (2.0, 8.0, 1)]
    with (tmp_path / "r.back.csv").open() as f:
        assert {int(row["session"]): float(row["c"]) for row in csv.DictReader(f)} == {0: 0.0, 1: 4.0}


@pytest.mark.parametrize("key", ["budget", "max_seqs", "block_size", "num_blocks"])
def test_a_setting_left_out_is_told_missing(tmp_path, key):
    sc = {k: v for k, v in CHUNK_PREEMPT.items() if k != key}
    with pytest.raises(ScenarioError) as e:
        check_scenario(sc)
    assert str(e.value) == (f"'{key}' is missing: a scenario gives 'budget', 'max_seqs', 'block_size' and "
                            "'num_blocks', each a positive integer")
    p = tmp_path / "s.json"
    p.write_text(json.dumps(sc))
    r = subprocess.run([SERQ, "vllm", "scenario", str(p)], capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines()[0] == (f"{p}:1:1: error: '{key}' is missing: a scenario gives 'budget', "
                                        "'max_seqs', 'block_size' and 'num_blocks', each a positive integer")
    # one given but wrong is told as before
    with pytest.raises(ScenarioError, match=f"^'{key}' must be a positive integer$"):
        check_scenario({**CHUNK_PREEMPT, key: 0})
