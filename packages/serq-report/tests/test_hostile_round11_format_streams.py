"""What a report format does to the stream it is given (``reporter(report, out)``), read the one way every
caller reads it (``serq.plugins.report_text``: ``serq_report.render`` and ``serq run``): a format that
closes ``out`` when it is done has written its report (serQ's read of the closed stream was a
``ValueError`` traceback), and one that writes a lone surrogate, text UTF-8 cannot encode, is one message
naming it, no output half-written (standard output got the raw byte, ``-o FILE`` a ``UnicodeEncodeError``
traceback) (docs/hooks.md, "When a plugin misbehaves")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_report
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)

REPORT = "the report\nline two\n"


def closing(report, out):
    out.write(REPORT)
    out.close()


def surrogate(report, out):
    out.write("caf\udce9\n")


class Formats:
    @hookimpl
    def serq_report_register_formats(self, register):
        register("closing", closing)
        register("surrogate", surrogate)


OWN = f"{__name__}.Formats"


def test_a_format_that_closes_its_stream_has_written_its_report():
    pm = get_plugin_manager(plugins=[Formats()])
    assert serq_report.render(object(), "closing", pm=pm) == REPORT


def test_a_format_that_writes_a_lone_surrogate_is_named():
    pm = get_plugin_manager(plugins=[Formats()])
    with pytest.raises(PluginError) as e:
        serq_report.render(object(), "surrogate", pm=pm)
    assert str(e.value).splitlines() == [
        f"error: plugin {OWN!r} failed in its report format surrogate: it wrote '\\udce9', a lone surrogate "
        "UTF-8 cannot encode (line 1 of its text): a report is text",
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"]


PLUGIN = '''
from serq import hookimpl


def surrogate(report, out):
    out.write("caf\\udce9\\n")


@hookimpl
def serq_report_register_formats(register):
    register("surrogate", surrogate)
'''


def test_serq_run_of_a_format_that_writes_a_lone_surrogate_leaves_no_output(tmp_path):
    site = tmp_path / "site"
    info = site / "surplug-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: surplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nsurplug = surplug\n")
    (site / "surplug.py").write_text(PLUGIN)
    prog = tmp_path / "p.sq"
    prog.write_text("stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n")
    out = tmp_path / "r.txt"
    serq = Path(sys.executable).parent / "serq"
    r = subprocess.run([str(serq), "run", str(prog), "--no-progress", "--format", "surrogate", "-o", str(out)],
                       capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(site)})
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [
        "error: plugin 'surplug' (from surplug 1.0) failed in its report format surrogate: it wrote '\\udce9', a "
        "lone surrogate UTF-8 cannot encode (line 1 of its text): a report is text",
        "(run without it: SERQ_DISABLED_PLUGINS=surplug, or uninstall surplug)"]
    assert not out.exists()
