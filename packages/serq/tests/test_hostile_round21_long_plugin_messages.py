"""A plugin whose exception says a great deal: its message is one line of a bounded length, the first and
last characters of what the plugin said around a ``…`` (serq.plugins.REASON_WIDTH, serq.errors.clipped),
and then the plugin's line. Before, an exception of 100 000 characters was a line of as many on standard
error above the hint."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_report
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import REASON_WIDTH, get_plugin_manager

pytestmark = pytest.mark.timeout(60)

PROGRAM = "stage s : delay;\nworkload { arrive batch(2); }\nsession { run s (1); }\nrun { horizon 10; }\n"
SAID = "a" * 50_000 + "b" * 50_000


class Talkative:
    @hookimpl
    def serq_report_register_formats(self, register):
        def long(report, out):
            raise ValueError(SAID)

        def short(report, out):
            raise ValueError("a" * 100)

        register("long", long)
        register("short", short)


@pytest.fixture(scope="module")
def report():
    pm = get_plugin_manager()
    return serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)


def failure(report, fmt: str) -> str:
    pm = get_plugin_manager(plugins=[Talkative()])
    with pytest.raises(PluginError) as e:
        serq_report.render(report, fmt, pm=pm)
    return str(e.value)


def test_a_long_exception_is_shown_by_its_ends(report):
    head, _, hint = failure(report, "long").partition("\n")
    reason = "ValueError: " + SAID
    half = REASON_WIDTH // 2
    shown = reason[:half] + "…" + reason[-(half - 1):]
    assert len(shown) == REASON_WIDTH
    before = (f"error: plugin '{Talkative.__module__}.Talkative' failed in Talkative.serq_report_register_formats."
              "<locals>.long during its report format long: ")
    assert head.startswith(before + shown + f" at {__file__}:"), head[:300]
    assert len(head) < len(before) + REASON_WIDTH + len(__file__) + 20
    assert hint.startswith("(run without it: ")


def test_a_short_one_is_shown_whole(report):
    head = failure(report, "short").partition("\n")[0]
    assert ": ValueError: " + "a" * 100 + f" at {__file__}:" in head
