"""`serq vllm target` of an engine whose waiting requests are ordered by `queue by` keys (SLO-aware admission:
`queue by (waited > slo ? 1 : 0, -waited)` on the pool that says `admit via engine`) printed vLLM's
configuration without a word, as if the program were vLLM's scheduler, whose waiting queue is first come first
served (a preempted request at its head; the bridge's SerqScheduler keeps that queue too). A key reading `waited`
is now refused at it, as every other order vLLM's scheduler does not have is, but `-waited` (the longest wait
first, ties in the order they joined: first come first served); keys of attributes are taken as the arrival
order they are in the scenario programs (`queue by (t0, idx)`, t0 the send time), which a target cannot tell
from another order of them."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq import UserError
from serq_vllm.target import target

ROOT = Path(__file__).resolve().parents[3]
BURSTS = ROOT / "examples" / "single-turn" / "vllm_bursts.sq"
FIFO = "pool reqs { cap max_seqs; admit via engine; }"
pytestmark = pytest.mark.timeout(60)


def target_of(tmp_path: Path, queue: str, sets: dict | None = None) -> dict:
    text = BURSTS.read_text()
    assert FIFO in text
    p = tmp_path / "p.sq"
    p.write_text("let slo = 2;\nlet qmode = 1;\n" + text.replace(FIFO, FIFO.replace("engine; }", f"engine; {queue} }}")))
    return target(serq_frontend.compile(path=str(p), sets=sets or {}), str(p))


@pytest.mark.parametrize("queue, key", [("queue by (waited > slo ? 1 : 0, -waited);", "waited > slo"),
                                        ("queue by (waited);", "waited"),
                                        ("queue by (prompt, -waited, min(waited, slo));", "min(waited, slo)")])
def test_a_waiting_order_by_the_wait_is_refused_at_its_key(tmp_path, queue, key):
    with pytest.raises(UserError) as e:
        target_of(tmp_path, queue)
    lines = str(e.value).splitlines()
    source = (tmp_path / "p.sq").read_text().splitlines()
    col = source[38].index(key) + 1
    assert lines[0] == (f"{tmp_path / 'p.sq'}:39:{col}: error: pool `reqs` orders the requests waiting for `engine` by "
                        "how long they have waited (a `queue by` key reading `waited`), where vLLM's waiting queue is "
                        "first come first served (a preempted request at its head), whatever a request has waited; "
                        "`-waited` or `slo - waited` (a number less `waited`) alone orders as vLLM does"), lines
    assert lines[1:] == ["  " + source[38], "  " + " " * (col - 1) + "^"]


@pytest.mark.parametrize("queue, sets", [("queue fifo;", {}), ("queue by (-waited);", {}), ("queue by (0, 1);", {}),
                                         ("queue by (t0);", {}), ("queue by (slo - waited);", {}),
                                         ("queue by (qmode == 0 ? 0 : waited, -waited);", {"qmode": 0})])
def test_keys_that_order_first_come_first_served_give_the_fifo_target(tmp_path, queue, sets):
    plain = target(serq_frontend.compile(path=str(BURSTS)), str(BURSTS))
    assert target_of(tmp_path, queue, sets) == plain
    assert plain["config"]["max_num_seqs"] == 64 and "scheduler_cls" not in plain["config"]


def test_the_switch_of_a_let_that_orders_is_refused(tmp_path):
    # at 1 the switch takes `waited`: refused at the key as written (the conditional), with the words above
    with pytest.raises(UserError) as e:
        target_of(tmp_path, "queue by (qmode == 0 ? 0 : waited, -waited);", {"qmode": 1})
    lines = str(e.value).splitlines()
    source = (tmp_path / "p.sq").read_text().splitlines()
    col = source[38].index("qmode == 0") + 1
    assert lines[0].startswith(f"{tmp_path / 'p.sq'}:39:{col}: error: pool `reqs` orders the requests waiting for "
                               "`engine` by how long they have waited (a `queue by` key reading `waited`)"), lines
    assert lines[1:] == ["  " + source[38], "  " + " " * (col - 1) + "^"]
