"""docs/simulator.md's table of the rules of §3: every row names exactly one function, and it exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "simulator.md"


def rows() -> list[tuple[str, list[str]]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## The rules of §3, one function each", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("§3", "---"):
            out.append((cells[1], re.findall(r"`([\w.]+:[\w.]+)`", cells[2])))
    return out


def resolve(ref: str):
    module, name = ref.split(":")
    obj = importlib.import_module(f"serq_sim.{module}")
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def test_every_rule_names_one_function_that_exists():
    table = rows()
    assert len(table) >= 40
    for rule, refs in table:
        assert len(refs) == 1, rule
        assert callable(resolve(refs[0])), refs[0]


def test_the_check_can_fail():
    import pytest

    with pytest.raises(AttributeError):
        resolve("pools.admission:no_such_rule")
