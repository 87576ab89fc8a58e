"""A report format's name that differs from another's only in case is refused, naming both plugins: a
plugin's ``JSON`` beside the built-in ``json`` was registered, and ``-o r.json`` took the built-in while
``--format JSON`` took the plugin's. Names of other registries (stage kinds, …) are as before."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest
import serq
import serq_report
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import collect


@pytest.fixture
def only_report(monkeypatch):
    """Every part but the host and serq-report blocked."""
    others = [ep.name for ep in entry_points(group="serq") if ep.name not in ("report", "host")]
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", ",".join(others))
    monkeypatch.delenv("SERQ_DISABLE_PLUGIN_AUTOLOAD", raising=False)


class Loud:
    @hookimpl
    def serq_report_register_formats(self, register):
        register("JSON", lambda report, out: out.write("{}\n"))


class Both:
    @hookimpl
    def serq_report_register_formats(self, register):
        register("yaml", lambda report, out: out.write("a: 1\n"))
        register("YAML", lambda report, out: out.write("a: 1\n"))


class Distinct:
    @hookimpl
    def serq_report_register_formats(self, register):
        register("json5", lambda report, out: out.write("{}\n"))


def test_a_format_differing_from_a_builtin_only_in_case_names_both(only_report):
    pm = serq.get_plugin_manager()
    pm.register(Loud(), name="loud")
    with pytest.raises(PluginError) as info:
        collect(pm, "serq_report_register_formats", "report format")
    message = str(info.value)
    assert message.startswith("error: report format 'JSON' differs from 'json' only in case: 'json' is "
                              "registered by report (serq-report "), message
    assert "and 'JSON' by loud" in message
    assert "differ only in case are one name to the user" in message
    with pytest.raises(PluginError, match="differs from 'json' only in case"):
        serq_report.formats(pm)


def test_one_plugin_registering_both_cases_is_named_alone(only_report):
    pm = serq.get_plugin_manager()
    pm.register(Both(), name="both")
    with pytest.raises(PluginError) as info:
        collect(pm, "serq_report_register_formats", "report format")
    message = str(info.value)
    assert "registers the report formats 'yaml' and 'YAML'" in message and "both" in message


def test_names_differing_otherwise_are_kept(only_report):
    pm = serq.get_plugin_manager()
    pm.register(Distinct(), name="distinct")
    assert collect(pm, "serq_report_register_formats", "report format").names() == ["text", "json", "csv", "json5"]
