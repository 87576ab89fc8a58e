"""The plugin host: discovery, the disable switches, added hookspecs, duplicate names."""

from __future__ import annotations

import click
import pluggy
import pytest
import serq
from serq import hookimpl
from serq.cli import build_cli
from serq.errors import PluginError
from serq.plugins import collect, get_plugin_manager

PARTS = {"host", "ir", "frontend", "sim", "report", "vllm"}


def names(pm) -> set[str]:
    return {n for n, p in pm.list_name_plugin() if p is not None}


def test_every_part_is_discovered_through_the_entry_point_group():
    pm = get_plugin_manager()
    assert PARTS <= names(pm)
    dists = {d.project_name for _, d in pm.list_plugin_distinfo()}
    assert {"serq", "serq-ir", "serq-frontend", "serq-sim", "serq-report", "serq-vllm"} <= dists


def test_manager_is_built_fresh_each_time():
    assert get_plugin_manager() is not get_plugin_manager()


def test_disabled_plugins_are_blocked(monkeypatch):
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", "sim, vllm")
    got = names(get_plugin_manager())
    assert "sim" not in got and "vllm" not in got
    assert {"host", "ir", "frontend", "report"} <= got


def test_autoload_switch_leaves_only_the_host(monkeypatch):
    monkeypatch.setenv("SERQ_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert names(get_plugin_manager()) == {"host"}


def test_the_librarys_manager_follows_the_switches_as_they_are_at_each_call(monkeypatch):
    # what the library API uses without a pm: a manager built while the switches left parts out is not
    # the one a later call gets once they are back (a test, or a program, that set them for a while left
    # every later serq_sim.run in the process without its stage kinds: "unknown stage kind 'Fifo'")
    import serq_frontend
    import serq_sim
    from serq.plugins import installed_plugin_manager

    monkeypatch.delenv("SERQ_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", "sim,report")
    without = installed_plugin_manager()
    assert "sim" not in names(without) and "frontend" in names(without)
    assert installed_plugin_manager() is without  # kept, for the same switches
    program = serq_frontend.compile(source="stage s : fifo(1); workload { arrive poisson(1); } "
                                           "session { run s (0.5); } run { horizon 10; }")
    monkeypatch.delenv("SERQ_DISABLED_PLUGINS")
    full = installed_plugin_manager()
    assert PARTS <= names(full) and full is not without
    assert serq_sim.run(program).result.arrivals > 0
    monkeypatch.setenv("SERQ_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert names(installed_plugin_manager()) == {"host"}


def test_parts_add_their_own_hookspecs():
    pm = get_plugin_manager()
    for hook in ("serq_sim_register_stage_kinds", "serq_sim_register_eviction_orders",
                 "serq_sim_register_preemption_policies", "serq_sim_register_share_policies",
                 "serq_report_register_formats", "serq_frontend_register_sugar",
                 "serq_frontend_library_paths"):
        assert hasattr(pm.hook, hook), hook


class AddsHooks:
    """A third-party part that brings its own hookspec through serq_addhooks."""

    class Specs:
        @pluggy.HookspecMarker("serq")
        def serq_demo_colours(self, register):
            """Register colours."""

    @hookimpl
    def serq_addhooks(self, pluginmanager):
        pluginmanager.add_hookspecs(self.Specs)


class Paints:
    @hookimpl
    def serq_demo_colours(self, register):
        register("red", 1)


def test_a_plugin_adds_a_hookspec_others_implement():
    pm = get_plugin_manager(plugins=[AddsHooks(), Paints()])
    assert collect(pm, "serq_demo_colours", "colour").names() == ["red"]


@click.command("hello")
def hello():
    """Say hello."""
    click.echo("hello from a plugin")


class Vacation:
    """A stage kind a plugin provides (the simulator resolves it by name; built as the hook's factory is
    called: a factory that cannot be is refused when it is registered)."""

    def __init__(self, sim, node, member, flat):
        pass


class ThirdParty:
    @hookimpl
    def serq_register_commands(self, register):
        register(hello)

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("vacation", Vacation)


class Rival:
    @hookimpl
    def serq_register_commands(self, register):
        register(hello)

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("vacation", lambda sim, node, member, flat: None)


def test_a_plugin_adds_a_subcommand(capsys):
    pm = get_plugin_manager(plugins=[ThirdParty()])
    cli = build_cli(pm)
    assert "hello" in cli.commands
    with pytest.raises(SystemExit) as e:
        cli.main(["hello"], prog_name="serq")
    assert e.value.code == 0
    assert capsys.readouterr().out == "hello from a plugin\n"


def test_a_plugin_adds_a_stage_kind():
    pm = get_plugin_manager(plugins=[ThirdParty()])
    kinds = collect(pm, "serq_sim_register_stage_kinds", "stage kind")
    assert kinds["vacation"] is Vacation
    # an object registered without a name is named by its class in messages (pluggy names it by its id(),
    # which would differ from run to run)
    assert kinds.provider("vacation") == f"{__name__}.ThirdParty"


def test_a_duplicate_command_names_both_providers():
    pm = get_plugin_manager(plugins=[ThirdParty()])
    pm.register(Rival(), name="rival-plugin")
    with pytest.raises(PluginError) as e:
        build_cli(pm)
    msg = str(e.value)
    assert "command 'hello' is registered twice" in msg
    assert "rival-plugin" in msg
    assert f"by {__name__}.ThirdParty and by rival-plugin" in msg


def test_a_duplicate_stage_kind_names_both_providers():
    pm = get_plugin_manager(plugins=[])
    pm.register(ThirdParty(), name="vacation-one")
    pm.register(Rival(), name="vacation-two")
    with pytest.raises(PluginError, match=r"stage kind 'vacation' is registered twice: by vacation-one "
                                          r"and by vacation-two"):
        collect(pm, "serq_sim_register_stage_kinds", "stage kind")


def test_a_duplicate_builtin_command_names_the_distribution():
    class Shadow:
        @hookimpl
        def serq_register_commands(self, register):
            register(click.Command("check", callback=lambda: None))

    pm = get_plugin_manager()
    pm.register(Shadow(), name="shadow")
    with pytest.raises(PluginError, match=r"command 'check' is registered twice: by host \(serq 0\.1\.0\) "
                                          r"and by shadow"):
        build_cli(pm)


def test_hookimpl_is_the_serq_marker():
    assert serq.hookimpl.project_name == "serq"


#: ``serq ARGS`` in this process, then which modules of other commands it imported
COMMAND_MODULES = ("serq.commands", "serq.loading", "serq_sim.cli", "serq_sweep.cli", "serq_frontend.commands",
                   "serq_vllm.cli")
PROBE = f"""import json, sys
args = sys.argv[1:]
sys.argv = ["serq", *args]
from serq.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m in {COMMAND_MODULES!r})))
"""


def imported_commands(*args: str) -> list[str]:
    import json
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_a_command_imports_only_its_own_module():
    # The parts register their commands by name (serq.cli.LazyCommand): a command's start-up imports its
    # own module, not every other command's (and click's options of them)
    assert imported_commands("vllm", "scenarios") == ["serq_vllm.cli"]
    assert imported_commands("plugins") == ["serq.commands", "serq.loading"]
    assert imported_commands("--version") == []
    # the help lists every command, so it imports them all
    assert imported_commands("--help") == sorted(COMMAND_MODULES)


hello_lazily = click.Command("hello", callback=lambda: click.echo("hello, lazily"))


class LazyParty:
    def __init__(self, target: str, name: str = "hello"):
        self.target, self.name = target, name

    @hookimpl
    def serq_register_commands(self, register):
        from serq.cli import LazyCommand

        register(LazyCommand(self.name, self.target))


def test_a_plugin_adds_a_subcommand_by_name(capsys):
    pm = get_plugin_manager(plugins=[LazyParty(f"{__name__}:hello_lazily")])
    cli = build_cli(pm)
    assert type(cli.commands["hello"]).__name__ == "LazyCommand"  # not imported yet
    with pytest.raises(SystemExit) as e:
        cli.main(["hello"], prog_name="serq")
    assert e.value.code == 0
    assert capsys.readouterr().out == "hello, lazily\n"
    assert cli.commands["hello"] is hello_lazily
    # a name two plugins claim is refused whether or not one is lazy
    pm.register(Rival(), name="rival-plugin")
    with pytest.raises(PluginError, match="command 'hello' is registered twice"):
        build_cli(pm)


@pytest.mark.parametrize("target", [f"{__name__}:hello_lazily", f"{__name__}:Vacation"])
def test_a_lazy_command_that_is_not_the_command_it_names_is_one_error(target):
    pm = get_plugin_manager(plugins=[LazyParty(target, name="hullo")])
    cli = build_cli(pm)
    with pytest.raises(PluginError, match=r"error: the command 'hullo' \(registered by .*\.LazyParty\) registered as "
                                          r".* is not a click command named 'hullo'"):
        cli.main(["hullo"], prog_name="serq", standalone_mode=False)
