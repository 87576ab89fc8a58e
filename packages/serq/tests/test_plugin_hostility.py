"""A plugin that misbehaves, installed as a third party installs one (a ``*.dist-info`` with its entry
point), and ``serq`` run over it: whatever the plugin does wrong (raises in a hook, registers the wrong
thing, a name taken, a command whose module cannot be imported, a report format that fails half-way, a
loader, a library folder or a sugar layer that is not what it should be) is one message naming the plugin,
its distribution and what it did, status 1, no traceback, and no output the user named half-written
(docs/hooks.md, "When a plugin misbehaves"). The simulator's checks of stage kinds and policies are
tested in packages/serq-sim/tests/test_plugin_guards.py."""

from __future__ import annotations

import pytest
from host_helpers import run_serq

PLUGIN = '''
import os
from serq import hookimpl

CASE = os.environ.get("HOSTILE", "")


class Never:  # a stage kind's factory that registers fine (never built by these programs)
    def __init__(self, sim, node, member, flat):
        pass


def partial_format(report, out):
    out.write("half of a report\\n" * 100)
    if CASE == "format raises":
        raise RuntimeError("the format broke half-way")


def load_hostile(path, options):
    if CASE == "loader raises":
        raise LookupError("the loader broke")
    if CASE == "loader gives None":
        return None
    from serq_frontend import compile
    return compile(path, pm=options.pm)


@hookimpl
def serq_sim_register_stage_kinds(register):
    if CASE == "hook raises":
        raise RuntimeError("register exploded")
    if CASE == "name not a string":
        register(3, Never)
    if CASE == "one argument":
        register("never")
    if CASE == "not callable":
        register("never", 42)
    if CASE == "a built-in's name":
        register("Fifo", Never)
    if CASE == "a factory of no arguments":
        register("never", lambda: None)


def no_arguments():
    return ""


@hookimpl(wrapper=True)
def serq_sim_register_eviction_orders(register):
    if CASE == "a wrapper that does not yield":
        return None
    return (yield)


@hookimpl
def serq_report_register_formats(register):
    register("partial", no_arguments if CASE == "a format of no arguments" else partial_format)
    if CASE == "format named text":
        register("text", partial_format)


@hookimpl
def serq_register_loaders(register):
    register(".hostile", load_hostile)


@hookimpl
def serq_register_commands(register):
    from serq.cli import LazyCommand
    if CASE == "command import fails":
        register(LazyCommand("hcmd", "hostile_broken_cmd:command"))
    if CASE == "command not click":
        register("notacommand")
    if CASE == "commands hook raises":
        raise RuntimeError("commands exploded")


@hookimpl
def serq_frontend_library_paths():
    if CASE == "folder an int":
        return [42]
    if CASE == "folders a string":
        return "lib"
    return []


@hookimpl
def serq_frontend_register_sugar(register):
    from serq_frontend.sugar import SugarLayer
    if CASE == "grammar not lark":
        register(SugarLayer("hostile", "%%% this is not lark", {}, None))
    if CASE == "rewrite gives None":
        register(SugarLayer("hostile", "", {}, lambda module, ctx: None))
    if CASE == "rewrite raises":
        def rewrite(module, ctx):
            raise RuntimeError("the rewrite broke")
        register(SugarLayer("hostile", "", {}, rewrite))
'''

PROGRAM = """stage svc : fifo;
workload { arrive poisson(0.5); }
session { set t0 = now; run svc (1); observe response = now - t0; end; }
run { horizon 50; }
"""

HEAD = "error: plugin 'hostile' (from hostileplug 0.3) "
HINT = "(run without it: SERQ_DISABLED_PLUGINS=hostile, or uninstall hostileplug)"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    site = root / "site"
    info = site / "hostileplug-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostileplug\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text("[serq]\nhostile = hostile_mod\n")
    (site / "hostile_mod.py").write_text(PLUGIN)
    (site / "hostile_broken_cmd.py").write_text("import os\nraise ImportError('no such thing as this command')\n")
    (root / "p.sq").write_text(PROGRAM)
    (root / "p.hostile").write_text(PROGRAM)
    return root


