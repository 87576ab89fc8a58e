"""What a third party's plugin author gets wrong when the plugin is loaded, each installed as a wheel leaves
it (its module and a ``*.dist-info`` with ``METADATA`` and ``entry_points.txt`` in a folder on
``sys.path``): an import that fails, an entry point naming an attribute the module lacks, a hook's name
misspelt, a plugin built against another serQ (a hook or an argument this serQ does not have), two
distributions registering one kind's name, a report format that writes bytes. Each is one message naming
the plugin and what is wrong, status 1, no traceback. And a plugin's kind where every command runs a
program: ``serq run``, ``--check-invariants``, ``serq sweep`` on worker processes, ``serq compare``."""

from __future__ import annotations

import contextlib
import csv
import importlib
import io
import json
import sys
from typing import Any

import pytest
import serq
from host_helpers import run_serq
from serq.errors import PluginError
from serq.plugins import collect, get_plugin_manager

pytestmark = pytest.mark.timeout(60)


def _install(site, dist: str, name: str, value: str, module: str | None = None, source: str | None = None) -> None:
    info = site / f"{dist.replace('-', '_')}-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text(f"[serq]\n{name} = {value}\n")
    if source is not None:
        (site / f"{module or value}.py").write_text(source)


def _refused(site, *args: str) -> list[str]:
    """The lines of serq's refusal on standard error, its status 1; without ``args``, of the plugins' loading,
    in this process: the PluginError that every command prints (docs/hooks.md), as the library API raises it."""
    if not args:
        with _installed(site), pytest.raises(PluginError) as e:
            get_plugin_manager()
        return str(e.value).splitlines()
    r = run_serq(*args, env={"PYTHONPATH": str(site)})
    assert (r.returncode, r.stdout) == (1, ""), r
    assert "Traceback" not in r.stderr, r.stderr
    return r.stderr.splitlines()


@contextlib.contextmanager
def _installed(site):
    """``site`` on sys.path, its modules imported afresh and dropped after."""
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(str(site))
        for name in [n for n in sys.modules if n.startswith("acme2_")]:
            del sys.modules[name]


def _collected(site, hook: str, kind: str, disabled: list[str] | None = None) -> Any:
    """What ``hook`` registers with the plugins installed in ``site`` (``disabled`` blocked)."""
    with _installed(site):
        return collect(get_plugin_manager(disabled=disabled), hook, kind)


HINT = "(run without it: SERQ_DISABLED_PLUGINS=acme, or uninstall serq-acme)"


def test_an_import_that_fails_names_the_plugin_and_its_line(tmp_path):
    _install(tmp_path, "serq-acme", "acme", "acme2_imports", source="import math\nimport acme2_no_such_dependency\n")
    assert _refused(tmp_path) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) cannot be loaded (acme2_imports): ModuleNotFoundError: No "
        f"module named 'acme2_no_such_dependency' at {tmp_path / 'acme2_imports.py'}:2", HINT]


@pytest.mark.parametrize("source", [None, "import importlib\n\nimportlib.import_module('acme2_no_such_dependency')\n"])
def test_a_module_that_is_not_there_names_no_line_of_the_import_machinery(tmp_path, source):
    """An entry point's module that is not there was 'No module named … at …/importlib/__init__.py:126', a
    line of Python's; the plugin's own import_module of a missing one is at the plugin's line."""
    _install(tmp_path, "serq-acme", "acme", "acme2_imported", source=source)
    missing, at = ("acme2_imported", "") if source is None else \
        ("acme2_no_such_dependency", f" at {tmp_path / 'acme2_imported.py'}:3")
    assert _refused(tmp_path) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) cannot be loaded (acme2_imported): ModuleNotFoundError: No "
        f"module named '{missing}'{at}", HINT]


def test_an_entry_point_naming_an_attribute_the_module_lacks(tmp_path):
    _install(tmp_path, "serq-acme", "acme", "acme2_attr:plugin", "acme2_attr", "from serq import hookimpl\n")
    assert _refused(tmp_path) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) cannot be loaded (acme2_attr:plugin): AttributeError: module "
        "'acme2_attr' has no attribute 'plugin'", HINT]


TAIL = ("; a hook of a part that may not be installed, or of a later serQ, is marked @hookimpl(optionalhook=True), "
        "and is then not called where no part specifies it")


@pytest.mark.parametrize(("hook", "meant"), [
    ("serq_sim_register_stage_kind", " (did you mean serq_sim_register_stage_kinds?)"),
    ("serq_report_register_format", " (did you mean serq_report_register_formats?)"),
    # a later serQ's hook: nothing near it (the general rule's cutoff suggested serq_sim_register_share_policies)
    ("serq_sim_register_arrival_laws", ""),
])
def test_a_hook_no_part_specifies_is_named_with_what_was_meant_at_its_line(tmp_path, hook, meant):
    """pluggy's words were "is not valid: unknown hook 'serq_sim_register_stage_kind' in plugin acme": no
    line, nothing of the hook it was meant to be, nothing of a later serQ's hook."""
    _install(tmp_path, "serq-acme", "acme", "acme2_hook",
             source=f"from serq import hookimpl\n\n\n@hookimpl\ndef {hook}(register):\n    pass\n")
    assert _refused(tmp_path) == [
        f"error: plugin 'acme' (from serq-acme 0.3.0) is not valid: it implements the hook {hook}, which no "
        f"installed part of serQ {serq.__version__} specifies{meant}{TAIL} at {tmp_path / 'acme2_hook.py'}:4", HINT]


