"""A file name, or a command-line text, that is not UTF-8 never reaches serq's text outputs as it is.

Python gives a name's (or an argument's) bytes that are not UTF-8 as lone surrogates, which UTF-8 cannot
encode. ``caf\\xe9.sq`` (saved under a Latin-1 locale) opened, compiled, and its name went into the IR (the
program's ``source`` and every span): ``serq check`` (the compile cache's entry), ``run``, ``ir``, ``sweep``
and ``vllm target`` ended in a ``UnicodeEncodeError`` traceback; a sweep over two IR files, one so named,
ran every run and then failed writing its table (the ``program`` column); ``serq run x\\xff.ir.json --json``
failed after the run (the report records the program's path); and ``--def 's=~exp(1) // \\xff'`` compiled
and failed the same way in the JSON report and a sweep's table.

Now: a program or library so named is one compile error (the IR names it: rename it; ``serq fmt`` and
``serq ast`` still read it), a sweep's or comparison's program so named is refused before any run, the JSON
report writes such a path as ``ls -b`` does (``x\\xff.ir.json``), and a text handed over in memory (a
``--def`` body, ``compile(source=…)``) that is not UTF-8 is an error at its line and column, as a file's
byte that is not UTF-8 is (serq.files.name_not_text, shown_name; serq_frontend.diagnostics.check_unicode).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq.files import name_not_text, shown_name

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = b"""let lam = 0.5;
def service() = ~exp(1);
stage svc : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run svc (service()); observe resp = now - t0; end; }
run { horizon 200; seed 1; }
"""
LATIN = os.fsdecode(b"caf\xe9")  # the name of a file saved under a Latin-1 locale, as Python gives it


def _serq(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, errors="replace", cwd=cwd,
                          timeout=120, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def test_the_helpers():
    assert name_not_text("p.sq") is None and name_not_text("服务.sq") is None
    assert name_not_text(LATIN + ".sq") == "the file's name is not UTF-8 text (byte 0xE9)"
    assert shown_name(LATIN + ".sq") == "caf\\xe9.sq" and shown_name("服务.sq") == "服务.sq"


@pytest.mark.parametrize("cache", ["1", "0"])
@pytest.mark.parametrize("command", [["check"], ["run", "--no-progress"], ["ir"], ["vllm", "target"],
                                     ["sweep", "--workers", "0", "--no-progress"]])
def test_a_program_so_named_is_one_error(tmp_path, command, cache):
    (tmp_path / (LATIN + ".sq")).write_bytes(PROGRAM)
    r = _serq(tmp_path, *command, LATIN + ".sq", env={"SERQ_COMPILE_CACHE": cache})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.stderr.startswith("error: caf\\xe9.sq: the file's name is not UTF-8 text (byte 0xE9), and a "
                               "program's IR names its files as text; rename it"), r.stderr
    assert r.stdout == ""


def test_fmt_and_ast_still_read_it(tmp_path):
    (tmp_path / (LATIN + ".sq")).write_bytes(PROGRAM)
    assert _serq(tmp_path, "fmt", "--check", LATIN + ".sq").returncode == 0
    r = _serq(tmp_path, "ast", LATIN + ".sq")
    assert r.returncode == 0 and json.loads(r.stdout)


def test_a_library_so_named_is_an_error_at_its_use(tmp_path):
    lib = tmp_path / (LATIN + "_lib")
    lib.mkdir()
    (lib / "z.sq").write_text("def fz() = 2;\n")
    (tmp_path / "p.sq").write_text('use "z.sq";\nstage s : fifo;\nworkload { arrive poisson(1); }\n'
                                   "session { run s (fz()); end; }\nrun { horizon 10; }\n")
    r = _serq(tmp_path, "check", "p.sq", env={"SERQ_PATH": str(lib)})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    first, quoted, caret = r.stderr.splitlines()
    assert first.startswith("p.sq:1:1: error: ") and "caf\\xe9_lib/z.sq: the file's name is not UTF-8" in first
    assert (quoted, caret) == ('  use "z.sq";', "  ^")


def test_a_sweep_over_a_program_so_named_is_refused_before_any_run(tmp_path):
    (tmp_path / "p.sq").write_bytes(PROGRAM)
    ir = _serq(tmp_path, "ir", "p.sq").stdout
    (tmp_path / "a.ir.json").write_text(ir)
    (tmp_path / (LATIN + ".ir.json")).write_text(ir)
    for command in (["sweep", "-o", "t.csv"], ["compare"]):
        r = _serq(tmp_path, *command, LATIN + ".ir.json", "a.ir.json", "--workers", "0", "--no-progress")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
        assert r.stderr == ("error: caf\\xe9.ir.json: the file's name is not UTF-8 text (byte 0xE9), and the "
                            "table of a sweep (or a comparison) names each of its programs as text; rename it\n")
        assert not (tmp_path / "t.csv").exists() and not (tmp_path / "t.csv.journal").exists()
    # one program alone is no axis: it runs
    r = _serq(tmp_path, "sweep", LATIN + ".ir.json", "--workers", "0", "--no-progress")
    assert r.returncode == 0, r.stderr[-3000:]


def test_the_json_report_writes_such_a_path_as_ls_does(tmp_path):
    (tmp_path / "p.sq").write_bytes(PROGRAM)
    (tmp_path / (LATIN + ".ir.json")).write_text(_serq(tmp_path, "ir", "p.sq").stdout)
    r = _serq(tmp_path, "run", LATIN + ".ir.json", "--no-progress", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert json.loads(r.stdout)["program"]["path"] == "caf\\xe9.ir.json"


def test_a_def_that_is_not_utf8_is_an_error_at_its_byte(tmp_path):
    (tmp_path / "p.sq").write_bytes(PROGRAM)
    body = "service=~exp(1) // " + os.fsdecode(b"\xff")
    for command in (["run", "--json", "--no-progress"], ["sweep", "--workers", "0", "--no-progress"]):
        r = _serq(tmp_path, *command, "p.sq", "--def", body)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
        assert r.stderr.splitlines()[:3] == ["--def service:1:12: error: the text is not UTF-8 (byte 0xFF)",
                                             "  ~exp(1) // \\xff", "             ^"]


def test_source_text_with_a_lone_surrogate_is_an_error_where_it_stands():
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source="stage s : fifo;\n// x \udcff\n")
    assert str(e.value).splitlines() == ["<source>:2:6: error: the text is not UTF-8 (byte 0xFF)", "  // x \\xff",
                                         "       ^"]
    with pytest.raises(serq_frontend.CompileError, match=r"<source>:1:24: error: the text holds U\+D800, a "
                                                         "lone surrogate, which is no character"):
        serq_frontend.compile(source='stage s : fifo; trace "\ud800.csv";')
    with pytest.raises(serq_frontend.CompileError, match=r"defs\['service'\]:1:3: error: the text is not UTF-8"):
        serq_frontend.compile(source=PROGRAM.decode(), defs={"service": "1 \udcff"})
    assert serq_frontend.compile(source=PROGRAM.decode(), defs={"service": "1 // 服务"}) is not None
