"""The compile cache: a hit is the fresh compile's IR, anything the compile depended on changing is a miss."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq
import serq_frontend
import serq_ir
from serq_frontend import cache
from serq_frontend.sugar import SugarLayer
from sqhelpers import EXAMPLES, ROOT, make_pm

BIN = Path(sys.executable).parent

PROGRAM = """let rate = 0.5;
stage s : fifo;
workload { arrive poisson(rate); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 100; }
"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SERQ_CACHE_DIR", str(d))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    return d


@pytest.fixture
def compiles(monkeypatch):
    """The number of real compiles (misses) so far."""
    count = [0]
    real = serq_frontend._compile

    def counting(*args, **kw):
        count[0] += 1
        return real(*args, **kw)

    monkeypatch.setattr(serq_frontend, "_compile", counting)
    return count


class Libraries:
    """Library folders given by a plugin."""

    def __init__(self, *folders: Path):
        self.folders = list(folders)

    @serq.hookimpl
    def serq_frontend_library_paths(self):
        return self.folders


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("compile-*.bin"))


def examples() -> list[Path]:
    return sorted(EXAMPLES.glob("**/*.sq")) + sorted((ROOT / "bench").glob("*.sq"))


@pytest.mark.parametrize("path", examples(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_hit_is_the_fresh_compile(folder, compiles, path):
    pm = serq.get_plugin_manager()
    fresh = serq_ir.encode(serq_frontend.compile(path, pm=pm))
    miss = cache.load(path, pm=pm)
    assert compiles[0] == 2 and len(entries(folder)) == 1
    hit = cache.load(path, pm=pm)
    assert compiles[0] == 2
    assert serq_ir.encode(miss) == fresh and serq_ir.encode(hit) == fresh
    assert hit == miss and hit.source == str(path)


def test_editing_the_program_misses(tmp_path, folder, compiles):
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM)
    pm = make_pm()
    first = cache.load(prog, pm=pm)
    cache.load(prog, pm=pm)
    assert compiles[0] == 1
    prog.write_text(PROGRAM.replace("horizon 100", "horizon 200"))
    second = cache.load(prog, pm=pm)
    assert compiles[0] == 2 and (first.run.horizon, second.run.horizon) == (100.0, 200.0)
    cache.load(prog, pm=pm)
    assert compiles[0] == 2


def test_sets_and_defs_are_part_of_the_key(tmp_path, folder, compiles):
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM.replace("~exp(1)", "service()").replace("stage s", "def service() = ~exp(1);\nstage s"))
    pm = make_pm()
    base = cache.load(prog, pm=pm)
    cache.load(prog, pm=pm)
    assert compiles[0] == 1
    other = cache.load(prog, pm=pm, sets={"rate": 0.25})
    assert compiles[0] == 2 and other != base
    assert cache.load(prog, pm=pm, sets={"rate": 0.25}) == other and compiles[0] == 2
    cache.load(prog, pm=pm, sets={"rate": 0.3})
    assert compiles[0] == 3
    erl = cache.load(prog, pm=pm, defs={"service": "~erlang(2, 2)"})
    assert compiles[0] == 4 and erl != base
    cache.load(prog, pm=pm, defs={"service": "~erlang(3, 2)"})
    assert compiles[0] == 5
    assert cache.load(prog, pm=pm, defs={"service": "~erlang(2, 2)"}) == erl and compiles[0] == 5


USER = """use "lib.sq";
stage s : fifo;
workload { arrive poisson(0.5); }
session { set t0 = now; run s (service_time()); observe response = now - t0; }
"""


def lib(value: str) -> str:
    return f"def service_time() = {value};\n"


def test_a_used_library_edited_or_shadowed_misses(tmp_path, folder, compiles):
    here, first, second = tmp_path / "prog", tmp_path / "lib1", tmp_path / "lib2"
    for d in (here, first, second):
        d.mkdir()
    prog = here / "prog.sq"
    prog.write_text(USER)
    (second / "lib.sq").write_text(lib("~exp(1)"))
    pm = make_pm(Libraries(first, second))

    def work_kind():
        program = cache.load(prog, pm=pm)
        return json.loads(serq_ir.encode(program))["session"][1]["work"]

    assert work_kind()["dist"] == "exp"
    assert work_kind()["dist"] == "exp" and compiles[0] == 1
    (second / "lib.sq").write_text(lib("~erlang(2, 1)"))  # the library used is edited
    assert work_kind()["dist"] == "erlang" and compiles[0] == 2
    assert work_kind()["dist"] == "erlang" and compiles[0] == 2
    (first / "lib.sq").write_text(lib("~uniform(0, 2)"))  # one appears earlier on the library path
    assert work_kind()["dist"] == "uniform" and compiles[0] == 3
    (here / "lib.sq").write_text(lib("~h2(1, 4)"))  # and one beside the program, earlier still
    assert work_kind()["dist"] == "h2" and compiles[0] == 4
    (here / "lib.sq").unlink()
    assert work_kind()["dist"] == "uniform" and compiles[0] == 5


