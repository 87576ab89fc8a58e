"""An IR file whose trace attributes (`new`, `out`, `think`, `more`, `forced`) are not marked `builtin`: the run
loads them at every turn by their names all the same, but the `evict by` order took an attribute not marked
for one that never changes once the session has started, kept its entries sorted by the keys they had when
cached, and evicted others than the scan of the keys as they are (a silently other report: 1 042 entries evicted
against 1 040, another mean of `cached`). The order now takes the slots a turn loads by their names, as the
loading does: the report is the same bytes as the program's own IR's, on both tiers."""

from __future__ import annotations

import random

import msgspec
import serq_frontend
from tiers import same_json

PROGRAM = """pool kv {{ cap 60; evict {order}; }}
stage s : delay;

workload {{
  arrive renewal(0.5);
  trace "t.csv";
}}

session {{
  turn;
  loop {{
    hold kv (new) {{
      run s (0.1);
    }} cache (new);
    observe got = cached;
    branch (more) {{
      run s (think);
      turn;
    }} else {{
      end;
    }}
  }}
}}

run {{ horizon 200; seed 1; }}
"""


def _trace(path) -> None:
    r = random.Random(3)
    rows = ["session,turn,new,out,think,forced"]
    for s in range(40):
        for t in range(1, r.randint(1, 5) + 1):
            rows.append(f"{s},{t},{r.randint(1, 30)},{r.randint(1, 5)},{r.uniform(0.1, 3):.3f},0")
    path.write_text("\n".join(rows) + "\n")


def _unmarked(program):
    """``program`` with its trace attributes not marked ``builtin``, as a hand-written IR may leave them."""
    trace = {"new", "out", "think", "more", "forced"}
    attrs = [msgspec.structs.replace(a, builtin=False) if a.name in trace else a for a in program.attributes]
    assert attrs != program.attributes
    return msgspec.structs.replace(program, attributes=attrs)


def test_an_eviction_key_of_a_trace_attribute_not_marked_builtin(tmp_path, monkeypatch):
    _trace(tmp_path / "t.csv")
    (tmp_path / "p.sq").write_text(PROGRAM.format(order="by (new)"))
    program = serq_frontend.compile(str(tmp_path / "p.sq"))
    marked = same_json(program, monkeypatch)
    assert marked["pools"][0]["evicted_entries"] > 100  # (the order decides)
    assert same_json(_unmarked(program), monkeypatch) == marked
    (tmp_path / "p.sq").write_text(PROGRAM.format(order="lru"))
    assert same_json(serq_frontend.compile(str(tmp_path / "p.sq")), monkeypatch)["observes"] != marked["observes"]
