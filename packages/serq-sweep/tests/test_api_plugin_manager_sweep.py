"""serq_sweep.sweep, compare and find given a ``pm`` that is no plugin manager: a TypeError saying what pm
must be, before any run (it was an AttributeError, ``'int' object has no attribute 'hook'``;
serq.plugins.api_plugin_manager)."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_sweep

pytestmark = pytest.mark.timeout(60)

MG1 = str(Path(__file__).resolve().parents[3] / "examples/single-turn/mg1.sq")


@pytest.mark.parametrize("call", [
    lambda: serq_sweep.sweep(MG1, seeds="1", horizon=10, pm=3, workers=0),
    lambda: serq_sweep.compare([MG1, MG1], seeds="1,2", horizon=10, pm=3, workers=0),
])
def test_a_pm_that_is_no_plugin_manager(call):
    with pytest.raises(TypeError, match=r"^pm must be a plugin manager .*, not int$"):
        call()
