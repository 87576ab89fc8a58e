"""``serq plugins`` says what each plugin registers (commands, loaders, sugar layers, stage kinds, policies,
report formats), so a user can see which names a program may use and which part brings them."""

from __future__ import annotations

import json

import click
from click.testing import CliRunner
from serq import hookimpl
from serq.builtin import plugin_info
from serq.cli import build_cli
from serq.plugins import get_plugin_manager, registrations


class Batching:
    """A third-party part: a stage kind, an eviction order and a command."""

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("batcher", lambda sim, node, member, flat: None)

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        register("fifo_evict", lambda sim, pool, node: None)

    @hookimpl
    def serq_register_commands(self, register):
        register(click.Command("hello", callback=lambda: click.echo("hi")))


class Broken:
    """A part whose registration is wrong: a share policy without a name."""

    @hookimpl
    def serq_sim_register_share_policies(self, register):
        register("", lambda flows, caps: None)


def test_each_plugin_lists_what_it_registers():
    pm = get_plugin_manager()
    pm.register(Batching(), name="batching")
    got, problems = registrations(pm)
    assert problems == []
    assert got["batching"] == {"commands": ["hello"], "stage kinds": ["batcher"], "eviction orders": ["fifo_evict"]}
    # the built-in parts register through the same hooks: each name under the part that registers it
    assert got["sim"]["stage kinds"] == ["Fifo", "Ps", "Delay", "Step"]
    assert got["sim"]["share policies"] == ["maxmin", "bottleneck"]
    assert set(got["sim"]["commands"]) == {"run", "fit"}
    assert got["host"] == {"commands": ["plugins", "check", "ir"]}
    assert got["ir"] == {"loaders": [".ir.json"]}
    assert got["frontend"]["loaders"] == [".sq"]
    assert got["report"]["report formats"] == ["text", "json", "csv"]
    info = {p["name"]: p for p in plugin_info(pm, got)}
    assert info["batching"]["registers"]["stage kinds"] == ["batcher"]


def test_the_command_prints_registers_and_names_a_broken_plugin():
    pm = get_plugin_manager()
    pm.register(Batching(), name="batching")
    runner = CliRunner()
    r = runner.invoke(build_cli(pm), ["plugins"], obj=pm)
    assert r.exit_code == 0, r.output
    listed = {p["name"]: p for p in json.loads(r.output)}
    assert listed["batching"]["registers"] == {"commands": ["hello"], "stage kinds": ["batcher"],
                                               "eviction orders": ["fifo_evict"]}
    assert listed["vllm"]["registers"]["commands"] == ["vllm"]

    pm.register(Broken(), name="broken")
    r = runner.invoke(build_cli(pm), ["plugins"], obj=pm)
    # everything else is still listed; the wrong registration is named, and the status says so
    assert r.exit_code == 1
    err = r.stderr
    listed = {p["name"]: p for p in json.loads(r.stdout)}
    assert listed["batching"]["registers"]["stage kinds"] == ["batcher"]
    assert "share policies" not in listed["sim"]["registers"]
    assert "broken" in err and "share policy" in err and "serq_sim_register_share_policies" in err


def test_a_disabled_name_no_plugin_has_is_said(tmp_path):
    # a misspelt name blocks nothing: the command goes on and says so; a real name is quiet
    from host_helpers import run_serq

    r = run_serq("plugins", env={"SERQ_DISABLED_PLUGINS": "vlm, sim"}, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ("warning: SERQ_DISABLED_PLUGINS names 'vlm', which no installed plugin is called "
                        "(`serq plugins` lists their names)\n")
    names = {p["name"] for p in json.loads(r.stdout)}
    assert "sim" not in names and "vllm" in names
    r = run_serq("plugins", env={"SERQ_DISABLED_PLUGINS": "vllm"}, cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == ""
