"""A scenario's serving order with blanks the bridge skips and serQ's language does not read.

The bridge reads ``serve`` with its blanks taken out, Python's ``str.split`` blanks: a no-break space, an
ideographic space, a vertical tab, U+001C among them. ``serq vllm scenario`` passed the text as written to
the scenario program as its ``serve_key`` definition, whose compile refused it at ``defs['serve_key']:1:9``
(a place in no file the user has, the line quoted with ``?`` for the character); the two sides read one
order differently. Both now read :func:`serq_vllm.real.serve_form`'s spelling.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from serq_vllm.real import serve_form
from serq_vllm.scenarios import ORACLE, compare, run_scenario

SERQ = str(Path(sys.executable).parent / "serq")
SHIPPED = ORACLE / "vllm-serve" / "prefill_first.json"  # serve 'decoding ? 1 : 0', with vLLM's answer beside it


@pytest.mark.parametrize("serve, form", [
    ("decoding\u00a0?\u00a01 : 0", "decoding ? 1 : 0"),
    ("decoding\u3000?1:0", "decoding ? 1 : 0"),
    ("decoding ? 1 : 0\x0b", "decoding ? 1 : 0"),
    ("decoding ? 1 : 0\x1c", "decoding ? 1 : 0"),
    ("-\nadmission", "-admission"),
    (" decoding ", "decoding"),
    ("decoding?.5:-0", "decoding ? .5 : -0"),
])
def test_the_one_spelling_of_an_order(serve, form):
    assert serve_form(serve) == form


@pytest.mark.parametrize("serve", ["decoding ? nan : 0", "decoding ? 1e3 : 0", "decoding ? \u0661 : 0", "", "admision"])
def test_an_order_the_bridge_lacks_is_refused(serve):
    with pytest.raises(ValueError, match="is not supported by the bridge"):
        serve_form(serve)


@pytest.mark.parametrize("serve", ["decoding\u00a0?\u00a01 : 0", "decoding\u3000?1:0", "decoding ? 1 : 0\x1c"])
def test_a_scenario_whose_order_has_such_blanks_runs_as_the_plain_one(serve, tmp_path):
    sc = json.loads(SHIPPED.read_text(encoding="utf-8"))
    expected = json.loads(SHIPPED.with_name("prefill_first.out.json").read_text(encoding="utf-8"))
    sc["serve"] = serve
    # the real scheduler's answer to the plain order (prefills first) is this one's too
    assert compare(run_scenario(sc), expected) == []
    path = tmp_path / "blanks.json"
    path.write_text(json.dumps(sc), encoding="utf-8")
    r = subprocess.run([SERQ, "vllm", "scenario", str(path)], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert compare(json.loads(r.stdout), expected) == []
