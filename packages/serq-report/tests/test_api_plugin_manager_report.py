"""serq_report.render and serq_report.formats given a ``pm`` that is no plugin manager: a TypeError saying
what pm must be (it was an AttributeError from inside the call; serq.plugins.api_plugin_manager)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_report
import serq_sim

pytestmark = pytest.mark.timeout(60)


def test_render_and_formats_refuse_what_is_no_plugin_manager():
    report = serq_sim.run(serq_frontend.compile(
        source="stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"))
    for call in (lambda: serq_report.render(report, "json", pm=3), lambda: serq_report.formats(pm="x")):
        with pytest.raises(TypeError, match=r"^pm must be a plugin manager "):
            call()
    assert serq_report.render(report, "json").startswith("{")
