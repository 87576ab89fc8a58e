"""A scenario file's faulty value is told at its line and column, the line quoted with a caret (it was told
by its JSON path alone: ``error: s.json: requests[2]: 'prompt' and 'out' must be positive integers``); a
count serQ cannot hold exactly is refused (a budget of 2**53 + 1 ran as 2**53, a prompt of 2**53 + 1 tokens
as 2**53, so serQ answered for another scenario than the one vLLM runs, silently); and a value a message
quotes is cut (a serve order of 100 000 characters, an integer of 301 digits, were quoted whole)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_vllm.real import ScenarioError, check_scenario
from serq_vllm.scenarios import read_scenario

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
BASE = {"budget": 64, "max_seqs": 8, "block_size": 16, "num_blocks": 40}

# a scenario as someone writes it, over several lines: the faults below are in it at known places
TEXT = """{
  "budget": 64, "max_seqs": 8, "block_size": 16, "num_blocks": 40,
  "requests": [
    {"prompt": 100, "out": 3},
    {"prompt": 100, "out": 3, "arrive": 2},
    {"prompt": PROMPT, "out": 3XTRA}
  ]
}
"""


def _error(tmp_path, text: str) -> str:
    p = tmp_path / "s.json"
    p.write_text(text)
    with pytest.raises(UserError) as e:
        read_scenario(str(p))
    return str(e.value).replace(str(p), "s.json")


@pytest.mark.parametrize("prompt, extra, col, message", [
    # the value at fault: line 6, "    {\"prompt\": " is 15 characters
    ("-5", "", 16, "requests[2]: 'prompt' and 'out' must be positive integers"),
    ('"100"', "", 16, "requests[2]: 'prompt' and 'out' must be positive integers"),
    ("1.5", "", 16, "requests[2]: 'prompt' and 'out' must be positive integers"),
    # an unknown key is told at the key: '    {"prompt": 100, "out": 3, ' is 30 characters
    ("100", ', "tokens": [1, 2]', 31, "requests[2].tokens: unknown request key, not modelled"),
    # a later turn's fault at its own value, past two requests that are whole: '    {"session": 1, "prompt": 200,
    # "out": 3, "think": ' is 53 characters
    ("100", ', "think": 1.5', 54, "requests[2].think: must be a non-negative integer"),
])
def test_a_faulty_value_is_told_at_its_line_and_column(tmp_path, prompt, extra, col, message):
    text = TEXT.replace("PROMPT", prompt).replace("XTRA", extra)
    if "think" in extra:  # (a think belongs to a session's turn: the request is one, its history 103 tokens)
        text = text.replace('"out": 3, "arrive": 2}', '"out": 3, "arrive": 2, "session": 1}').replace(
            '{"prompt": 100, "out": 3, "think"', '{"session": 1, "prompt": 200, "out": 3, "think"')
    line = text.splitlines()[5]
    head, src, caret = _error(tmp_path, text).split("\n")
    assert head.startswith(f"s.json:6:{col}: error: {message}"), head
    assert src == "  " + line and caret == " " * (2 + col - 1) + "^"


def test_what_is_not_a_scenario_is_told_where_it_is(tmp_path):
    assert _error(tmp_path, '\n\n  {"requests": {}}').split("\n")[0] == (
        "s.json:3:16: error: not a scenario: expected an object with a non-empty 'requests' list")
    assert _error(tmp_path, '  [1]').split("\n")[0] == (
        "s.json:1:3: error: not a scenario: expected an object with a non-empty 'requests' list")


E = 2**53  # the first whole number above which a double skips one: 2**53 + 1 is read as 2**53


@pytest.mark.parametrize("change, message", [
    ({"budget": E + 1, "num_blocks": 40}, "'budget': 9007199254740993 is not below 2**53"),
    ({"block_size": E}, "'block_size': 9007199254740992 is not below 2**53"),
    ({"chunk": E + 1}, "'chunk': 9007199254740993 is not below 2**53"),
    ({"requests": [{"prompt": E + 1, "out": 1}], "block_size": 2**30, "num_blocks": 2**22},
     "requests[0].prompt: 9007199254740993 is not below 2**53"),
    # a KV cache of 2**50 blocks of 8 tokens, less the null block, is 2**53 - 8 tokens (held); of 2**50 + 2
    # blocks it is 2**53 + 8 tokens, which a double holds only by luck (every block count odd is not)
    ({"num_blocks": 2**50 + 2, "block_size": 8},
     "'num_blocks': 1125899906842625 blocks (less vLLM's null block) of 8 tokens are 9007199254741000 tokens"),
])
def test_a_count_beyond_what_a_double_holds_is_refused(change, message):
    sc = {**BASE, "requests": [{"prompt": 100, "out": 3}], **change}
    with pytest.raises(ScenarioError) as e:
        check_scenario(sc)
    assert str(e.value).startswith(message), str(e.value)


def test_the_largest_counts_a_double_holds_are_taken():
    # 2**53 - 1 is held exactly: the budget, and a cache of 2**53 - 8 tokens
    check_scenario({**BASE, "budget": E - 1, "block_size": 8, "num_blocks": 2**50,
                    "requests": [{"prompt": 100, "out": 3}]})


def test_a_long_value_is_quoted_cut(tmp_path):
    serve = "x" * 100_000
    with pytest.raises(ScenarioError) as e:
        check_scenario({**BASE, "serve": serve, "requests": [{"prompt": 100, "out": 3}]})
    said = str(e.value)
    assert len(said) < 300 and "(100000 characters)" in said and said.startswith("'serve': serve order 'xxx")
    with pytest.raises(ScenarioError) as e:
        check_scenario({**BASE, "budget": 10**300, "requests": [{"prompt": 100, "out": 3}]})
    assert len(str(e.value)) < 300 and "(301 digits)" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        check_scenario({**BASE, "requests": [{"session": "s" * 10_000, "turn": 1, "prompt": 100, "out": 3},
                                             {"session": "s" * 10_000, "turn": 1, "prompt": 200, "out": 3}]})
    assert len(str(e.value)) < 300 and "(10000 characters)" in str(e.value)


def test_the_command_tells_it_so(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps({**BASE, "requests": [{"prompt": 100, "out": 0}]}, indent=1))
    for command in ("scenario", "real"):
        r = subprocess.run([SERQ, "vllm", command, "s.json"], capture_output=True, text=True, cwd=tmp_path,
                           timeout=60, stdin=subprocess.DEVNULL)
        # {"budget": 64, ... one key a line: "requests" on line 6, its request's "out" on line 9
        assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
        assert r.stderr == ("s.json:9:11: error: requests[0]: 'prompt' and 'out' must be positive integers\n"
                            '     "out": 0\n' + " " * (2 + 10) + "^\n")


def test_an_unknown_key_is_quoted_escaped_and_cut():
    # a line break in the key split the message's line (and an escape sequence drove the terminal)
    with pytest.raises(ScenarioError) as e:
        check_scenario({**BASE, "a\nb\x1b[2J": 1, "requests": [{"prompt": 100, "out": 3}]})
    assert str(e.value).startswith("'a\\nb\\x1b[2J': unknown scenario key, not modelled")
    with pytest.raises(ScenarioError) as e:
        check_scenario({**BASE, "requests": [{"prompt": 100, "out": 3, "x" * 100_000: 1}]})
    assert str(e.value).startswith("requests[0].'xxx") and "(100000 characters): unknown request key" in str(e.value)
    assert len(str(e.value)) < 300
    with pytest.raises(ScenarioError) as e:  # a name of a key stays as it was
        check_scenario({**BASE, "requests": [{"prompt": 100, "out": 3, "prefix": 1}]})
    assert str(e.value).startswith("requests[0].prefix: unknown request key")
