"""The ``serq`` command: help, version, exit statuses, loading IR, malformed IR everywhere.

Tests of what a command says and its status call serq.cli.main in the test's process (serq_in_process, as a
shell runs the command); each command they cover keeps a case run as a ``serq`` child process (run_serq): help,
version, ``python -m serq``, the usage statuses, check, ir, plugins, the first malformed IR of check, ir and
run, the empty name of vllm scenario, the usage error of plot."""

from __future__ import annotations

import json
import os

import pytest
import serq
import serq_ir
from host_helpers import commands, mm1_ir, run_serq


def test_help_lists_the_commands_of_the_installed_parts():
    r = run_serq("--help")
    assert r.returncode == 0
    for cmd in ("check", "ir", "plugins"):
        assert cmd in r.stdout


def test_version():
    r = run_serq("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"serq, version {serq.__version__}"


def test_python_dash_m():
    r = run_serq("--version", module=True)
    assert r.returncode == 0 and serq.__version__ in r.stdout


def test_usage_error_is_status_2():
    assert run_serq("no-such-command").returncode == 2
    assert run_serq("check").returncode == 2
    assert run_serq("ir", "--seed", "many", "x.ir.json").returncode == 2


def test_check_an_ir_file(tmp_path):
    r = run_serq("check", str(mm1_ir(tmp_path)))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "OK: 0 pool(s), 1 stage(s), 5 attribute(s), 1 block(s)\n"


def test_ir_prints_the_program_with_overrides(tmp_path):
    r = run_serq("ir", str(mm1_ir(tmp_path)), "--seed", "9", "--horizon", "50", "--arrivals", "10")
    assert r.returncode == 0, r.stderr
    program = serq_ir.decode(r.stdout)
    assert (program.run.seed, program.run.horizon, program.run.arrivals) == (9, 50.0, 10)


def test_ir_schema():
    r = run_serq("ir", "--schema")
    assert r.returncode == 0
    assert "Program" in json.loads(r.stdout)["$defs"]


def test_plugins_json():
    r = run_serq("plugins")
    assert r.returncode == 0
    got = {p["name"]: p for p in json.loads(r.stdout)}
    assert {"host", "ir", "frontend", "sim", "report", "vllm"} <= set(got)
    assert got["ir"]["distribution"] == "serq-ir" and got["ir"]["version"] == "0.1.0"
    assert "serq_register_loaders" in got["ir"]["hooks"]
    assert "serq_register_commands" in got["host"]["hooks"]


def test_unknown_file_type(tmp_path, serq_in_process):
    p = tmp_path / "prog.txt"
    p.write_text("x")
    r = serq_in_process("check", str(p))
    assert r.returncode == 1
    assert r.stderr.startswith(f"error: {p}: unknown file type")
    assert "Traceback" not in r.stderr


# (text, message, what the caret points at: the value, or for an unknown field its key)
BAD = {
    "wrong type": ('{"version":2,"pools":[{"name":"kv","cap":"x"}]}',
                   'a number is wanted (or "-inf", "inf"), not the text "x" - at \'$.pools[0].cap\'', '"x"'),
    "wrong type 2": ('{"version":2,"pools":[{"name":7}]}', "a string is wanted, not a whole number - at '$.pools[0].name'", "7"),
    "unknown field": ('{"version":2,"colour":1}', "Object contains unknown field 'colour' - at '$.colour'",
                      '"colour"'),
    "another version": ('{"version":9}', "IR version 9 is not supported (this serq-ir reads version 2)"
                        " - at '$.version'", "9"),
    "bad reference": ('{"version":2,"attributes":[{"name":"serial"},{"name":"turn_no"},{"name":"cached"},'
                      '{"name":"computed"}],"session":[{"kind":"Set","slot":9,"value":{"kind":"Num","value":1.0}}]}',
                      "attribute slot 9 does not exist (the program has 4) - at '$.session[0].slot'", '9,"value"'),
}

COMMANDS = [("check",), ("ir",), ("run", "--no-progress")]


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_malformed_ir_is_located_and_status_1(tmp_path, serq_in_process, case, command):
    # a fault at a JSON path of an IR file is told at the value's line and column (the key's, for a field
    # the schema does not have), the line quoted and a caret under it, as a source's mistake is
    text, message, at = BAD[case]
    path = tmp_path / "bad.ir.json"
    path.write_text(text)
    serq = run_serq if case == "another version" else serq_in_process  # (a child process: one case a command)
    r = serq(command[0], str(path), *command[1:])
    assert r.returncode == 1, (r.stdout, r.stderr)
    col = text.index(at) + 1
    assert r.stderr == f"{path}:1:{col}: error: {message}\n  {text}\n  {' ' * (col - 1)}^\n"
    assert r.stdout == ""


def test_a_fault_of_a_pretty_ir_file_is_at_its_line(tmp_path, serq_in_process):
    # serq ir writes the IR one value a line: the fault's line and column there
    text = '{\n "version": 2,\n "pools": [\n  {\n   "name": "kv",\n   "cap": "x"\n  }\n ]\n}\n'
    path = tmp_path / "bad.ir.json"
    path.write_text(text)
    r = serq_in_process("check", str(path))
    assert r.returncode == 1
    assert r.stderr == (f"{path}:6:11: error: a number is wanted (or \"-inf\", \"inf\"), not the text \"x\" - at '$.pools[0].cap'\n"
                        '     "cap": "x"\n            ^\n')


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_truncated_ir_is_located_at_its_end(tmp_path, serq_in_process, command):
    path = tmp_path / "bad.ir.json"
    path.write_text('{"version":2,"pools":[')
    r = serq_in_process(command[0], str(path), *command[1:])
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stderr == (f"{path}:1:23: error: JSON is malformed: the text ends before the value does (a bracket, "
                        'a brace or a quote is missing)\n  {"version":2,"pools":[\n' + " " * 24 + "^\n")
    assert r.stdout == ""


def test_an_unwritable_output_is_one_error(tmp_path, serq_in_process):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    r = serq_in_process("run", str(mm1_ir(tmp_path)), "--no-progress", "--horizon", "50", "--dump",
                 str(blocker / "dumps"))
    assert r.returncode == 1
    assert r.stderr.startswith("error: ") and str(blocker) in r.stderr
    assert "Traceback" not in r.stderr


def test_an_observe_named_like_a_path_dumps_inside_the_folder(tmp_path, serq_in_process):
    # the IR takes any name: each is written under a file name of its own inside the folder
    r = serq_in_process("run", str(mm1_ir(tmp_path, observe="../a/b")), "--no-progress", "--horizon", "50",
                        "--dump", str(tmp_path / "d"))
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "d")) == ["%2E.%2Fa%2Fb.csv", "serq-dump.json"]
    assert (tmp_path / "d" / "%2E.%2Fa%2Fb.csv").read_text().startswith("time,session,turn,value\n")


