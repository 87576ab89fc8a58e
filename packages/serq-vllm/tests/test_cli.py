"""The `serq vllm` commands.

Tests of what a command prints and its status call serq.cli.main in the test's process (serq_in_process, as a
shell runs it); each command keeps tests that run it as a child process (`serq`, below): the scenario's answer,
a missing scenario, a deep scenario and one unmodelled scenario of scenario and of real, real without vLLM, the
plain engine's target."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq_vllm.scenarios import ORACLE

SERQ = str(Path(sys.executable).parent / "serq")


def serq(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=300, env=os.environ)


def test_scenarios_lists_the_shipped_files():
    r = serq("vllm", "scenarios")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(line.startswith("vllm/preempt ") and "2 request(s)" in line for line in lines)
    assert any(line.startswith("vllm-serve/newest_first ") and "serve by (-admission)" in line for line in lines)


def test_scenario_prints_the_answer():
    r = serq("vllm", "scenario", str(ORACLE / "vllm" / "preempt.json"))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    want = json.loads((ORACLE / "vllm" / "preempt.out.json").read_text())
    assert (got["first"], got["done"], got["preemptions"], got["steps"]) == (
        want["first"], want["done"], want["preemptions"], want["steps"])


def test_scenario_by_name(serq_in_process):
    r = serq_in_process("vllm", "scenario", "vllm/hol")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["first"] == json.loads((ORACLE / "vllm" / "hol.out.json").read_text())["first"]


#: ``serq vllm scenario`` in this process, then which heavy modules it imported (the compiler, numpy) and
#: how many plugin managers it built
PROBE = """import json, sys
import serq.plugins as plugins
built = []
make = plugins.get_plugin_manager
plugins.get_plugin_manager = lambda *a, **k: built.append(1) or make(*a, **k)
sys.argv = ["serq", "vllm", "scenario", sys.argv[1]]
from serq.cli import main
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m in ("lark", "numpy", "serq_frontend.parser", "serq_frontend.link"))
print(json.dumps({"heavy": heavy, "managers": len(built)}))
"""


def test_a_second_scenario_of_the_same_settings_compiles_nothing(tmp_path):
    # The program before its sessions depends only on the settings (budget, blocks, serve order…): the
    # second scenario with the same settings but other requests loads it from the compile cache, and no
    # run imports numpy to read its answers or builds a second plugin manager.
    env = {**os.environ, "SERQ_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("SERQ_COMPILE_CACHE", None)
    sc = json.loads((ORACLE / "vllm" / "preempt.json").read_text())
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text(json.dumps(sc))
    sc["requests"] = [*sc["requests"], {"prompt": 20, "out": 3, "arrive": 9}]
    two.write_text(json.dumps(sc))

    def probe(path):
        r = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, timeout=300,
                           env=env)
        assert r.returncode == 0, r.stderr
        answer, seen = r.stdout.splitlines()
        return json.loads(answer), json.loads(seen)

    answer, seen = probe(one)
    assert "lark" in seen["heavy"] and "numpy" not in seen["heavy"] and seen["managers"] == 1
    want = json.loads((ORACLE / "vllm" / "preempt.out.json").read_text())
    assert (answer["first"], answer["done"], answer["preemptions"]) == (want["first"], want["done"],
                                                                        want["preemptions"])
    answer, seen = probe(two)
    assert seen == {"heavy": [], "managers": 1}
    assert len(answer["done"]) == len(sc["requests"])


@pytest.mark.parametrize("text,message", [
    ("{", "bad.json:1:2: error: not JSON: Expecting property name enclosed in double quotes\n  {\n   ^"),
    ('{"budget": 1,\n\t"max_seqs" 1}', 'bad.json:2:13: error: not JSON: Expecting \':\' delimiter\n'
                                       '   "max_seqs" 1}\n              ^'),
    ("", "bad.json:1:1: error: the file is empty (a scenario is a JSON object)\n  \n  ^"),
    ('{"requests": []}', "not a scenario"),
    ('{"budget": 1, "max_seqs": 1, "block_size": 16, "num_blocks": 3, "requests": [{"prompt": 0, "out": 1}]}',
     "'prompt' and 'out' must be positive integers"),
    # nested past json.loads' recursion, and bytes that are not UTF-8: tracebacks
    pytest.param('{"a": ' * 100_000 + "1" + "}" * 100_000, "bad.json:1:1: error: not a scenario: JSON nested too "
                 'deeply\n  {"a": {"a": ', id="deep"),
    pytest.param(b'{"budget": "\xff"}', 'bad.json:1:13: error: the file is not UTF-8 text (byte 0xFF)\n'
                 '  {"budget": "\\xff"}\n              ^', id="not-utf8"),
    # an integer beyond a float's range where a count goes (an OverflowError traceback when it was made a
    # float), and one past Python's int-parsing limit (a ValueError traceback)
    pytest.param('{"budget": 64, "max_seqs": 8, "block_size": 16, "num_blocks": 40, "requests": [{"prompt": 1'
                 + "0" * 400 + ', "out": 1}]}', "bad.json:1:91: error: the integer 100000000000...000000 (401 digits) "
                 "is beyond the range of a number", id="huge-int"),
    pytest.param('{"budget": 1' + "0" * 5000 + ', "requests": [{"prompt": 1, "out": 1}]}',
                 "(5001 digits) is beyond the range of a number", id="int-past-python-limit"),
])
def test_bad_scenario_is_one_error(tmp_path, serq_in_process, text, message):
    p = tmp_path / "bad.json"
    p.write_bytes(text) if isinstance(text, bytes) else p.write_text(text)
    # (the file nested 100 000 deep in a child process, as a shell runs it: the depth is the process's)
    run = serq if isinstance(text, str) and text.startswith('{"a": {"a": ') else serq_in_process
    for command in ("scenario", "real"):
        r = run("vllm", command, str(p))
        assert r.returncode == 1
        assert message in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_scenario_with_a_byte_order_mark_is_read(tmp_path, serq_in_process):
    # it was "Unexpected UTF-8 BOM (decode using utf-8-sig)" where an IR file, a trace and a step trace
    # skip the mark
    text = (ORACLE / "vllm" / "preempt.json").read_bytes()
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + text)
    r = serq_in_process("vllm", "scenario", str(tmp_path / "bom.json"))
    want = json.loads((ORACLE / "vllm" / "preempt.out.json").read_text())
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["done"] == want["done"]


BASE = {"budget": 64, "max_seqs": 8, "block_size": 16, "num_blocks": 40}


def _turns(**second):
    return [{"session": 0, "turn": 1, "prompt": 100, "out": 3}, {"session": 0, "turn": 2, "prompt": 150, "out": 3,
                                                                 "think": 2, **second}]


@pytest.mark.parametrize("scenario,message", [
    ({**BASE, "prefix": [{"tokens": 64, "requests": [0, 1]}], "requests": [{"prompt": 100, "out": 3}]},
     "'prefix': unknown scenario key, not modelled"),
    ({**BASE, "requests": [{"prompt": 100, "out": 3}, {"prompt": 100, "out": 3, "prefix": 0}]},
     "requests[1].prefix: unknown request key, not modelled"),
    ({**BASE, "max_seqs": 65, "requests": [{"prompt": 100, "out": 3}]},
     "'max_seqs' (65) is above 'budget' (64): vLLM refuses"),
    ({**BASE, "requests": [{"prompt": 100, "out": 3}, {"prompt": 10, "out": 3, "arrive": 2.5}]},
     "requests[1].arrive: must be a non-negative integer"),
    ({**BASE, "requests": _turns(think=0.5)}, "requests[1].think: must be a non-negative integer"),
    ({**BASE, "requests": _turns(prompt=102)},
     "requests[1].prompt: 102 is shorter than its history, the previous turn's prompt and output (requests[0]: 103)"),
    ({**BASE, "requests": _turns(arrive=9)}, "requests[1].arrive: a later turn with its own 'arrive'"),
    ({**BASE, "requests": _turns(turn=1)}, "requests[1].turn: session 0 has turn 1 twice (first at requests[0])"),
    ({**BASE, "serve": "remaining", "requests": [{"prompt": 100, "out": 3}]},
     "'serve': serve order 'remaining' is not supported by the bridge"),
    ({**BASE, "serve": "decoding ? 1.2.3 : 0", "requests": [{"prompt": 100, "out": 3}]},
     "'serve': serve order 'decoding ? 1.2.3 : 0' is not supported by the bridge"),
    ({**BASE, "budget": 64.5, "requests": [{"prompt": 100, "out": 3}]}, "'budget' must be a positive integer"),
    ({**BASE, "chunk": -1, "requests": [{"prompt": 100, "out": 3}]}, "'chunk' must be a non-negative integer"),
])
@pytest.mark.parametrize("command", ["scenario", "real"])
def test_what_neither_side_models_is_refused(tmp_path, serq_in_process, scenario, message, command):
    """`serq vllm scenario` and `serq vllm real` refuse, naming the JSON path, what they do not both
    model, before running anything (so `real` says so with or without vLLM installed)."""
    p = tmp_path / "unmodelled.json"
    p.write_text(json.dumps(scenario))
    run = serq if "prefix" in scenario else serq_in_process  # (the first case of each command as a child process)
    r = run("vllm", command, str(p))
    assert r.returncode == 1, r.stdout
    # (located at the value, or the key, at fault: the file's line and column, the line quoted with a caret)
    assert r.stderr.count("error:") == 1 and r.stderr.startswith(f"{p}:1:") and "Traceback" not in r.stderr
    assert message in r.stderr, r.stderr


def test_the_bridge_refuses_on_its_own(tmp_path):
    """The bridge run as a script in another interpreter (it imports nothing of serQ) refuses too."""
    p = tmp_path / "s.json"
    p.write_text(json.dumps({**BASE, "requests": [{"prompt": 100, "out": 3, "prefix": 1}]}))
    from serq_vllm import real

    r = subprocess.run([sys.executable, real.__file__, str(p)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "requests[0].prefix: unknown request key" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_missing_scenario():
    r = serq("vllm", "scenario", "vllm/nope")
    assert r.returncode == 1 and "no such scenario" in r.stderr


@pytest.mark.parametrize("name", ["admission", "newest_first", "newest_first_preempt", "prefill_first"])
def test_target_of_a_scenario_program(tmp_path, serq_in_process, name):
    """The engine configuration the scenario's program implies is the oracle's target file."""
    sc = json.loads((ORACLE / "vllm-serve" / f"{name}.json").read_text())
    want = json.loads((ORACLE / "vllm-serve" / f"{name}.target.json").read_text())
    from serq_vllm.scenarios import PROGRAM

    args = ["vllm", "target", str(PROGRAM), "--set", f"B={sc['budget']}", "--set", f"max_seqs={sc['max_seqs']}",
            "--set", f"bs={sc['block_size']}", "--set", f"blocks={sc['num_blocks'] - 1}",
            "--set", f"C={sc.get('chunk', 0)}", "--set", f"caching={1 if sc.get('prefix_caching') else 0}",
            "--def", f"serve_key={sc['serve']}"]
    r = serq_in_process(*args)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == want


def test_real_without_vllm_says_how_to_install():
    try:
        import vllm  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("vLLM is installed here")
    r = serq("vllm", "real", str(ORACLE / "vllm" / "preempt.json"))
    assert r.returncode == 1
    assert "docs/vllm-oracle.md" in r.stderr and "Traceback" not in r.stderr


ENGINE = """use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 100 * 16; block 16; evict lru; preempt lifo; }
stage engine : step {
  budget 64;
  cost 1;
  chunk long_prefill(reqs, 32);
  memory kv;
};
workload { arrive poisson(1); hidden o; turn { set o = 3; } }
session { turn; set t0 = now; vllm_request_at(reqs, kv, engine, 10, o, t0, inf, 32); }
"""


def _target(tmp_path, text, run=serq):
    p = tmp_path / "engine.sq"
    p.write_text(text)
    return p, run("vllm", "target", str(p))


def test_a_plain_fcfs_engine_is_vllms_own_scheduler(tmp_path):
    """No serve clause: vLLM's own scheduler (no scheduler_cls); the lone-request threshold is 32;
    prefix caching, since the request looks its prefix up (match inf)."""
    _, r = _target(tmp_path, ENGINE)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["config"] == {"block_size": 16, "enable_prefix_caching": True, "long_prefill_token_threshold": 32,
                             "max_num_batched_tokens": 64, "max_num_seqs": 8, "num_gpu_blocks": 101}
    assert got["serve_by"] == [{"Ctx": "Admission"}]
    # a serve order with keys needs serQ's scheduler class, which sorts the running list by them
    _, r = _target(tmp_path, ENGINE.replace("memory kv;", "serve by (-admission); memory kv;"))
    assert json.loads(r.stdout)["config"]["scheduler_cls"] == "serq_vllm.SerqScheduler"


@pytest.mark.parametrize("old,new,line,col,message", [
    ("memory kv;", "serve exclusive prefill; memory kv;", 4, 1, "serves exclusive prefill"),
    ("memory kv;", "serve by (decoding, remaining); memory kv;", 8, 23, "serves by `remaining`"),
    ("preempt lifo;", "preempt lifo; reserve held;", 3, 1, "pool `kv` says `reserve held`"),
    ("admit via engine;", "admit via engine; reserve held;", 2, 1, "pool `reqs` says `reserve held`"),
    ("chunk long_prefill(reqs, 32);", "chunk 32;", 7, 9, "a constant chunk cap (32) caps a request alone too"),
    ("preempt lifo;", "preempt none;", 3, 1, "memory pool `kv` does not `preempt lifo`"),
    ("preempt lifo;", "preempt by (admission);", 3, 1, "memory pool `kv` does not `preempt lifo`"),
    ("evict lru;", "evict by (age);", 3, 1, "memory pool `kv` does not `evict lru`"),
])
def test_target_refuses_what_vllm_cannot_run_at_the_construct(tmp_path, serq_in_process, old, new, line, col,
                                                              message):
    text = ENGINE.replace(old, new)
    assert text != ENGINE
    p, r = _target(tmp_path, text, serq_in_process)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    head, src, caret = r.stderr.splitlines()[:3]
    assert head.startswith(f"{p}:{line}:{col}: error: ") and message in head, r.stderr
    assert src == "  " + text.splitlines()[line - 1] and caret == "  " + " " * (col - 1) + "^", r.stderr
