"""`serq vllm target` of an engine whose waiting requests are served shortest prompt first (`queue by (prompt)` on the
pool that says `admit via engine`) or by priority class (`queue by (prio, t0)`) printed vLLM's plain configuration,
first come first served, without a word: every key of session attributes was taken as the order the requests were
sent in. The first key that orders must now be a send time (an attribute the program writes only as `set t0 =
now;`) or one that falls with `waited`; anything else is refused at the key. The keys after a send time order only
the requests sent at one instant (the scenario program's `queue by (t0, idx)`).

The orders the target takes are the ones the simulator serves first come first served: a batch of four requests
with one slot is served in the order sent under `queue fifo`, `queue by (t0)` and `queue by (-waited)` (by hand:
each takes 3 steps, prefill then two decodes, so admissions at 0, 3, 6, 9 in serial order), and shortest prompt
first under `queue by (prompt)` (prompts 10, 4, 6, 2: serials 3, 1, 2, 0).

A serve key of a session attribute (`serve by (prompt)`) printed `serve_by: [{"Attr": 4}]`, the attribute's slot in
the program, beside `scheduler_cls: serq_vllm.SerqScheduler`, which sorts the running requests by their admission
and whether they decode only: it is refused at the attribute, as `remaining` is."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import serq_frontend
from serq import UserError
from serq_vllm.target import target

pytestmark = pytest.mark.timeout(120)


PROGRAM = """use "vllm.sq";
let pol = 0;
pool reqs { cap 1; admit via engine; QUEUE }
pool kv { cap 100; block 1; evict lru; preempt lifo; }
stage engine : step { budget 100; cost 1; memory kv; }

workload {
  arrive batch(4);
  hidden o;
}

session {
  set prompt = serial == 0 ? 10 : serial == 1 ? 4 : serial == 2 ? 6 : 2;
  set prio = serial == 3 ? 0 : 1;
  set o = 3;
  SENT
  vllm_request(reqs, kv, engine, prompt, o, t0);
}

