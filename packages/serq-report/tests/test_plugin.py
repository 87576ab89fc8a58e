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
    assert formats.names() == ["text", "json", "csv"]
    assert formats["text"] is text_reporter and formats["json"] is json_reporter
    assert formats.provider("text").startswith("report (serq-report ")
    assert serq_report.formats(pm).names() == ["text", "json", "csv"]


def test_the_hook_spec_is_added(only_report):
    pm = serq.get_plugin_manager()
    spec = pm.hook.serq_report_register_formats.spec
    assert spec is not None and spec.argnames == ("register",)


def test_a_third_party_format(only_report, report):
    pm = serq.get_plugin_manager(plugins=[Shouting()])
    formats = serq_report.formats(pm)
    assert formats.names() == ["text", "json", "csv", "shout"]
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
    with pytest.raises(UserError, match=r"unknown report format 'xml' \(known: csv, json, text\)"):
        serq_report.render(report, "xml")
    pm = serq.get_plugin_manager(plugins=[Shouting()])
    with pytest.raises(UserError, match=r"known: csv, json, shout, text"):
        serq_report.render(report, "xml", pm=pm)


def test_without_autoload_the_module_registers_the_same(report):
    from serq_report import plugin

    pm = serq.get_plugin_manager(autoload=False, plugins=[plugin])
    assert serq_report.formats(pm).names() == ["text", "json", "csv"]


def test_the_text_and_json_reporters_import_no_numpy():
    import subprocess
    import sys

    code = """if True:
        import sys
        import serq_report
        from serq_ir.report import GaugeStats, ObserveStats, Result
        r = Result(horizon=10.0, end=10.0, warmup=0.0, seed=1, events=3, arrivals=1, ended=1, turns=0,
                   mean_live=0.5, interrupted=False,
                   observes={"x": ObserveStats(count=1, mean=2.0, ci=float("nan"), cv2=float("nan"),
                                               p99=float("nan"))},
                   stages=[], pools=[], gauges={"g": GaugeStats(mean=1.0, ci=0.0, min=1.0, max=1.0)}, notes=[])
        assert "x" in serq_report.render(r, "text") and '"g"' in serq_report.render(r, "json")
        assert "gauges,g,mean,1.0" in serq_report.render(r, "csv")
        print("numpy" in sys.modules)
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