def test_the_library_path_is_part_of_the_key(tmp_path, folder, compiles):
    a, b = tmp_path / "a", tmp_path / "b"
    for d, v in ((a, "~exp(1)"), (b, "~erlang(2, 1)")):
        d.mkdir()
        (d / "lib.sq").write_text(lib(v))
    prog = tmp_path / "prog.sq"
    prog.write_text(USER)
    libraries = Libraries(a)
    pm = make_pm(libraries)
    one = cache.load(prog, pm=pm)
    libraries.folders = [b]
    two = cache.load(prog, pm=pm)
    assert compiles[0] == 2 and one != two


def test_a_hit_is_validated_once_by_the_run(tmp_path, folder, compiles, monkeypatch):
    # a hit's IR is decoded without serq_ir's checks, as a fresh compile's IR is not checked: serq_sim.run
    # checks what it runs, once
    import serq_ir.validate
    import serq_sim

    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM)
    pm = serq.get_plugin_manager()
    cache.load(prog, pm=pm)
    checked = []
    real = serq_ir.validate.validate
    monkeypatch.setattr(serq_ir.validate, "validate", lambda p, **kw: checked.append(p) or real(p, **kw))
    hit = cache.load(prog, pm=pm)
    assert compiles[0] == 1 and checked == []
    serq_sim.run(hit, pm=pm)
    assert checked == [hit]


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "other key"])
def test_a_damaged_entry_is_a_miss(tmp_path, folder, compiles, damage):
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM)
    pm = make_pm()
    good = cache.load(prog, pm=pm)
    (entry,) = entries(folder)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) - 10])
    elif damage == "flip":
        i = len(data) - 20
        entry.write_bytes(data[:i] + bytes([data[i] ^ 1]) + data[i + 1:])
    elif damage == "garbage":
        entry.write_bytes(b"\x00\xff" * 100)
    elif damage == "empty":
        entry.write_bytes(b"")
    else:  # a well-formed entry of another key under this name
        other = tmp_path / "other.sq"
        other.write_text(PROGRAM.replace("0.5", "0.7"))
        cache.load(other, pm=pm)
        entry.write_bytes(next(e for e in entries(folder) if e != entry).read_bytes())
    assert cache.load(prog, pm=pm) == good
    misses = compiles[0]
    assert cache.load(prog, pm=pm) == good and compiles[0] == misses  # the entry was written again


def test_only_successful_compiles_are_kept(tmp_path, folder, compiles):
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM.replace("run s", "run nowhere"))
    pm = make_pm()
    for _ in range(2):
        with pytest.raises(serq_frontend.CompileError, match="unknown stage"):
            cache.load(prog, pm=pm)
    assert compiles[0] == 2 and entries(folder) == []


def test_the_switches(tmp_path, folder, compiles, monkeypatch):
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM)
    pm = make_pm()
    monkeypatch.setenv("SERQ_COMPILE_CACHE", "0")
    cache.load(prog, pm=pm)
    cache.load(prog, pm=pm)
    assert compiles[0] == 2 and entries(folder) == []
    monkeypatch.setenv("SERQ_COMPILE_CACHE", "1")
    monkeypatch.setenv("SERQ_CACHE_DIR", "")
    cache.load(prog, pm=pm)
    assert compiles[0] == 3 and entries(folder) == []
    monkeypatch.setenv("SERQ_CACHE_DIR", str(folder))
    cache.load(prog, pm=pm)
    cache.load(prog, pm=pm)
    assert compiles[0] == 4 and len(entries(folder)) == 1


def noisy_rewrite(module, ctx):
    print("prog.sq: note: the noisy layer was here", file=sys.stderr)
    sys.stderr.write("second line\n")
    return module


class Noisy:
    """A plugin whose sugar layer writes to stderr while compiling."""

    layer = SugarLayer(name="noisy", rewrite=noisy_rewrite)

    @serq.hookimpl
    def serq_frontend_register_sugar(self, register):
        register(self.layer)


def test_what_the_compile_wrote_to_stderr_is_written_again_on_a_hit(tmp_path, folder, compiles, capsys):
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM)
    pm = make_pm(Noisy())
    said = "prog.sq: note: the noisy layer was here\nsecond line\n"
    first = cache.load(prog, pm=pm)
    assert capsys.readouterr().err == said
    second = cache.load(prog, pm=pm)
    assert compiles[0] == 1 and capsys.readouterr().err == said and first == second
    # the layer's module is part of the entry: this file
    (entry,) = entries(folder)
    assert str(Path(__file__)) in entry.read_bytes().decode(errors="replace")


WARNS = """import warnings

import serq
from serq_frontend.sugar import SugarLayer


def rewrite(module, ctx):
    warnings.warn("the warning layer saw the program")
    return module


@serq.hookimpl(optionalhook=True)
def serq_frontend_register_sugar(register):
    register(SugarLayer(name="warns", rewrite=rewrite))
"""


