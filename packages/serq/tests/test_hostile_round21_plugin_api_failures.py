"""What a plugin's report format, loader or sugar layer does wrong, through the library API and the command
(docs/hooks.md, "When a plugin misbehaves"; serq.plugins.exit_as_plugin_error and report_text, the one place
serQ calls them).

Before: ``serq_report.render``, ``serq.loading.load_program`` and ``serq_frontend.compile`` raised the
plugin's own exception as it was (``ValueError: x``, ``TypeError: string argument expected, got 'bytes'``),
naming no plugin, where the page says the API raises the PluginError ``serq_sim.run`` raises; a format that
returned its text instead of writing it gave an empty report without a word; and one that print()ed its
report wrote it to standard output, so ``-o FILE`` was left empty and a format failing half-way had printed
half of it."""

from __future__ import annotations

import contextlib
import io

import pytest
import serq_frontend
import serq_report
import serq_sim
from click.testing import CliRunner
from serq import hookimpl
from serq.cli import build_cli
from serq.errors import PluginError, UserError
from serq.loading import load_program
from serq.plugins import get_plugin_manager
from serq_frontend.sugar import SugarLayer

pytestmark = pytest.mark.timeout(60)

PROGRAM = "stage s : delay;\nworkload { arrive batch(2); }\nsession { run s (1); }\nrun { horizon 10; }\n"


class Formats:
    """Report formats, each wrong in its own way."""

    @hookimpl
    def serq_report_register_formats(self, register):
        def raises(report, out):
            out.write("half\n")
            raise ValueError("the format broke")

        def writes_bytes(report, out):
            out.write(b"completions 2\n")

        def returns_text(report, out):
            return "completions 2\n"

        def prints(report, out):
            out.write("completions ")
            print(report.stage("s").completions)

        def prints_then_raises(report, out):
            print("half")
            raise ValueError("the format broke")

        def writes_and_returns_a_count(report, out):
            return out.write("completions 2\n")

        def refuses(report, out):
            raise UserError("the summary needs an observe")

        for f in (raises, writes_bytes, returns_text, prints, prints_then_raises, writes_and_returns_a_count,
                  refuses):
            register(f.__name__.replace("_", "-"), f)


class Broken:
    """A loader and a sugar layer that raise."""

    @hookimpl
    def serq_register_loaders(self, register):
        def load_broken(path, options):
            raise LookupError("no such table")

        register(".broken", load_broken)

    @hookimpl
    def serq_frontend_register_sugar(self, register):
        def rewrite(module, ctx):
            return 1 / 0

        register(SugarLayer("zero", "", {}, rewrite))


HEAD = f"error: plugin '{Formats.__module__}.Formats' "
RUN_WITHOUT = "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"


def manager():
    return get_plugin_manager(plugins=[Formats()])


def broken(e, what: str) -> None:
    head, _, hint = str(e.value).partition("\n")
    assert head.startswith(f"error: plugin '{Broken.__module__}.Broken' " + what), head
    assert hint == RUN_WITHOUT.replace(".Formats", ".Broken"), hint


@pytest.fixture(scope="module")
def report():
    pm = get_plugin_manager()
    return serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)


def one_error(e, what: str) -> None:
    head, _, hint = str(e.value).partition("\n")
    assert head.startswith(HEAD + what), head
    assert hint == RUN_WITHOUT, hint


@pytest.mark.parametrize(("fmt", "what"), [
    ("raises", "failed in Formats.serq_report_register_formats.<locals>.raises during its report format raises: "
               "ValueError: the format broke at "),
    ("writes-bytes", "failed in Formats.serq_report_register_formats.<locals>.writes_bytes during its report "
                     "format writes-bytes: TypeError: string argument expected, got 'bytes' at "),
    ("prints-then-raises", "failed in Formats.serq_report_register_formats.<locals>.prints_then_raises during its "
                           "report format prints-then-raises: ValueError: the format broke at "),
])
def test_a_format_that_raises_is_a_plugin_error_from_render(report, fmt, what):
    shown = io.StringIO()
    with pytest.raises(PluginError) as e, contextlib.redirect_stdout(shown):
        serq_report.render(report, fmt, pm=manager())
    one_error(e, what)
    assert isinstance(e.value.__cause__, (ValueError, TypeError))
    assert str(e.value).partition("\n")[0].rsplit(":", 1)[0].endswith(__file__)  # the plugin's own line
    assert shown.getvalue() == ""  # nothing it printed reached standard output


def test_a_format_that_returns_its_text_instead_of_writing_it(report):
    with pytest.raises(PluginError) as e:
        serq_report.render(report, "returns-text", pm=manager())
    one_error(e, "failed in its report format returns-text: reporter(report, out) returned 'completions 2\\n' and "
                 "wrote nothing: a format writes its report to the stream out it is given")


def test_a_format_that_writes_its_text_and_returns_what_write_gives_is_as_it_was(report):
    assert serq_report.render(report, "writes-and-returns-a-count", pm=manager()) == "completions 2\n"


def test_what_a_format_prints_is_its_report_in_order(report):
    # the program runs two sessions through s: 2 completions, printed after the words written to out
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        assert serq_report.render(report, "prints", pm=manager()) == "completions 2\n"
    assert shown.getvalue() == ""


def test_a_serq_user_error_a_format_raises_is_the_users_message(report):
    with pytest.raises(UserError, match="the summary needs an observe$") as e:
        serq_report.render(report, "refuses", pm=manager())
    assert not isinstance(e.value, PluginError)


def test_serq_run_with_a_format_that_prints_writes_it_to_the_output_file(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "r.txt"
    pm = manager()
    r = CliRunner().invoke(build_cli(pm), ["run", str(tmp_path / "p.sq"), "--format", "prints", "--no-progress",
                                           "-o", str(out)], obj=pm)
    assert r.exit_code == 0, r.output
    assert out.read_text() == "completions 2\n"
    assert r.stdout == ""


def test_serq_run_with_a_format_that_prints_then_raises_prints_nothing(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    pm = manager()
    r = CliRunner().invoke(build_cli(pm), ["run", str(tmp_path / "p.sq"), "--format", "prints-then-raises",
                                           "--no-progress"], obj=pm)
    assert r.exit_code == 1 and r.stdout == ""
    assert isinstance(r.exception, PluginError)
    assert str(r.exception).startswith(HEAD + "failed in Formats.serq_report_register_formats.<locals>."
                                       "prints_then_raises during its report format prints-then-raises: ValueError")


def test_a_loader_that_raises_is_a_plugin_error_from_the_api(tmp_path):
    (tmp_path / "x.broken").write_text("")
    with pytest.raises(PluginError) as e:
        load_program(get_plugin_manager(plugins=[Broken()]), tmp_path / "x.broken")
    broken(e, "failed in Broken.serq_register_loaders.<locals>.load_broken during its loader for .broken "
                 "files: LookupError: no such table at ")
    assert isinstance(e.value.__cause__, LookupError)


def test_a_sugar_layer_that_raises_is_a_plugin_error_from_compile():
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(source=PROGRAM, pm=get_plugin_manager(plugins=[Broken()]))
    broken(e, "failed in Broken.serq_frontend_register_sugar.<locals>.rewrite during the compile: "
                 "ZeroDivisionError: division by zero at ")
    assert isinstance(e.value.__cause__, ZeroDivisionError)
