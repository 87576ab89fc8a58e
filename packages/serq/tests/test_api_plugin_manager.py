"""serq.plugins.api_plugin_manager: the plugin manager a library call uses. ``pm=3`` was an AttributeError
(``'int' object has no attribute 'hook'``) from deep inside serq_frontend.compile, serq_sim.run,
serq_report.render, serq_sweep.sweep and serq_vllm.run_scenario; each now says what pm must be (the
packages' own tests call each of them)."""

from __future__ import annotations

import pytest
from serq.plugins import api_plugin_manager, get_plugin_manager, installed_plugin_manager

pytestmark = pytest.mark.timeout(60)


def test_none_is_the_installed_plugins_and_a_manager_is_itself():
    assert api_plugin_manager(None) is installed_plugin_manager()
    pm = get_plugin_manager(autoload=False)
    assert api_plugin_manager(pm) is pm


@pytest.mark.parametrize("pm, shown", [(3, "int"), ("serq", "str"), ([], "list"), (object(), "object")])
def test_what_is_no_plugin_manager_is_a_type_error(pm, shown):
    with pytest.raises(TypeError) as e:
        api_plugin_manager(pm)
    assert str(e.value) == ("pm must be a plugin manager (serq.plugins.get_plugin_manager(), or None for the "
                            f"installed plugins), not {shown}")
