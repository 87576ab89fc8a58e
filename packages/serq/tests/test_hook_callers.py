"""First-party parts go through the same hook callers as third parties: pluggy's wrappers and tracing see
every registration hook, the registries and the sugar layers are in registration order, nothing is
force-registered, and no module global hands a command's plugin manager to the parts."""

from __future__ import annotations

import pluggy
import pytest
import serq.plugins
import serq_frontend
import serq_report
import serq_sim
from serq import hookimpl
from serq.cli import build_cli
from serq.errors import PluginError, UserError
from serq.loading import load_program, loaders
from serq.plugins import collect, get_plugin_manager
from serq_frontend.sugar import SugarLayer, builtin_layers

REGISTER_HOOKS = ("serq_register_commands", "serq_register_loaders", "serq_frontend_register_sugar",
                  "serq_sim_register_stage_kinds", "serq_sim_register_eviction_orders",
                  "serq_sim_register_preemption_policies", "serq_sim_register_share_policies",
                  "serq_report_register_formats")

PROGRAM = "stage s : fifo; workload { arrive poisson(0.5); } session { run s (~exp(1)); } run { horizon 20; }"


class Wrapper:
    """A plugin wrapping every registration hook: it sees each call before and after the others."""

    def __init__(self):
        self.seen: list[str] = []

    def _wrap(self, name):
        self.seen.append(name)
        yield

    @hookimpl(wrapper=True)
    def serq_register_commands(self):
        return (yield from self._wrap("serq_register_commands"))

    @hookimpl(wrapper=True)
    def serq_register_loaders(self):
        return (yield from self._wrap("serq_register_loaders"))

    @hookimpl(wrapper=True)
    def serq_frontend_register_sugar(self):
        return (yield from self._wrap("serq_frontend_register_sugar"))

    @hookimpl(wrapper=True)
    def serq_sim_register_stage_kinds(self):
        return (yield from self._wrap("serq_sim_register_stage_kinds"))

    @hookimpl(wrapper=True)
    def serq_sim_register_eviction_orders(self):
        return (yield from self._wrap("serq_sim_register_eviction_orders"))

    @hookimpl(wrapper=True)
    def serq_sim_register_preemption_policies(self):
        return (yield from self._wrap("serq_sim_register_preemption_policies"))

    @hookimpl(wrapper=True)
    def serq_sim_register_share_policies(self):
        return (yield from self._wrap("serq_sim_register_share_policies"))

    @hookimpl(wrapper=True)
    def serq_report_register_formats(self):
        return (yield from self._wrap("serq_report_register_formats"))


def _exercise(pm):
    """Everything that collects a registry: the command, the loaders, the parser, a run, a report."""
    build_cli(pm)
    loaders(pm)
    serq_frontend.layers(pm)
    program = serq_frontend.compile(source=PROGRAM, pm=pm)
    report = serq_sim.run(program, pm=pm)
    serq_report.render(report, "text", pm=pm)
    serq_report.render(report, "json", pm=pm)


def test_wrappers_and_tracing_see_every_registration_hook():
    wrapper = Wrapper()
    pm = get_plugin_manager(plugins=[wrapper])
    traced: list[str] = []
    pm.add_hookcall_monitoring(lambda name, impls, kwargs: traced.append(name), lambda *a: None)
    _exercise(pm)
    for hook in REGISTER_HOOKS:
        assert hook in wrapper.seen, hook
        assert hook in traced, hook


def test_render_without_pm_asks_the_format_hook_for_text_and_json():
    pm = serq.plugins.installed_plugin_manager()
    program = serq_frontend.compile(source=PROGRAM)
    report = serq_sim.run(program)
    traced: list[str] = []
    undo = pm.add_hookcall_monitoring(lambda name, impls, kwargs: traced.append(name), lambda *a: None)
    try:
        text = serq_report.render(report)
        serq_report.render(report, "json")
    finally:
        undo()
    assert traced.count("serq_report_register_formats") == 2
    assert text == serq_report.render(report, "text", pm=get_plugin_manager())


def test_render_without_the_report_plugin_has_no_text_format(monkeypatch):
    program = serq_frontend.compile(source=PROGRAM)
    report = serq_sim.run(program)
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", "report")
    with pytest.raises(UserError, match="no plugin registers a report format"):
        serq_report.render(report, "text", pm=get_plugin_manager())


