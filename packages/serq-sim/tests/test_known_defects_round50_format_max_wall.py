"""``serq run --max-wall`` bounds a third party's report format too. The run was bounded and the report's
writing not: a format whose code loops ran until Ctrl-C or SIGTERM stopped it (serq.signals.undeferred), past
any bound. Now the format runs under the same bound, counted from its start (a run stopped at the bound still
has its partial report written by a format that returns): at the bound its code is stopped and the command
says so in the run's words, ``stopped after … s of wall time (--max-wall N) within the code of plugin …``,
with the format named, exit 3 (the status of a run stopped there), nothing written (docs/hooks.md)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from serq import hookimpl
from serq.cli import build_cli
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(120)

PROGRAM = "stage s : delay;\nworkload { arrive batch(2); }\nsession { run s (1); }\nrun { horizon 10; }\n"


class Looping:
    """A report format that writes a line and then loops, keeping whatever Exception it is given."""

    @staticmethod
    def loop(report, out):
        out.write("begun\n")
        while True:
            try:
                while True:
                    pass
            except Exception:  # noqa: BLE001, S110 - the stop is no Exception: it is not kept here
                pass

    @hookimpl
    def serq_report_register_formats(self, register):
        register("loop", self.loop)


class Quick:
    @staticmethod
    def quick(report, out):
        out.write(f"end {report.result.end:g}\n")

    @hookimpl
    def serq_report_register_formats(self, register):
        register("quick", self.quick)


def _run(tmp_path, fmt, plugin, *more):
    (tmp_path / "p.sq").write_text(PROGRAM)
    pm = get_plugin_manager()
    pm.register(plugin, name="fmts")
    return CliRunner().invoke(build_cli(pm), ["run", str(tmp_path / "p.sq"), "--format", fmt, "--no-progress",
                                              "--max-wall", "0.2", *more], obj=pm)


@pytest.mark.parametrize("output", [[], ["-o", "r.txt"]])
def test_a_format_that_loops_is_stopped_at_max_wall(tmp_path, monkeypatch, output):
    monkeypatch.chdir(tmp_path)
    r = _run(tmp_path, "loop", Looping(), *output)
    assert r.exit_code == 3, (r.exit_code, r.output, r.exception)
    assert r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith("serq: stopped after "), line
    assert " s of wall time (--max-wall 0.2) within the code of plugin 'fmts'" in line, line
    assert f"Looping.loop at {__file__}:" in line, line
    assert line.endswith(", writing the report in its format loop: nothing was written"), line
    assert "Traceback" not in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]  # (-o r.txt not written)


def test_a_format_that_returns_is_not_stopped(tmp_path):
    """A format that returns within the bound writes its report, status 0 (the alarm put away: nothing
    fires afterwards)."""
    r = _run(tmp_path, "quick", Quick())
    assert (r.exit_code, r.stdout) == (0, "end 10\n"), (r.output, r.exception)
