"""Known defects, round 30 (serq-vllm).

`serq vllm target` took any attribute the program writes only as `set X = now` as the request's send time, and so
an order by it as vLLM's first come first served. vLLM orders its waiting queue by arrival, the instant a request
joins it (`add_request`); in serQ that is the instant the request's hold joins its first pool's queue. A `set t1 =
now` before a tool call is an earlier instant: the program below orders by it and serves session 0, which arrives
last, before session 3. Such a key is refused at its place, naming the hold and what came between. `queue by (now -
waited)`, the instant the request joined the queue, is vLLM's order and was refused as a key reading `waited`.

The program, by hand: four sessions at 0, one request slot, each request 3 steps of cost 1 (its prefill, then two
decodes). Session 0 sets t1 = 0 and joins the queue at 5; sessions 1, 2 and 3 set t1 = 1 and join at 1, in serial
order. First come first served admits 1 at 1, 2 at 4, 3 at 7 (it came at 1) and 0 at 10; by t1, 0 (t1 = 0) is
admitted at 7, before 3, at 10.

`serq vllm scenario`'s `config`, what it says it ran, left out `prefix_caching` and the serving order (`serve`),
which change the schedule, and gave `chunk: null` where the oracle's answers give 0; the bridge left out `serve`
and a `prefix_caching` that was off. Both now write every setting (`serq_vllm.real.config_out`).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq import UserError
from serq_vllm.target import target

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).with_name("serq"))

PROGRAM = """use "vllm.sq";
pool reqs { cap 1; admit via engine; QUEUE }
pool kv { cap 100; block 1; evict lru; preempt lifo; }
stage engine : step { budget 100; cost 1; memory kv; }
stage tool : delay;

workload {
  arrive batch(4);
  hidden o;
}

session {
  set prompt = 4;
  set o = 3;
  BODY
}