def serq(site, case: str, *args: str, compile_cache: bool = True):
    env = {"PYTHONPATH": str(site / "site"), "HOSTILE": case}
    if not compile_cache:  # the sugar layers and library folders are asked for when a program compiles
        env["SERQ_COMPILE_CACHE"] = "0"
    return run_serq(*args, env=env, cwd=site)


def one_message(r, first: str, hint: bool = True) -> None:
    """Status 1, nothing on stdout, and on stderr the one message (and the hint), no traceback."""
    assert r.returncode == 1, r
    assert r.stdout == "", r.stdout
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == (2 if hint else 1), r.stderr
    assert lines[0].startswith(first), f"{lines[0]!r} does not start with {first!r}"
    if hint:
        assert lines[1] == HINT


def test_the_plugin_as_it_is_takes_nothing_from_serq(site):
    r = serq(site, "", "run", "p.sq", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("run: horizon 50")


REGISTRATION = {
    "hook raises": "failed in serq_sim_register_stage_kinds: RuntimeError: register exploded at {site}",
    "name not a string": "registers a stage kind wrongly in serq_sim_register_stage_kinds: the name 3 is not a "
                         "non-empty string",
    "one argument": "registers a stage kind wrongly in serq_sim_register_stage_kinds: `register` takes two "
                    "arguments, `register(name, object)`, and got 1",
    "not callable": "registers a stage kind wrongly in serq_sim_register_stage_kinds: stage kind 'never': 42 is "
                    "not callable",
    "a factory of no arguments": "registers a stage kind wrongly in serq_sim_register_stage_kinds: stage kind "
                                 "'never': hostile_mod.serq_sim_register_stage_kinds.<locals>.<lambda> cannot be "
                                 "called as factory(sim, node, member, flat): too many positional arguments",
    "a format of no arguments": "registers a report format wrongly in serq_report_register_formats: report format "
                                "'partial': hostile_mod.no_arguments cannot be called as reporter(report, out): too "
                                "many positional arguments",
    "a wrapper that does not yield": "failed during serq_sim_register_eviction_orders: RuntimeError: "
                                     "wrap_controller at 'serq_sim_register_eviction_orders' {site}:",
    "command not click": "registers a command wrongly in serq_register_commands: 'notacommand' is not a "
                         "click.Command (nor a serq.cli.LazyCommand)",
    "commands hook raises": "failed in serq_register_commands: RuntimeError: commands exploded at {site}",
}


@pytest.mark.parametrize("case", list(REGISTRATION))
def test_a_registration_gone_wrong_is_one_message_naming_the_plugin(site, case):
    r = serq(site, case, "run", "p.sq", "--no-progress")
    one_message(r, HEAD + REGISTRATION[case].format(site=site / "site" / "hostile_mod.py"))


@pytest.mark.parametrize(("case", "what"), [("a built-in's name", "stage kind 'Fifo'"),
                                             ("format named text", "report format 'text'")])
def test_a_name_a_built_in_has_is_refused_naming_both(site, case, what):
    r = serq(site, case, "run", "p.sq", "--no-progress")
    # (the built-in is serQ's own: the one to run without is the plugin, as a plugin's own message says)
    one_message(r, f"error: {what} is registered twice: by ")
    assert r.stderr.splitlines()[0].endswith(" and by hostile (hostileplug 0.3)"), r.stderr


@pytest.mark.parametrize("existing", [True, False], ids=["replacing a file", "a new file"])
def test_a_format_that_fails_half_way_leaves_the_output_as_it_was(site, existing):
    out = site / ("old.txt" if existing else "new.txt")
    if existing:
        out.write_text("the report of yesterday\n")
    r = serq(site, "format raises", "run", "p.sq", "--no-progress", "--format", "partial", "-o", str(out))
    one_message(r, HEAD + "failed in partial_format during its report format partial: RuntimeError: the format broke half-way at "
                f"{site / 'site' / 'hostile_mod.py'}:")
    if existing:
        assert out.read_text() == "the report of yesterday\n"
    else:
        assert not out.exists()
    assert sorted(p.name for p in site.iterdir() if p.name.startswith(out.stem)) == (
        [out.name] if existing else [])  # no temporary file left beside it
    # to standard output: nothing of the half-written report
    r = serq(site, "format raises", "run", "p.sq", "--no-progress", "--format", "partial")
    one_message(r, HEAD + "failed in partial_format during its report format partial: RuntimeError: the format broke half-way")


def test_a_command_whose_module_cannot_be_imported_takes_no_other_command_with_it(site):
    case = "command import fails"
    r = serq(site, case, "--help")
    assert r.returncode == 0, r.stderr
    listed = [line for line in r.stdout.splitlines() if line.strip().startswith("hcmd")]
    assert listed and "(cannot be loaded)" in listed[0], r.stdout
    for name in ("run", "check", "plugins"):
        assert any(line.strip().startswith(name) for line in r.stdout.splitlines()), r.stdout
    r = serq(site, case, "run", "p.sq", "--no-progress")
    assert r.returncode == 0, r.stderr
    for args in (("hcmd",), ("hcmd", "--help"), ("hcmd", "x", "--flag")):
        r = serq(site, case, *args)
        one_message(r, "error: the command 'hcmd' (registered by hostile (hostileplug 0.3)) cannot be loaded "
                       "(hostile_broken_cmd:command): ImportError: no such thing as this command at "
                       f"{site / 'site' / 'hostile_broken_cmd.py'}:2", hint=False)


def test_a_loader_that_raises_or_gives_no_program_is_named(site):
    r = serq(site, "loader raises", "run", "p.hostile", "--no-progress")
    one_message(r, HEAD + "failed in load_hostile during its loader for .hostile files: LookupError: the loader broke at")
    r = serq(site, "loader gives None", "run", "p.hostile", "--no-progress")
    one_message(r, HEAD + "failed in its loader for .hostile files: it returned None for p.hostile, not a "
                "serq_ir.Program")
    r = serq(site, "", "run", "p.hostile", "--no-progress")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(("case", "what"), [
    ("folder an int", "it returned the folder 42: a folder is a non-empty str or os.PathLike"),
    ("folders a string", "it returned 'lib', not a list of folders (str or os.PathLike)"),
])
def test_library_folders_that_are_not_folders_are_refused(site, case, what):
    # asked for by a program that uses a library (one that uses none needs no library folders)
    (site / "u.sq").write_text('use "lib.sq";\n' + PROGRAM)
    r = serq(site, case, "run", "u.sq", "--no-progress")
    one_message(r, HEAD + "failed in serq_frontend_library_paths: " + what)
    r = serq(site, case, "run", "p.sq", "--no-progress")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(("case", "what"), [
    ("grammar not lark", "registers the sugar layer 'hostile', whose grammar does not build: GrammarError: "),
    ("rewrite gives None", "failed in the rewrite of its sugar layer 'hostile': rewrite(module, ctx) returned "
                           "None, not a serq_frontend.ast.Module"),
    ("rewrite raises", "failed in serq_frontend_register_sugar.<locals>.rewrite during the compile: RuntimeError: the "
                       "rewrite broke"),
])
def test_a_sugar_layer_gone_wrong_is_named(site, case, what):
    r = serq(site, case, "run", "p.sq", "--no-progress", compile_cache=False)
    one_message(r, HEAD + what)


def test_an_entry_point_named_as_a_part_is_not_left_out_silently(tmp_path):
    # pluggy skips an entry point whose name is registered: the plugin was not there, and a program naming
    # its stage kind was told that no plugin registers stage kinds
    site = tmp_path / "site"
    info = site / "evilplug-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evilplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nsim = evil_mod\n")
    (site / "evil_mod.py").write_text("")
    r = run_serq("--version", env={"PYTHONPATH": str(site)})
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r
    assert r.stderr.splitlines() == [
        "error: plugin 'sim' (from evilplug 1.0) cannot be loaded (evil_mod): its name is taken by the plugin 'sim' "
        "of serq-sim 0.1.0; entry points of the group 'serq' need names of their own",
        "(run without it: uninstall evilplug, or ask its authors to rename its entry point)"]