def test_an_installed_plugins_python_warning_is_written_again_on_a_hit(tmp_path, folder):
    site = tmp_path / "site"
    info = site / "serq_warns-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-warns\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nwarns = serq_warns\n")
    (site / "serq_warns.py").write_text(WARNS)
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}

    def check():
        return subprocess.run([str(BIN / "serq"), "check", str(prog)], capture_output=True, text=True, env=env,
                              timeout=120)

    first = check()
    assert first.returncode == 0, first.stderr
    assert "UserWarning: the warning layer saw the program" in first.stderr
    (entry,) = entries(folder)
    assert "serq_warns" in entry.read_bytes().decode(errors="replace")  # the plugin is part of the key
    written = (entry.stat().st_ino, entry.stat().st_mtime_ns)
    second = check()
    assert (second.stdout, second.stderr) == (first.stdout, first.stderr)
    assert entries(folder) == [entry] and (entry.stat().st_ino, entry.stat().st_mtime_ns) == written  # a hit
    without = subprocess.run([str(BIN / "serq"), "check", str(prog)], capture_output=True, text=True,
                             timeout=120)
    assert without.returncode == 0 and without.stderr == ""  # another key: no warning, no replay
    assert len(entries(folder)) == 2


def test_old_entries_are_pruned(tmp_path, folder):
    folder.mkdir()
    for i in range(12):
        e = folder / f"compile-{i:040x}.bin"
        e.write_bytes(b"x")
        os.utime(e, ns=(i * 10**9, i * 10**9))
    (folder / "parser-x.lark").write_bytes(b"tables")
    cache.prune(folder, keep=12)
    assert len(entries(folder)) == 12
    cache.prune(folder, keep=8)
    assert [e.name for e in entries(folder)] == [f"compile-{i:040x}.bin" for i in range(6, 12)]
    assert (folder / "parser-x.lark").exists()


def test_the_frontend_fingerprint_follows_its_files(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "grammar").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "grammar" / "k.lark").write_text("start: 'a'\n")
    (pkg / "notes.txt").write_text("not part of it")
    before = cache._tree(str(pkg))
    assert [Path(s[0]).name for s in before[1:]] == ["a.py", "k.lark"]
    (pkg / "notes.txt").write_text("still not")
    assert cache._tree(str(pkg)) == before
    (pkg / "grammar" / "k.lark").write_text("start: 'b'\n")
    assert cache._tree(str(pkg)) != before


PROBE = """import json, sys
sys.argv = ["serq", "check", sys.argv[1]]
from serq.cli import main
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m == "lark" or m.startswith("lark.") or m in (
    "serq_frontend.parser", "serq_frontend.link", "serq_frontend.ast", "serq_frontend.context")
    or m.startswith("serq_frontend.sugar"))
print(json.dumps(heavy))
"""


def test_a_hit_imports_no_compiler(tmp_path, folder):
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM)
    env_run = [sys.executable, "-c", PROBE, str(prog)]
    first = subprocess.run(env_run, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    out, heavy = first.stdout.splitlines()
    assert out.startswith("OK:") and "lark" in json.loads(heavy) and "serq_frontend.parser" in json.loads(heavy)
    second = subprocess.run(env_run, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [out, "[]"]


RUNTIME_LIB = "def wobble(g) {\n  branch (g) { end; }\n}\n"
RUNTIME_PROG = ('use "lib.sq";\nstage s : fifo;\nworkload { arrive batch(1); }\n'
                "session {\n  set g = ~uniform(0.2, 0.8);\n  wobble(g);\n}\nrun { horizon 10; }\n")


def test_a_run_time_error_reads_the_same_after_a_hit(tmp_path, folder):
    (tmp_path / "lib.sq").write_text(RUNTIME_LIB)
    (tmp_path / "prog.sq").write_text(RUNTIME_PROG)

    def run(**env):
        return subprocess.run([str(BIN / "serq"), "run", "prog.sq", "--no-progress"], capture_output=True,
                              text=True, cwd=tmp_path, env={**os.environ, **env}, timeout=120)

    fresh = run(SERQ_COMPILE_CACHE="0")
    assert fresh.returncode == 1 and entries(folder) == []
    lines = fresh.stderr.splitlines()
    assert lines[0].startswith("lib.sq:2:3: error: at t=0, session 0: branch guard is ")
    assert lines[1:] == ["    branch (g) { end; }", "    ^", "prog.sq:6:3: note: in the expansion of `wobble`, used here",
                         "    wobble(g);", "    ^"]  # (the use, from the IR the cache kept too)
    miss = run()
    (entry,) = entries(folder)
    written = (entry.stat().st_ino, entry.stat().st_mtime_ns)
    hit = run()
    assert (entry.stat().st_ino, entry.stat().st_mtime_ns) == written  # a hit: the entry was not written again
    assert (miss.returncode, miss.stderr) == (hit.returncode, hit.stderr) == (1, fresh.stderr)