run { horizon inf; }
"""

LATE = """tool (serial == 0 ? 0 : 1);
  set t1 = now;
  tool (serial == 0 ? 5 : 0);
  vllm_request(reqs, kv, engine, prompt, o, t1);"""


def program(tmp_path: Path, queue: str, body: str = LATE, name: str = "p.sq") -> Path:
    p = tmp_path / name
    p.write_text(PROGRAM.replace("QUEUE", queue).replace("BODY", body))
    return p


def target_of(path: Path) -> dict:
    return target(serq_frontend.compile(path=str(path)), str(path))


def admitted(path: Path, tmp_path: Path) -> list[tuple[int, float]]:
    out = tmp_path / "r.csv"
    r = subprocess.run([SERQ, "run", str(path), "--no-progress", "--records", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    with out.open() as f:
        rows = sorted(csv.DictReader(f), key=lambda row: float(row["admitted"]))
    return [(int(row["session"]), float(row["admitted"])) for row in rows]


FCFS = [(1, 1.0), (2, 4.0), (3, 7.0), (0, 10.0)]


def test_a_send_time_set_before_a_tool_call_is_not_the_arrival_and_is_refused_at_the_key(tmp_path):
    path = program(tmp_path, "queue by (t1);")
    # what it orders by is not first come first served (the module's docstring, by hand)
    assert admitted(path, tmp_path) == [(1, 1.0), (2, 4.0), (0, 7.0), (3, 10.0)]
    with pytest.raises(UserError) as e:
        target_of(path)
    lines = str(e.value).splitlines()
    source = path.read_text().splitlines()
    col = source[1].index("t1") + 1
    assert lines[0] == (
        f"{path}:2:{col}: error: pool `reqs` orders the requests waiting for `engine` by `t1`, which is not the "
        f"instant a request arrives there: the request that joins its queue at {path}:18:3 (vllm_request) does so "
        f"after a visit of stage `tool` at {path}:17:3, which comes later than `set t1 = now` on some path; vLLM's "
        "first come first served orders by arrival, the instant a request joins the waiting queue: set `t1` to "
        "`now` with nothing that takes time between it and the request's hold, or order by `now - waited` or "
        "`-waited`"), lines
    assert lines[1:] == ["  " + source[1], "  " + " " * (col - 1) + "^"]


def test_a_send_time_of_an_earlier_turn_or_of_one_path_only_is_refused(tmp_path):
    # set once, before the loop: the second turn's request is ordered by the first turn's time
    loop = """set t0 = now;
  loop {
    vllm_request(reqs, kv, engine, prompt, o, t0);
    tool (1);
    branch (turn_no < 1) { turn; } else { end; }
  }"""
    with pytest.raises(UserError, match=r"after a visit of stage `tool` at .*p\.sq:18:5, which comes later"):
        target_of(program(tmp_path, "queue by (t0);", loop))
    # set on one arm of a branch only
    arm = """branch (serial == 0) { set t0 = now; }
  vllm_request(reqs, kv, engine, prompt, o, t0);"""
    with pytest.raises(UserError, match="with `t0` not set to `now` before it on some path"):
        target_of(program(tmp_path, "queue by (t0);", arm))


def test_a_send_time_set_just_before_the_request_is_its_arrival(tmp_path):
    # an observe, a record or a turn between them takes no time; the set inside the loop is fresh every turn
    body = """loop {
    set t0 = now;
    observe x = 1;
    vllm_request(reqs, kv, engine, prompt, o, t0);
    tool (1);
    branch (turn_no < 1) { turn; } else { end; }
  }"""
    fifo = target_of(program(tmp_path, "", name="fifo.sq"))
    assert target_of(program(tmp_path, "queue by (t0);", body)) == fifo


def test_nested_loops_are_walked_once_each(tmp_path):
    """Each pass of a loop was walked again at every pass of the loop around it: 30 nested loops took 2**30
    walks (the module's timeout is the bound). Each level sets `t1` just before its request; the innermost
    calls a tool between them, which is found and refused, and without it the order is first come first
    served."""
    depth = 30
    level = "loop {\nset t1 = now;\nvllm_request(reqs, kv, engine, prompt, o, t1);\n"
    inner = "end;\n" + "}\n" * depth
    # the body begins at line 15: the tool of the innermost level at 15 + 3 * depth, its request on the next
    tool, request = 15 + 3 * depth, 16 + 3 * depth
    with pytest.raises(UserError, match=rf"joins its queue at .*p\.sq:{request}:1 \(vllm_request\) does so after a "
                       rf"visit of stage `tool` at .*p\.sq:{tool}:1, which comes later than `set t1 = now`"):
        target_of(program(tmp_path, "queue by (t1);", level * depth + "tool (1);\n"
                          "vllm_request(reqs, kv, engine, prompt, o, t1);\n" + inner))
    fifo = target_of(program(tmp_path, "", name="fifo.sq"))
    assert target_of(program(tmp_path, "queue by (t1);", level * depth + inner, name="q.sq")) == fifo


def test_now_less_waited_is_the_arrival_order_and_is_vllms(tmp_path):
    path = program(tmp_path, "queue by (now - waited);")
    assert target_of(path) == target_of(program(tmp_path, "", name="fifo.sq"))
    assert "scheduler_cls" not in target_of(path)["config"]
    # served first come first served, as by hand (the module's docstring), and as `queue fifo`
    assert admitted(path, tmp_path) == FCFS
    assert admitted(program(tmp_path, "queue fifo;", name="f.sq"), tmp_path) == FCFS


def _scenario(name: str) -> dict:
    r = subprocess.run([SERQ, "vllm", "scenario", name], capture_output=True, text=True, timeout=100)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_scenario_answer_says_every_setting_it_ran_with():
    # generated/fuzz_bs32_chunk1.json: prefix caching on, served by `decoding ? -2 : 0.5` (its file's first line)
    assert _scenario("generated/fuzz_bs32_chunk1")["config"] == {
        "budget": 14, "max_seqs": 14, "chunk": 1, "block_size": 32, "num_blocks": 11, "prefix_caching": True,
        "serve": "decoding ? -2 : 0.5"}
    # vllm/preempt.json gives no chunk, no prefix_caching and no serve: the defaults it ran with
    assert _scenario("vllm/preempt")["config"] == {
        "budget": 100, "max_seqs": 16, "chunk": 0, "block_size": 16, "num_blocks": 11, "prefix_caching": False,
        "serve": "admission"}


def test_the_config_agrees_with_every_oracle_answer_on_what_the_answer_gives():
    from serq_vllm.real import config_out
    from serq_vllm.scenarios import answer_path, list_scenarios, read_scenario

    shipped = list_scenarios()
    assert len(shipped) >= 30
    for s in shipped:
        expected = json.loads(answer_path(s.path).read_text())["config"]
        got = config_out(read_scenario(s.path))
        assert {k: got[k] for k in expected} == expected, s.name
        # the oracle's older convention: prefix_caching only when it is on
        assert got["prefix_caching"] == expected.get("prefix_caching", False), s.name
