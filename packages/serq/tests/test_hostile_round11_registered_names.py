"""A name a plugin registers something under is shown in messages and listings (``unknown stage kind
`@x` (plugins register: …)``, ``unknown report format (installed: …)``, ``the installed parts load: …``,
``serq --help``) and written by the user (after ``@`` in a program, after ``--format``, as a file's
suffix, as a command): one that holds a line break or a control character split those one-line messages
in two, and a command named like an option (``--help``) was listed but could never be run. Each is refused
where it is registered, one message naming the plugin (docs/hooks.md, "When a plugin misbehaves")."""

from __future__ import annotations

import click
import pytest
from serq import hookimpl
from serq.cli import build_cli
from serq.errors import PluginError
from serq.plugins import collect, get_plugin_manager

pytestmark = pytest.mark.timeout(60)


class Kind:  # a stage kind's factory, never built here
    def __init__(self, sim, node, member, flat):
        pass


def _load(path, options):
    return None


def _format(report, out):
    out.write("")


class Names:
    """Registers ``name`` through ``hook``."""

    def __init__(self, hook: str, name: str):
        self.hook, self.name = hook, name

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        if self.hook == "stage kind":
            register(self.name, Kind)

    @hookimpl
    def serq_report_register_formats(self, register):
        if self.hook == "report format":
            register(self.name, _format)

    @hookimpl
    def serq_register_loaders(self, register):
        if self.hook == "loader for":
            register(self.name, _load)

    @hookimpl
    def serq_register_commands(self, register):
        if self.hook == "command":
            register(click.Command(self.name))


HOOKS = {"stage kind": "serq_sim_register_stage_kinds", "report format": "serq_report_register_formats",
         "loader for": "serq_register_loaders", "command": "serq_register_commands"}
OWN = f"{__name__}.Names"


@pytest.mark.parametrize(("kind", "name", "shown"), [
    ("stage kind", "k\nnext", r"'k\nnext'"),
    ("report format", "red\x1b[31m", r"'red\x1b[31m'"),
    ("loader for", ".a\tb", r"'.a\tb'"),
    ("command", "two\nlines", r"'two\nlines'"),
])
def test_a_name_that_is_not_printable_is_refused_naming_the_plugin(kind, name, shown):
    pm = get_plugin_manager(plugins=[Names(kind, name)])
    key = (lambda c: c.name) if kind == "command" else None
    with pytest.raises(PluginError) as e:
        collect(pm, HOOKS[kind], kind, key=key)
    assert str(e.value).splitlines() == [
        f"error: plugin {OWN!r} registers a {kind} wrongly in {HOOKS[kind]}: the name {shown} holds a "
        "character that is not printable (a line break, a control character)",
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"]


@pytest.mark.parametrize("name", ["--help", "-x"])
def test_a_command_named_like_an_option_is_refused(name):
    pm = get_plugin_manager(plugins=[Names("command", name)])
    with pytest.raises(PluginError) as e:
        build_cli(pm)
    assert str(e.value).splitlines()[0] == (
        f"error: plugin {OWN!r} registers a command wrongly in serq_register_commands: the command's name "
        f"{name!r} begins with '-', which the command line reads as an option's")


def test_a_printable_name_of_any_script_is_taken():
    # (a report format's: --format lötkolben; a stage kind's name is one a program can write after @, the
    # language's letters, digits and _: test_plugin_authors2)
    pm = get_plugin_manager(plugins=[Names("report format", "lötkolben")])
    assert "lötkolben" in collect(pm, HOOKS["report format"], "report format")