def test_a_later_serqs_hook_marked_optional_loads(tmp_path):
    """docs/hooks.md: a plugin for several versions marks a hook the oldest lacks optionalhook=True."""
    _install(tmp_path, "serq-acme", "acme", "acme2_optional",
             source="from serq import hookimpl\n\n\n@hookimpl(optionalhook=True)\n"
                    "def serq_sim_register_arrival_laws(register):\n    pass\n")
    with _installed(tmp_path):
        pm = get_plugin_manager()
        assert [impl.plugin_name for impl in pm.hook.serq_sim_register_arrival_laws.get_hookimpls()] == ["acme"]


def test_an_argument_a_later_serqs_hook_gives_is_refused_at_the_definition(tmp_path):
    _install(tmp_path, "serq-acme", "acme", "acme2_newer",
             source="from serq import hookimpl\n\n\n@hookimpl\n"
                    "def serq_sim_register_stage_kinds(register, api_version):\n    pass\n")
    assert _refused(tmp_path) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) cannot be loaded (acme2_newer): PluginValidationError: Plugin "
        "'acme' for hook 'serq_sim_register_stage_kinds' hookimpl definition: serq_sim_register_stage_kinds(register, "
        "api_version) Argument(s) {'api_version'} are declared in the hookimpl but can not be found in the hookspec "
        f"at {tmp_path / 'acme2_newer.py'}:4", HINT]


def test_a_name_a_later_serq_exports_is_an_import_at_the_plugins_line(tmp_path):
    """A plugin built against a later serQ that imports what this one lacks: the plugin's line, not serQ's."""
    _install(tmp_path, "serq-acme", "acme", "acme2_later",
             source="from serq import hookimpl\nfrom serq_sim.policies import EvictionOrderV2\n")
    [first, hint] = _refused(tmp_path)
    assert first.startswith("error: plugin 'acme' (from serq-acme 0.3.0) cannot be loaded (acme2_later): ImportError: "
                            "cannot import name 'EvictionOrderV2' from 'serq_sim.policies' ("), first
    assert first.endswith(f") at {tmp_path / 'acme2_later.py'}:2") and hint == HINT, first


KIND = '''from serq import hookimpl
from serq_sim.stages import DelayStage


class Everyone(DelayStage):
    """An infinite server, under a name of its own."""


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("everyone", Everyone)
'''

PROGRAM = """let W = 1;
stage s : @everyone;
workload { arrive poisson(1); }
session { set t0 = now; run s (W * ~exp(1)); observe resp = now - t0; }
run { horizon 200; }
"""


def test_two_distributions_registering_one_kinds_name(tmp_path):
    _install(tmp_path, "serq-acme", "acme", "acme2_kind", source=KIND)
    _install(tmp_path, "serq-other", "other", "acme2_other", source=KIND)
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = run_serq("run", str(tmp_path / "p.sq"), env={"PYTHONPATH": str(tmp_path)})
    assert (r.returncode, r.stdout) == (1, "") and "Traceback" not in r.stderr, r
    assert r.stderr.splitlines() == ["error: stage kind 'everyone' is registered twice: by acme (serq-acme 0.3.0) and "
                                     "by other (serq-other 0.3.0)",
                                     "(run without one of them: SERQ_DISABLED_PLUGINS=acme or SERQ_DISABLED_PLUGINS=other, "
                                     "or uninstall one; `serq plugins` lists them)"], r.stderr
    alone = _collected(tmp_path, "serq_sim_register_stage_kinds", "stage kind", disabled=["other"])
    assert alone.provider("everyone") == "acme (serq-acme 0.3.0)"


@pytest.mark.parametrize(("body", "why"), [
    ("out.write(b'resp\\n')", "failed in raw during its report format raw: TypeError: string argument expected, "
                               "got 'bytes' at {file}:5"),
    ("return b'resp\\n'", "failed in its report format raw: reporter(report, out) returned b'resp\\n' and wrote "
                           "nothing: a format writes its report to the stream out it is given"),
])
def test_a_report_format_that_writes_or_returns_bytes(tmp_path, body, why):
    _install(tmp_path, "serq-acme", "acme", "acme2_bytes",
             source=f"from serq import hookimpl\n\n\ndef raw(report, out):\n    {body}\n\n\n"
                    "@hookimpl\ndef serq_report_register_formats(register):\n    register('raw', raw)\n")
    (tmp_path / "p.sq").write_text(PROGRAM.replace("@everyone", "delay"))
    assert _refused(tmp_path, "run", str(tmp_path / "p.sq"), "--format", "raw", "-o", str(tmp_path / "r.raw")) == [
        "error: plugin 'acme' (from serq-acme 0.3.0) " + why.format(file=tmp_path / "acme2_bytes.py"), HINT]
    assert not (tmp_path / "r.raw").exists()