def test_python_m_serq_loads_no_plugin_from_the_current_folder(tmp_path):
    # a folder a program came in, with a distribution beside it that names a `serq` entry point
    info = tmp_path / "planted-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: planted\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nplanted = planted_plugin\n")
    marker = tmp_path / "ran"
    (tmp_path / "planted_plugin.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    r = run_serq("plugins", module=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not marker.exists(), "python -m serq imported a plugin from the current folder"
    assert "planted" not in r.stdout
    # the same distribution on the path the user chose is a plugin as before
    r = run_serq("plugins", module=True, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert marker.exists() and "planted" in r.stdout


@pytest.mark.parametrize("command", ["run", "check", "ir"])
@pytest.mark.parametrize("flag, first, second", [("--set", "rate=0.5", "rate=0.6"),
                                                 ("--def", "svc=~exp(1)", "svc=~exp(2)")])
def test_a_name_given_twice_with_two_values_is_refused(tmp_path, serq_in_process, command, flag, first, second):
    # `--set rate=0.5 --set rate=0.6` ran with 0.6, the first silently lost
    prog = tmp_path / "p.sq"
    prog.write_text("let rate = 0.8;\ndef svc() = ~exp(1);\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
                    "session { run s (svc()); }\nrun { horizon 100; }\n")
    out = tmp_path / "r.txt"
    extra = ["-o", str(out), "--no-progress"] if command == "run" else []
    name, _, v1 = first.partition("=")
    v2 = second.partition("=")[2]
    r = serq_in_process(command, str(prog), flag, first, flag, second, *extra)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr == f"error: {flag} {name}: given twice, {v1!r} and {v2!r} (give it once)\n"
    assert r.stdout == "" and not out.exists()
    r = serq_in_process(command, str(prog), flag, first, flag, first, *extra)  # the same value twice is that value
    assert r.returncode == 0, r.stderr


def test_every_file_or_folder_a_command_takes_refuses_an_empty_name():
    # click takes '' as a path: `serq run F -o ''` printed to stdout with status 0, `--trace ''` raised
    # a traceback, `--dump ''` dumped nothing; every path parameter of every installed command is serq's
    import click
    from serq.cli import build_cli
    from serq.options import Path
    from serq.plugins import get_plugin_manager

    cli = build_cli(get_plugin_manager())
    ctx = click.Context(cli)
    found = []
    for name, cmd in commands(cli, ctx):
        for p in cmd.params:
            if isinstance(p.type, click.Path):
                found.append((name, p.name))
                assert isinstance(p.type, Path), (name, p.name)
    assert (("run",), "output") in found and (("run",), "trace") in found and (("sweep",), "out") in found
    assert len(found) >= 15


@pytest.mark.parametrize("args", [["run", "{f}", "-o", ""], ["run", "{f}", "--trace", ""],
                                  ["run", "{f}", "--dump", ""], ["run", "{f}", "--records", ""], ["run", ""],
                                  ["check", ""], ["vllm", "scenario", ""]])
def test_an_empty_name_is_a_usage_error(tmp_path, serq_in_process, monkeypatch, args):
    f = mm1_ir(tmp_path)
    before = sorted(os.listdir(tmp_path))
    monkeypatch.chdir(tmp_path)  # (the child process's folder: no file is written there)
    serq = run_serq if args[0] == "vllm" else serq_in_process  # (vllm scenario as a child process)
    r = serq(*[a.format(f=f) for a in args])
    assert r.returncode == 2, r
    assert "an empty name names no file" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""
    assert sorted(os.listdir(tmp_path)) == before


#: ``serq --version`` called in a process that then leaves cyclic garbage with a finalizer behind, and says at
#: the very end (an atexit function registered before main's, so run after it) whether the collector is frozen
EXIT_PROBE = """import atexit, gc, sys
atexit.register(lambda: print(f"frozen: {gc.get_freeze_count() > 0}"))
class Dropped:
    def __del__(self):
        print("finalized")
from serq.cli import main
sys.argv = ["serq", "--version"]
try:
    main()
except SystemExit as e:
    print(f"status {e.code}")
d = Dropped()
d.me = d
del d
"""


def test_the_exit_collects_the_garbage_then_freezes_the_rest():
    # serq.cli's atexit function: the garbage is collected (its finalizers run, as at the interpreter's own
    # shutdown), what is left is frozen (the shutdown does not take the modules apart through the collector)
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", EXIT_PROBE], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1:] == ["status 0", "finalized", "frozen: True"], r.stdout


@pytest.mark.parametrize("args, line", [
    (["run", "{f}", "--horizon", "nan"],
     "error: invalid value for '--horizon': nan is not a positive number of seconds, or inf (see 'serq run --help')"),
    (["run", "{f}", "--horizn", "5"], "error: no such option '--horizn'. Did you mean '--horizon'? (see 'serq run --help')"),
    (["run"], "error: missing argument 'FILE' (see 'serq run --help')"),
    (["runn", "{f}"], "error: no such command 'runn'. Did you mean 'run'? (see 'serq --help')"),
    (["run", "{f}", "extra"], "error: got unexpected extra argument (extra) (see 'serq run --help')"),
])
def test_a_usage_error_is_one_line(tmp_path, serq_in_process, args, line):
    # every error of serq's is one line: click's usage errors were three (Usage, Try, Error: with a capital)
    f = str(mm1_ir(tmp_path))
    serq = run_serq if args[0] == "plot" else serq_in_process  # (plot as a child process)
    r = serq(*[a.format(f=f, d=tmp_path) for a in args])
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr == line.format(d=tmp_path) + "\n", r.stderr


#: the collector while the command line is assembled (build_cli) and after the command, for the process's
#: entry point (entry) and for main called as a library function
START_PROBE = """import gc, sys
from serq import cli
seen = []
built = cli.build_cli
def spy(pm=None):
    seen.append(gc.isenabled())
    return built(pm)
cli.build_cli = spy
sys.argv = ["serq", "plugins"]
try:
    cli.{call}()
except SystemExit as e:
    print(f"status {{e.code}}", file=sys.stderr)
print(f"during {{seen[0]}} after {{gc.isenabled()}} frozen {{gc.get_freeze_count() > 1000}}", file=sys.stderr)
"""


@pytest.mark.parametrize("call, line", [
    # the process's own command: off while start-up imports and registers (its objects are frozen after),
    # on for the command's work
    ("entry", "during False after True frozen True"),
    # a library call keeps the caller's collector as it was
    ("main", "during True after True frozen False"),
])
def test_the_collector_at_start_up(call, line):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", START_PROBE.format(call=call)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == ["status 0", line], r.stderr
