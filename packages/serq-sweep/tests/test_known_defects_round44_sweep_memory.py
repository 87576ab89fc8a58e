"""A sweep's points hold their IR compressed (serq_sweep.worker.packed): a plan of examples/multi-turn/vllm.sq
held its 64 KB of IR JSON per point until the sweep ended (200 points: 13 MB more than 10 points, before the
first run); what a run decodes is the same JSON."""

import sys
from pathlib import Path

import serq_ir
from serq_sweep import core, worker

ROOT = Path(__file__).resolve().parents[3]
VLLM = ROOT / "examples" / "multi-turn" / "vllm.sq"

_PLAN = (
    "import sys\n"
    "from serq_sweep import core\n"
    "n = int(sys.argv[2])\n"
    "core.plan([sys.argv[1]], sets={'Lambda': [0.1 + 0.001 * i for i in range(n)]}, horizon=10, warmup=1)\n"
)


def test_plan_memory_per_point_is_small(peak_memory):
    _, few = peak_memory([sys.executable, "-c", _PLAN, VLLM, 10], timeout=300)
    code, many = peak_memory([sys.executable, "-c", _PLAN, VLLM, 210], timeout=300)
    assert code == 0
    # 200 points more: 13 MB more when each held its IR's JSON (about 64 KB); packed, under 1 MB. Bound: 20 KB a point
    assert many - few < 200 * 20_000, (few, many)


def test_packed_ir_is_the_compiled_programs():
    plan = core.plan([str(VLLM)], sets={"Lambda": [0.2, 0.3]}, horizon=10, warmup=1)
    for p, lam in zip(plan.points, (0.2, 0.3)):
        program, _ = core.compile_point(plan.pm, str(VLLM), {"Lambda": lam}, {}, {"horizon": 10, "warmup": 1,
                                                                                   "arrivals": None})
        json = serq_ir.encode(program)
        assert len(p.ir) * 5 < len(json)  # held compressed
        assert worker.unpacked(p.ir) == json
        assert worker.packed(p.ir) == p.ir  # (packed once)
    # the task sends the packed bytes, and a run decodes them to the program
    task = plan.tasks()[0]
    assert task[1] == plan.points[0].ir
    assert serq_ir.encode(worker._program(task[1], task[2], task[3])) == worker.unpacked(plan.points[0].ir)
