"""serq_vllm.scenarios.run_scenario and scenario_program given a ``pm`` that is no plugin manager: a
TypeError saying what pm must be (it was an AttributeError, ``'int' object has no attribute 'hook'``;
serq.plugins.api_plugin_manager)."""

from __future__ import annotations

import pytest
from serq_vllm.scenarios import run_scenario, scenario_program

pytestmark = pytest.mark.timeout(60)

SC = {"budget": 8, "max_seqs": 2, "block_size": 4, "num_blocks": 10, "requests": [{"prompt": 4, "out": 2}]}


@pytest.mark.parametrize("call", [run_scenario, scenario_program])
def test_a_pm_that_is_no_plugin_manager(call):
    with pytest.raises(TypeError, match=r"^pm must be a plugin manager .*, not int$"):
        call(SC, pm=3)
    assert call(SC) is not None