def test_the_simulator_is_not_force_registered():
    pm = get_plugin_manager(autoload=False)  # the host alone: serq-sim's plugin is not there
    reg = serq_sim.registries(pm)
    assert reg.stage_kinds.names() == [] and reg.evict.names() == [] and reg.share.names() == []
    assert pm.get_plugin("sim") is None and not pm.is_registered(serq_sim.plugin)


def _layer(name):
    return SugarLayer(name=name)


class LayerPlugin:
    def __init__(self, *layers):
        self.layers = layers

    @hookimpl(optionalhook=True)
    def serq_frontend_register_sugar(self, register):
        for layer in self.layers:
            register(layer)


def test_sugar_layers_apply_in_registration_order():
    a, b, c = _layer("a"), _layer("b"), _layer("c")
    pm = get_plugin_manager(plugins=[LayerPlugin(a), LayerPlugin(b, c)])
    got = serq_frontend.layers(pm)
    assert got == [*builtin_layers(), a, b, c]


def test_the_frontends_own_layers_are_where_its_plugin_is_registered():
    mine = _layer("mine")
    pm = get_plugin_manager(autoload=False, plugins=[LayerPlugin(mine), serq_frontend.plugin])
    assert serq_frontend.layers(pm) == [mine, *builtin_layers()]
    # and not there at all when its plugin is not
    assert serq_frontend.layers(get_plugin_manager(autoload=False, plugins=[LayerPlugin(mine)])) == [mine]


def test_a_duplicate_sugar_layer_names_both_plugins():
    pm = get_plugin_manager(plugins=[LayerPlugin(_layer("defs"))])
    with pytest.raises(PluginError, match="sugar layer 'defs' is registered twice: by frontend .*and by "):
        serq_frontend.layers(pm)


class Twin:
    """Two instances of one class: the same function serves both; each registration names its own."""

    @hookimpl
    def serq_report_register_formats(self, register):
        _helper(register)


def _helper(register):  # registers from a helper of the implementation, not the implementation itself
    register("twin", lambda report, out: None)


def test_a_duplicate_from_two_instances_of_one_class_names_each():
    pm = pluggy.PluginManager("serq")
    from serq_report import hookspecs

    pm.add_hookspecs(hookspecs)
    pm.register(Twin(), name="first")
    pm.register(Twin(), name="second")
    with pytest.raises(PluginError, match="'twin' is registered twice: by first and by second"):
        collect(pm, "serq_report_register_formats", "report format")


def test_registries_are_in_registration_order():
    class Kinds:
        def __init__(self, *names):
            self.names = names

        @hookimpl
        def serq_sim_register_stage_kinds(self, register):
            for n in self.names:
                register(n, lambda sim, node, member, flat: None)  # a factory as the hook calls it

    pm = get_plugin_manager(plugins=[Kinds("x1", "x2"), Kinds("y1")])
    assert serq_sim.registries(pm).stage_kinds.names() == ["Fifo", "Ps", "Delay", "Step", "x1", "x2", "y1"]


def test_a_loader_is_given_the_commands_plugin_manager(tmp_path):
    got = []

    def load(path, options):  # a loader returns a program (serq.loading refuses anything else)
        import serq_frontend

        got.append(options.pm)
        return serq_frontend.compile(source="stage s : fifo; workload { arrive poisson(1); } session { run s (1); }")

    class Loader:
        @hookimpl
        def serq_register_loaders(self, register):
            register(".foo", load)

    pm = get_plugin_manager(plugins=[Loader()])
    f = tmp_path / "x.foo"
    f.write_text("")
    assert [s.name for s in load_program(pm, f).stages] == ["s"]
    assert got == [pm]
    assert not hasattr(serq.plugins, "running_plugin_manager") and not hasattr(serq.plugins, "_running")


def test_the_parts_are_registered_first_in_their_order(monkeypatch):
    D = serq.plugins.Distribution
    found = [("zzz", "third", D("/x/aaa_party-1.0.dist-info")),
             ("report", "report", D("/x/serq_report-0.1.0.dist-info")),
             ("host", "host", D("/x/serq-0.1.0.dist-info")),
             ("yyy", "other", D("/x/zed-2.0.dist-info")),
             ("frontend", "frontend", D("/x/serq_frontend-0.1.0.dist-info"))]
    monkeypatch.setattr(serq.plugins, "entry_points", lambda group: list(found))
    monkeypatch.setattr(serq.plugins, "load_object", lambda value: type(value, (), {})())
    pm = serq.plugins.PluginManager("serq")
    serq.plugins.load_entry_points(pm)
    assert [n for n, _ in pm.list_name_plugin()] == ["host", "frontend", "report", "zzz", "yyy"]