run { horizon inf; }
"""


def program(tmp_path: Path, queue: str, sent: str = "set t0 = now;") -> Path:
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM.replace("QUEUE", queue).replace("SENT", sent))
    return p


def target_of(path: Path, sets: dict | None = None) -> dict:
    return target(serq_frontend.compile(path=str(path), sets=sets or {}), str(path))


@pytest.fixture
def admitted(serq_in_process):
    """``admitted(path, tmp_path)``: each request's session and admission time, in the order admitted, from the
    records of ``serq run`` (in this process: what is checked is the records)."""

    def call(path: Path, tmp_path: Path) -> list[tuple[int, float]]:
        out = tmp_path / "r.csv"
        r = serq_in_process("run", str(path), "--no-progress", "--records", str(out))
        assert r.returncode == 0, r.stderr
        with out.open() as f:
            rows = sorted(csv.DictReader(f), key=lambda row: float(row["admitted"]))
        return [(int(row["session"]), float(row["admitted"])) for row in rows]

    return call


@pytest.mark.parametrize("queue", ["queue fifo;", "queue by (t0);", "queue by (-waited);", "queue by (0, t0);",
                                   "queue by (pol == 1 ? prompt : t0);"])
def test_orders_in_the_order_sent_give_the_fifo_target_and_serve_in_that_order(tmp_path, queue, admitted):
    path = program(tmp_path, queue)
    plain = target_of(_fifo(tmp_path))
    assert target_of(path) == plain
    assert "scheduler_cls" not in plain["config"] and plain["config"]["max_num_seqs"] == 1
    assert admitted(path, tmp_path) == [(0, 0.0), (1, 3.0), (2, 6.0), (3, 9.0)]


def test_the_keys_after_a_send_time_order_the_requests_sent_at_one_instant(tmp_path, admitted):
    # taken as the order of submission, as the scenario programs' (t0, idx) is: the target cannot tell idx from
    # prompt, and the four requests sent at 0 are served shortest first (docs/vllm.md says so)
    path = program(tmp_path, "queue by (t0, prompt);")
    assert target_of(path) == target_of(_fifo(tmp_path))
    assert admitted(path, tmp_path) == [(3, 0.0), (1, 3.0), (2, 6.0), (0, 9.0)]


def _fifo(tmp_path: Path) -> Path:
    d = tmp_path / "fifo"
    d.mkdir(exist_ok=True)
    return program(d, "")


@pytest.mark.parametrize("queue, key, sets", [("queue by (prompt);", "prompt", {}),
                                              ("queue by (prio, t0);", "prio", {}),
                                              ("queue by (0, -t0);", "-t0", {}),
                                              ("queue by (pol == 1 ? prompt : t0);", "pol == 1", {"pol": 1})])
def test_an_order_by_anything_else_is_refused_at_its_key(tmp_path, queue, key, sets):
    path = program(tmp_path, queue)
    with pytest.raises(UserError) as e:
        target_of(path, sets)
    lines = str(e.value).splitlines()
    source = path.read_text().splitlines()
    col = source[2].index(key) + 1
    assert lines[0] == (f"{path}:3:{col}: error: pool `reqs` orders the requests waiting for `engine` by a key that "
                        "is not the order they were sent in (a shortest prompt or a priority first), where vLLM's "
                        "waiting queue is first come first served (a preempted request at its head; its `priority` "
                        "scheduling policy, which orders by the priority each request is sent with, is not one a "
                        "target writes); an attribute set to `now` when the request is sent (`set t0 = now;`, "
                        "`queue by (t0)`) or `-waited` orders as vLLM does"), lines
    assert lines[1:] == ["  " + source[2], "  " + " " * (col - 1) + "^"]


def test_shortest_prompt_first_is_served_so_which_is_why_it_is_refused(tmp_path, admitted):
    # prompts 10, 4, 6, 2 of serials 0..3: the shortest first, 3 steps each
    assert admitted(program(tmp_path, "queue by (prompt);"), tmp_path) == [(3, 0.0), (1, 3.0), (2, 6.0), (0, 9.0)]


def test_an_attribute_written_otherwise_than_now_is_no_send_time(tmp_path):
    # t0 is the send time less the prompt: the longest prompt first among requests sent together
    path = program(tmp_path, "queue by (t0);", "set t0 = now;\n  set t0 = t0 - prompt;")
    with pytest.raises(UserError, match="by a key that is not the order they were sent in"):
        target_of(path)
    # ... and a choose's index is none either
    path = program(tmp_path, "queue by (j);", "set t0 = now;\n  choose j in 2 by (j);")
    with pytest.raises(UserError, match="by a key that is not the order they were sent in"):
        target_of(path)


@pytest.mark.parametrize("serve, key, name", [("serve by (prompt);", "prompt", "prompt"),
                                              ("serve by (decoding, -prio);", "prio", "prio")])
def test_a_serve_key_of_a_session_attribute_is_refused_at_it(tmp_path, serve, key, name):
    # it printed serve_by [{"Attr": 4}], the attribute's slot, beside serq_vllm.SerqScheduler, which sorts the
    # running requests by their admission and whether they decode only (serq_vllm.real.serve_form)
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM.replace("QUEUE", "").replace("SENT", "set t0 = now;")
                 .replace("memory kv; }", f"{serve} memory kv; }}"))
    with pytest.raises(UserError) as e:
        target_of(p)
    lines = str(e.value).splitlines()
    source = p.read_text().splitlines()
    col = source[4].index(key, source[4].index("serve")) + 1
    assert lines[0] == (f"{p}:5:{col}: error: step stage `engine` serves by `{name}`, an attribute of the program's "
                        "sessions, which serq_vllm.SerqScheduler does not read: it sorts vLLM's running requests by "
                        "their admission and whether they decode (`admission`, `decoding`)"), lines
    assert lines[1:] == ["  " + source[4], "  " + " " * (col - 1) + "^"]
    # the keys it reads are a target
    p.write_text(PROGRAM.replace("QUEUE", "").replace("SENT", "set t0 = now;")
                 .replace("memory kv; }", "serve by (decoding ? 1 : 0, admission); memory kv; }"))
    assert target_of(p)["config"]["scheduler_cls"] == "serq_vllm.SerqScheduler"