@pytest.fixture
def kind(tmp_path):
    _install(tmp_path, "serq-acme", "acme", "acme2_kind", source=KIND)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "d.sq").write_text(PROGRAM.replace("@everyone", "delay"))
    return tmp_path


def test_a_plugins_kind_is_the_builtin_it_extends_wherever_a_program_runs(kind):
    """@everyone is serQ's delay under another name, so every command gives the figures of the program with
    delay: serq run (with --check-invariants too), serq sweep's rows from worker processes, which load the
    plugin as the command did, and serq compare of the two programs (every difference 0)."""
    env = {"PYTHONPATH": str(kind)}
    runs = {}
    for name, extra in (("p", ()), ("p", ("--check-invariants",)), ("d", ())):
        r = run_serq("run", f"{name}.sq", "--json", *extra, env=env, cwd=kind)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        del doc["program"]
        runs[name, extra] = doc
    assert len({json.dumps(d) for d in runs.values()}) == 1
    swept = run_serq("sweep", "p.sq", "--set", "W=1,2", "--workers", "2", "--no-progress", env=env, cwd=kind)
    assert swept.returncode == 0, swept.stderr
    rows = list(csv.DictReader(io.StringIO(swept.stdout)))
    assert [(r["W"], r["seed"], r["status"]) for r in rows] == [("1", "1", "ok"), ("2", "1", "ok")]
    assert float(rows[0]["observes.resp.mean"]) == runs["d", ()]["observes"]["resp"]["mean"]
    compared = run_serq("compare", "p.sq", "d.sq", "--seeds", "1,2", "--workers", "2", "--no-progress",
                        "-o", "c.csv", env=env, cwd=kind)
    assert compared.returncode == 0, compared.stderr
    # no figure differs: the output is only what it leaves out, the figures equal in every run and (since
    # 64e66735 said so) those with no value in any run, of kinds neither program has
    notes = compared.stdout.rstrip().splitlines()
    assert notes[0].endswith("figure(s) equal in every run of both arms left out)"), compared.stdout
    assert [n for n in notes[1:] if "with no value in any run of either arm left out" not in n] == [], compared.stdout
    assert len((kind / "c.csv").read_text().splitlines()) == 1  # the header: no figure differs


@pytest.mark.parametrize(("header", "body", "what", "got"), [
    ("async def", "register('k', DelayStage)", "a coroutine function (async def)", "coroutine"),
    ("def", "yield register('k', DelayStage)", "a generator function (it yields)", "generator"),
])
def test_a_registration_hook_whose_body_its_call_does_not_run(tmp_path, header, body, what, got):
    thing = "a coroutine, which nothing awaits" if got == "coroutine" else "a generator, which nothing iterates"
    """An async def's call returns a coroutine, a generator function's a generator: neither body runs, so
    nothing is registered. It was refused as 'it returned an object of type coroutine' beside Python's
    'RuntimeWarning: coroutine ... was never awaited' and its tracemalloc hint, twice (four lines more)."""
    _install(tmp_path, "serq-acme", "acme", "acme2_async",
             source=f"from serq import hookimpl\nfrom serq_sim.stages import DelayStage\n\n\n@hookimpl\n"
                    f"{header} serq_sim_register_stage_kinds(register):\n    {body}\n")
    with pytest.raises(PluginError) as e:
        _collected(tmp_path, "serq_sim_register_stage_kinds", "stage kind")
    assert str(e.value).splitlines() == [
        "error: plugin 'acme' (from serq-acme 0.3.0) registers a stage kind wrongly in serq_sim_register_stage_kinds: "
        f"it is {what}, whose call as serq_sim_register_stage_kinds(register) returns {thing}, and runs none of its "
        f"body (it returned an object of type {got}): nothing it "
        "registers is registered; a registration hook is a plain function that calls register(name, object)", HINT]


@pytest.mark.parametrize(("hook", "name", "kind"), [
    ("serq_sim_register_stage_kinds", "my-kind", "a stage kind"),
    ("serq_sim_register_eviction_orders", "9lives", "an eviction order"),
    ("serq_sim_register_share_policies", "équité", "a share policy"),
])
def test_a_name_no_program_can_write_is_refused_when_registered(tmp_path, hook, name, kind):
    """`stage s : @my-kind;` is `@my` then `-kind` to the parser: the kind was registered and listed, and
    the program naming it was 'unexpected `-`', naming neither the plugin nor the name."""
    _install(tmp_path, "serq-acme", "acme", "acme2_names",
             source=f"from serq import hookimpl\n\n\n@hookimpl\ndef {hook}(register):\n"
                    f"    register({name!r}, lambda *a: None)\n")
    with pytest.raises(PluginError) as e:
        _collected(tmp_path, hook, kind.split(" ", 1)[1])
    assert str(e.value).splitlines() == [
        f"error: plugin 'acme' (from serq-acme 0.3.0) registers {kind} wrongly in {hook}: the name '{name}' is not one "
        "a program can write: a program writes @NAME (a share policy: share NAME;), NAME letters, digits and _ not "
        "beginning with a digit", HINT]
