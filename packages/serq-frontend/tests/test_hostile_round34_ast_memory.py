"""``serq ast`` writes the AST as it encodes it (commands.write_json), each node made a dict as the encoder
reaches it: it built the whole tree of dicts (to_json) and then the whole text (json.dumps) before writing
any of it, about 12 times the text's size at its peak, 1.3 GB for the 80 MB AST of a 10 MB program (the
source's limit is 16 MiB). The text is the same, byte for byte: ``json.dumps(to_json(items), indent=1)`` and
a line end, which stays the reference here. What the encoding holds is measured with tracemalloc (bytes
allocated, not time)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from serq_frontend import MAX_NESTING, deeper_recursion, parse
from serq_frontend.commands import to_json, write_json

pytestmark = pytest.mark.timeout(120)

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _written(items, size=2**16) -> tuple[str, list[str]]:
    parts: list[str] = []
    with deeper_recursion(8 * MAX_NESTING):
        write_json(items, parts.append, size)
    return "".join(parts), parts


@pytest.mark.parametrize("name", ["single-turn/mg1.sq", "multi-turn/vllm.sq", "multi-turn/routing.sq",
                                  "pd-disaggregation/llmd_nixl_pull.sq"])
@pytest.mark.parametrize("desugar", [False, True])
def test_the_text_is_to_jsons(name, desugar):
    items = parse(EXAMPLES / name, desugar=desugar).items
    text, _ = _written(items)
    assert text == json.dumps(to_json(items), indent=1) + "\n"


def test_a_deep_program_is_written_the_same(tmp_path):
    p = tmp_path / "deep.sq"
    n = 300
    p.write_text("workload { arrive poisson(1); }\nsession { " + "branch (1) { " * n + "observe x = 1;" + "}" * n
                 + " }\nrun { horizon 1; }\n")
    items = parse(p).items
    text, _ = _written(items)
    with deeper_recursion(8 * MAX_NESTING):
        assert text == json.dumps(to_json(items), indent=1) + "\n"
    assert text.count('"node": "SBranch"') == n


def test_the_text_goes_out_in_pieces_and_holds_little(tmp_path):
    p = tmp_path / "long.sq"
    p.write_text("workload { arrive poisson(1); }\nsession {\n"
                 + "".join(f"  observe a = {i} + now * 2;\n" for i in range(3000)) + "  end;\n}\nrun { horizon 1; }\n")
    items = parse(p).items
    written = [0]
    pieces = [0]

    def count(text: str) -> None:
        written[0] += len(text)
        pieces[0] += 1

    tracemalloc.start()
    try:
        write_json(items, count, 2**16)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert written[0] > 1_500_000 and pieces[0] >= written[0] // (2**16 + 2**12)
    # to_json's tree and json.dumps' text held 12 times the text (20 MB here); a piece and the encoder's state
    # hold about a third of it. The bound is the text itself: tracemalloc counts every thread's allocations, and
    # under a test runner's load its messaging thread's took the peak past half the text once (975 KB of 1.7 MB)
    assert peak < written[0], (peak, written[0])
