"""examples/single-turn/vllm_fleet.sq: an A100 and an engine twice as fast as one step family (each member's
cost by `member(engine)`), behind a router that counts the A100's load twice. What its header says of seed 1,
checked: the requests each member serves, the mean E2E latency and TPOT, under both routers; and the faster
member's step cost is half the A100's (its iterations of one composition take half as long: the fleet with
the A100's cost on both members is the same fleet with engine[1] slower)."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim

FLEET = Path(__file__).resolve().parents[3] / "examples" / "single-turn" / "vllm_fleet.sq"


@pytest.mark.parametrize(("weigh", "served", "e2el", "tpot"), [(1, (789, 2350), 1.44, 0.0096),
                                                                (0, (1172, 1968), 1.59, 0.0105)])
def test_the_header_figures(weigh, served, e2el, tpot):
    r = serq_sim.run(serq_frontend.compile(path=str(FLEET), sets={"weigh": weigh}))
    assert tuple(s.requests for s in r.result.stages) == served
    req = r.result.requests
    assert round(req.e2el.mean, 2) == e2el and round(req.tpot.mean, 4) == tpot
    assert not r.warnings


def test_the_faster_member_steps_at_half_the_cost(tmp_path):
    # one request alone on each member: the same composition every iteration, so engine[1]'s busy time is
    # half engine[0]'s (the cost halved term by term), and with the cost written alike for both it is not
    src = FLEET.read_text()
    src = src.replace("arrive poisson(rate);", "arrive batch(2);").replace(
        "set prompt = 1 + floor(~exp(E_n));", "set prompt = 300;").replace(
        "set o = 1 + floor(~exp(E_o));", "set o = 40;").replace(
        "run { horizon 600; warmup 60; seed 1; }", "run { horizon inf; }")
    src = src.replace("choose j in 2 by ((weigh == 1 && j == 0 ? 2 : 1) * (holders(reqs[j]) + queued(reqs[j])), j);",
                      "choose j in 2 by (j == serial ? 0 : 1);")
    assert all(w in src for w in ("batch(2)", "prompt = 300", "o = 40", "horizon inf", "j == serial"))
    one, two = tmp_path / "halved.sq", tmp_path / "alike.sq"
    one.write_text(src)
    two.write_text(src.replace("a100_qwen3_8b() / 2", "a100_qwen3_8b()"))
    r = serq_sim.run(serq_frontend.compile(path=str(one)))
    a, h = r.result.stages
    assert a.iterations == h.iterations > 1
    end = r.result.end
    assert h.utilisation * end == pytest.approx(a.utilisation * end / 2, rel=1e-12)
    same = serq_sim.run(serq_frontend.compile(path=str(two)))
    a2, h2 = same.result.stages
    assert a2.utilisation == h2.utilisation == 1.0
