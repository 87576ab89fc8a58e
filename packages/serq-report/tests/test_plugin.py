from __future__ import annotations

from importlib.metadata import entry_points

import pytest
import serq
import serq_report
from serq import hookimpl
from serq.errors import PluginError, UserError
from serq.plugins import collect
from serq_report import json_reporter, text_reporter


@pytest.fixture
def only_report(monkeypatch):
    """Entry-point loading with every part but the host and this one blocked, so the test does not
    depend on the other parts."""
    others = [ep.name for ep in entry_points(group="serq") if ep.name not in ("report", "host")]
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", ",".join(others))
    monkeypatch.delenv("SERQ_DISABLE_PLUGIN_AUTOLOAD", raising=False)


class Shouting:
    """A third-party plugin adding a format."""

    @staticmethod
    def reporter(report, out):
        out.write(serq_report.render_text(report).upper())

    @hookimpl
    def serq_report_register_formats(self, register):
        register("shout", self.reporter)


class Usurper:
    @hookimpl
    def serq_report_register_formats(self, register):
        register("text", lambda report, out: out.write("mine\n"))


def test_builtin_formats_through_the_hook(only_report):
    pm = serq.get_plugin_manager()
    formats = collect(pm, "serq_report_register_formats", "report format")
    assert formats.names() == ["text", "json"]
    assert formats["text"] is text_reporter and formats["json"] is json_reporter
    assert formats.provider("text").startswith("report (serq-report ")
    assert serq_report.formats(pm).names() == ["text", "json"]


def test_the_hook_spec_is_added(only_report):
    pm = serq.get_plugin_manager()
    spec = pm.hook.serq_report_register_formats.spec
    assert spec is not None and spec.argnames == ("register",)


def test_a_third_party_format(only_report, report):
    pm = serq.get_plugin_manager(plugins=[Shouting()])
    formats = serq_report.formats(pm)
    assert formats.names() == ["text", "json", "shout"]
    assert serq_report.render(report, "shout", pm=pm) == serq_report.render(report).upper()
    assert serq_report.render(report, "json", pm=pm) == serq_report.render(report, "json")


def test_a_format_registered_twice_names_both_providers(only_report):
    pm = serq.get_plugin_manager()
    pm.register(Usurper(), name="usurper")
    with pytest.raises(PluginError) as info:
        collect(pm, "serq_report_register_formats", "report format")
    message = str(info.value)
    assert "'text' is registered twice" in message
    assert "by report (serq-report " in message and "and by usurper" in message


def test_unknown_format(only_report, report):
    with pytest.raises(UserError, match=r"unknown report format 'xml' \(known: json, text\)"):
        serq_report.render(report, "xml")
    pm = serq.get_plugin_manager(plugins=[Shouting()])
    with pytest.raises(UserError, match=r"known: json, shout, text"):
        serq_report.render(report, "xml", pm=pm)


def test_without_autoload_the_module_registers_the_same(report):
    from serq_report import plugin

    pm = serq.get_plugin_manager(autoload=False, plugins=[plugin])
    assert serq_report.formats(pm).names() == ["text", "json"]
