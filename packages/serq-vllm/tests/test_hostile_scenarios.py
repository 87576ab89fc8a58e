"""A scenario the step clock cannot finish (a prompt of 10**15 tokens, an arrival at step 10**15): the
error named neither the scenario's file nor the horizon it missed (`error: requests [0] did not finish by
the horizon (stuck?)`). It names both, the requests listed plainly, at the place in the file of the first
request that did not finish: the value that puts its earliest end past the horizon (the prompt of 10**15
tokens, 48 a step; the arrival), as test_known_defects_round2.py works out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
BASE = {"budget": 48, "max_seqs": 8, "block_size": 8, "num_blocks": 14,
        "requests": [{"prompt": 39, "out": 16}, {"prompt": 15, "out": 50, "arrive": 4}]}


@pytest.mark.parametrize("change, missing, value, why", [
    # (a KV cache to hold it: a request that can never fit is refused before the run, test_peer_programs2.py;
    # the cache's 2**50 - 1 blocks of 8 are 2**53 - 8 tokens, below 2**53, where a count is refused)
    # (refused before the run, test_known_defects_round3.py: request 0 alone cannot end by the horizon; request 1,
    # which waits behind it, is not named, as it could end in time alone)
    (lambda sc: (sc["requests"][0].__setitem__("prompt", 10**15), sc.__setitem__("num_blocks", 2**50)), "0",
     '"prompt": 1000000000000000', "requests[0] ends at step 20833333333349 at the earliest (submitted at step 0 "
     "at the earliest, its 1000000000000000 prompt tokens in 20833333333334 step(s) of at most 48 tokens, then "
     "its 16 output tokens one a step)"),
    # (an arrival of 10**30 is refused before the run, as beyond 2**53: test_known_defects_round38.py)
    (lambda sc: sc["requests"][1].__setitem__("arrive", 10**15), "1", '"arrive": 1' + "0" * 15,
     "requests[1] ends at step 1000000000000050 at the earliest (submitted at step 1000000000000000 at the "
     "earliest, its 15 prompt tokens in 1 step(s) of at most 48 tokens, then its 50 output tokens one a step)"),
])
def test_a_scenario_that_does_not_finish_names_its_file_and_the_horizon(tmp_path, change, missing, value, why):
    sc = json.loads(json.dumps(BASE))
    change(sc)
    (tmp_path / "long.json").write_text(json.dumps(sc))
    r = subprocess.run([SERQ, "vllm", "scenario", "long.json"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == "", r.stderr
    text = json.dumps(sc)
    col = text.index(value) + len(value.split(": ")[0]) + 3  # the value's first character, 1-based
    assert r.stderr.splitlines()[0] == (f"long.json:1:{col}: error: request(s) {missing} did not finish by step "
                                        f"1000000, the scenario program's horizon: {why}")
