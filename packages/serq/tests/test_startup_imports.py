"""What a short command's start-up leaves out (docs/performance.md, "Start-up, once more"): the modules, the
regular expressions and the collections its work does not need. Each is a few million instructions of a
process that, for `serq run ... --arrivals 1` or an oracle-sized scenario, is nearly all start-up; none
changes an output, so only a test notices one coming back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[3]

#: ``serq ARGS`` through the script's entry point (``serq.cli.entry``) in this process, recording which
#: modules of serQ call ``re.compile`` (directly, or through ``re.match``/``re.fullmatch``/... of a pattern
#: the cache does not hold), then the modules imported, the patterns' compilers and the collector's first
#: threshold at the end
PROBE = """import atexit, gc, json, re, sys
compiled = set()
_compile = re._compile
def spy(pattern, flags):
    f = sys._getframe(1)
    while f is not None and f.f_globals.get("__name__", "").startswith("re"):
        f = f.f_back
    if f is not None:
        compiled.add(f.f_globals.get("__name__", "?"))
    return _compile(pattern, flags)
re._compile = spy
def said():
    print(json.dumps({"modules": sorted(sys.modules), "compiled": sorted(compiled),
                      "threshold": gc.get_threshold()[0]}), file=sys.stderr)
atexit.register(said)  # (first registered: run after the command's own atexit functions)
sys.argv = ["serq", *sys.argv[1:]]
from serq.cli import CALL
CALL()
"""


def probe(args: list[str], env: dict[str, str], call: str = "entry") -> dict:
    r = subprocess.run([sys.executable, "-c", PROBE.replace("CALL", call), *args], capture_output=True,
                       text=True, timeout=100, env=env, cwd=REPO)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stderr.splitlines()[-1])


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    out = {**os.environ, "SERQ_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}
    out.pop("SERQ_COMPILE_CACHE", None)
    out.pop("SERQ_SIM_TIER", None)
    return out


RUN = ["run", "bench/vllm_single.sq", "--arrivals", "1", "--no-progress"]
SCENARIO = ["vllm", "scenario", "vllm/multiturn"]


@pytest.fixture(scope="module")
def cached_run(env):
    probe(RUN, env)  # the first compiles the program into the cache
    return probe(RUN, env)


@pytest.fixture(scope="module")
def cached_scenario(env):
    probe(SCENARIO, env)
    return probe(SCENARIO, env)


def ours(modules: list[str], parts: tuple[str, ...]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in parts]


def test_a_run_without_a_trace_imports_no_trace_reader_no_sweep_and_no_csv(cached_run):
    # the program names no trace and no --trace is given: the trace reader (its CSV reader, its row
    # pattern) has nothing to do; the sweep's plugin registers its commands by name, so its modules stay
    # out of a run
    mods = cached_run["modules"]
    assert "serq_sim.cli" in mods  # (the run's command was loaded)
    assert "serq_sim.trace" not in mods
    # the report formats are registered (their modules imported) whatever the format: the CSV format's csv
    # module is imported when it writes
    assert "serq_report.summary_csv" in mods and "csv" not in mods
    assert ours(mods, ("serq_sweep",)) == ["serq_sweep", "serq_sweep.plugin"]


def test_a_run_reading_a_trace_still_imports_its_reader(env):
    mods = probe(["run", "examples/replay/vllm_replay.sq", "--arrivals", "5", "--no-progress"], env)["modules"]
    assert "serq_sim.trace" in mods


@pytest.mark.parametrize("which", ["cached_run", "cached_scenario"])
def test_no_pattern_of_an_error_path_is_compiled(which, request):
    # serq.jsonin's, serq_ir.codec's and serq_sim.trace's patterns serve errors and traces; serq.numbers'
    # the numbers a command line gives. A run of `--arrivals 1` reads one whole number, a scenario none
    compiled = request.getfixturevalue(which)["compiled"]
    assert [m for m in compiled if m in ("serq.jsonin", "serq_ir.codec", "serq_sim.trace")] == []
    assert [m for m in compiled if m == "serq.numbers"] == (["serq.numbers"] if which == "cached_run" else [])


def test_the_command_works_at_the_work_threshold(cached_scenario, env):
    from serq.shared import WORK_GC_THRESHOLD

    # the process's own command (the script's entry point): its work (the modules it imports, the program
    # read and checked, the run) at the threshold a compile and a run raise the collector to
    assert cached_scenario["threshold"] == WORK_GC_THRESHOLD
    # main() called as a library function keeps the caller's collector as it was: the interpreter's own first
    # threshold (700 on Python 3.11, 2 000 on 3.13)
    import subprocess
    import sys

    fresh = subprocess.run([sys.executable, "-c", "import gc; print(gc.get_threshold()[0])"], capture_output=True,
                           text=True, env=env, timeout=60)
    assert probe(SCENARIO, env, call="main")["threshold"] == int(fresh.stdout) != WORK_GC_THRESHOLD


def test_a_run_of_a_sq_program_imports_no_pathlib(cached_run):
    # serQ's own .sq loader is given the path as a str; pathlib (with urllib.parse and ipaddress) is about
    # 18 M instructions of a start-up
    assert [m for m in ("pathlib", "urllib.parse", "ipaddress") if m in cached_run["modules"]] == []


def test_a_plugins_loader_is_handed_a_pathlib_path_and_serqs_own_the_same_path_as_a_str(tmp_path, monkeypatch):
    from pathlib import Path

    import serq_frontend.cache
    import serq_ir
    from host_helpers import mm1_ir
    from serq import hookimpl
    from serq.loading import load_program
    from serq.plugins import get_plugin_manager

    program = serq_ir.load(mm1_ir(tmp_path))
    seen = []

    def load_jobs(path, options):
        seen.append(path)
        return program

    class Jobs:
        @hookimpl
        def serq_register_loaders(self, register):
            register(".jobs", load_jobs)

    def load_sq(path, **kwargs):
        seen.append(path)
        return program

    monkeypatch.setattr(serq_frontend.cache, "load", load_sq)
    pm = get_plugin_manager(plugins=[Jobs()])
    for name in ("a.jobs", "a.sq"):
        (tmp_path / name).write_text("")
        # spelled as pathlib would not keep it: both are given pathlib's spelling
        assert load_program(pm, f"{tmp_path}//./{name}") is program
    assert [(type(p), str(p)) for p in seen] == [(type(Path()), str(tmp_path / "a.jobs")),
                                                 (str, str(tmp_path / "a.sq"))]


def _without_span_keys(obj):
    if isinstance(obj, dict):
        return {k: _without_span_keys(v) for k, v in obj.items() if k != "span"}
    if isinstance(obj, list):
        return [_without_span_keys(v) for v in obj]
    return obj


@pytest.mark.parametrize("change", [{}, {"horizon": float("inf")}, {"warmup": 5.0, "horizon": float("inf")}])
def test_a_programs_ir_without_spans_is_its_ir_json_without_the_span_keys(change):
    # the report's ir_sha256 is of serq_ir.encode(program, spans=False), which reads the program's builtins
    # back without their spans (an infinity, which msgspec's builtins would write as null, through the IR's
    # own JSON): the same bytes as the IR's JSON read by Python's json, every "span" key dropped, decoded
    # and encoded again
    import msgspec
    import serq_ir
    from serq.loading import load_program
    from serq.plugins import get_plugin_manager

    program = load_program(get_plugin_manager(), str(REPO / "bench" / "vllm_single.sq"))
    program = msgspec.structs.replace(program, run=msgspec.structs.replace(program.run, **change))
    want = serq_ir.encode(serq_ir.decode(json.dumps(_without_span_keys(json.loads(serq_ir.encode(program))))))
    assert (b'"horizon":"inf"' in want) == bool(change)
    assert serq_ir.encode(program, spans=False) == want
    assert serq_ir.encode(serq_ir.strip_spans(program)) == want


def test_a_module_plugins_names_are_read_as_pluggy_reads_them():
    # serq.plugins.PluginManager passes over, without pluggy's static lookup, a module's name bound to what
    # no hook implementation can be: every answer is still pluggy's own, for serQ's plugins and for a module
    # holding every kind of thing a name may be bound to
    import functools
    import types

    import pluggy
    from serq import hookimpl
    from serq.plugins import PluginManager, get_plugin_manager

    odd = types.ModuleType("odd")

    @hookimpl
    def serq_register_commands(register):
        pass

    class Holder:
        @hookimpl
        def serq_register_loaders(self, register):
            pass

    marked = hookimpl(functools.partial(serq_register_commands))
    odd.__dict__.update(serq_register_commands=serq_register_commands, bound=Holder().serq_register_loaders,
                        static=hookimpl(staticmethod(serq_register_commands)), partial=marked, number=3,
                        cls=Holder, module=types, serq_unmarked=lambda register: None,
                        __dir__=lambda: [*odd.__dict__, "missing"])
    pm = PluginManager()
    plugins = [odd, *(p for p in get_plugin_manager().get_plugins() if isinstance(p, types.ModuleType))]
    assert len(plugins) > 5
    for plugin in plugins:
        for name in dir(plugin):
            assert pm.parse_hookimpl_opts(plugin, name) == pluggy.PluginManager.parse_hookimpl_opts(pm, plugin, name)
    assert pm.unmarked == [(odd, "serq_unmarked")]
