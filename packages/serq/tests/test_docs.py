"""docs/hooks.md documents every hookspec of every part (a missing one fails here)."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest
from host_helpers import REPO

SPEC_MODULES = ["serq.hookspecs", "serq_frontend.hookspecs", "serq_sim.hookspecs", "serq_report.hookspecs"]


def hookspecs():
    for modname in SPEC_MODULES:
        mod = importlib.import_module(modname)
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if name.startswith("serq_") and hasattr(fn, "serq_spec"):
                yield modname, name, fn


def test_there_are_hookspecs():
    assert len(list(hookspecs())) >= 9


@pytest.mark.parametrize("modname,name,fn", list(hookspecs()), ids=lambda x: x if isinstance(x, str) else "")
def test_hookspec_is_documented_with_its_signature(modname, name, fn):
    doc = (REPO / "docs" / "hooks.md").read_text()
    params = ", ".join(inspect.signature(fn).parameters)
    heading = f"### `{name}({params})`"
    assert heading in doc, f"{heading} missing from docs/hooks.md"
    assert re.search(rf"\({re.escape(modname)}\)", doc.replace("`", "")), f"section for {modname} missing"
