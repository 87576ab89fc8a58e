"""Numbers typed on the command line, and a trace's cells, are read in serQ's number syntax (serq.numbers:
the language's numeric literal, digits 0-9 with an optional decimal point and exponent, or inf, after an
optional -). Python's float() and int() read them before and took more: `--set g=1_000` was 1000,
`--horizon ١٢` (Arabic-Indic digits) and `１２` (fullwidth) were 12, `+5` was 5, `Infinity` was inf and
spaces around a value were dropped. Each is now refused with one message naming the option and the value,
as a usage error, status 2 (serq.errors.UsageError: --set too, which exited 1 before the one rule), without
a traceback; the forms the docs show still work.

What a refusal says and its status are checked on serq.cli.main in the test's process (serq_in_process, as a
shell runs the command); the first value of each command's --set refusals, the --def test and the plain
trace run the command as a child process, as a shell does, so each of run, check and ir is proven there."""

from __future__ import annotations

import json

import pytest
from host_helpers import mm1_ir, run_serq
from serq.numbers import BLANKS_HINT, NUMBER_HINT, WHOLE_HINT, NotANumber, number, whole

PROGRAM = ("let g = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\nsession { observe x = g; run s (1); }\n"
           "run { horizon 5; }\n")
LOOSE = ["1_000", "\u0661\u0662", "\uff11\uff12", "+5", " 5", "5 ", "Infinity", "INF", "1e1_0", "\u00a05"]


def _hint(value: str) -> str:
    """The hint a refusal of ``value`` gives: a number with blanks around it is told so, with the number
    (round 38: ``--slo 'ttft=1 '``); Python's other readings the number rule."""
    return f"{BLANKS_HINT}: {value.strip(' ')}" if value.strip(" ") != value else NUMBER_HINT


def _program(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    return str(p)


def _refused(r, status: int, *parts: str) -> None:
    assert r.returncode == status, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    for part in parts:
        assert part in r.stderr, r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("text, value", [("8010", 8010.0), ("0.5", 0.5), (".5", 0.5), ("3.", 3.0), ("2e-5", 2e-5),
                                         ("1e9", 1e9), ("1E+3", 1000.0), ("-3", -3.0), ("inf", float("inf")),
                                         ("-inf", float("-inf")), ("1e308", 1e308), ("007", 7.0)])
def test_the_syntax_reads_the_languages_literals(text, value):
    assert number(text) == value


@pytest.mark.parametrize("text", [*LOOSE, "", "x", "1.2.3", "nan", "0x10", "--1", "1e", "e5", "."])
def test_anything_else_is_not_a_number(text):
    with pytest.raises(NotANumber) as e:
        number(text)
    assert str(e.value).startswith(f"{text!r} is not a number")
    try:  # the hint at the rule where Python would have read it
        float(text)
        assert str(e.value).endswith(f" ({_hint(text)})")
    except ValueError:
        assert str(e.value) == f"{text!r} is not a number"


def test_nan_only_where_asked_for():
    for text in ("nan", "NaN", "-nan"):
        assert number(text, nan=True) != number(text, nan=True)
    with pytest.raises(NotANumber):
        number("+nan", nan=True)


def test_whole_numbers():
    assert whole("42") == 42 and whole("-3") == -3 and whole("0") == 0
    for text in ("1_000", "\u0661", "+5", " 5", "1.0", "1e3", ""):
        with pytest.raises(NotANumber) as e:
            whole(text)
        assert str(e.value).startswith(f"{text!r} is not a whole number")
    with pytest.raises(NotANumber) as e:
        whole("1_000")
    assert str(e.value) == f"'1_000' is not a whole number ({WHOLE_HINT})"


@pytest.mark.parametrize("value", LOOSE)
@pytest.mark.parametrize("opt", ["--horizon", "--warmup", "--max-wall"])
def test_a_number_option_refuses_it_naming_the_option_and_the_value(tmp_path, serq_in_process, opt, value):
    r = serq_in_process("run", str(mm1_ir(tmp_path)), "--no-progress", opt, value)
    _refused(r, 2, f"error: invalid value for '{opt}': {value!r} is not a number ({_hint(value)}) (see 'serq run "
                   "--help')")


@pytest.mark.parametrize("value", ["1_000", "\u0661\u0662", "\uff11\uff12", "+5", " 5"])
@pytest.mark.parametrize("cmd, opt", [("run", "--seed"), ("run", "--arrivals"), ("run", "--max-events"),
                                      ("run", "--max-samples"), ("ir", "--seed"), ("ir", "--arrivals")])
def test_a_whole_number_option_refuses_it(tmp_path, serq_in_process, cmd, opt, value):
    r = serq_in_process(cmd, str(mm1_ir(tmp_path)), opt, value)
    hint = f"{BLANKS_HINT}: {value.strip(' ')}" if value.strip(" ") != value else WHOLE_HINT
    _refused(r, 2, f"error: invalid value for '{opt}': {value!r} is not a whole number ({hint}) (see "
                   f"'serq {cmd} --help')")


@pytest.mark.parametrize("value", LOOSE)
@pytest.mark.parametrize("cmd", ["run", "check", "ir"])
def test_a_set_refuses_it_at_status_2(tmp_path, serq_in_process, cmd, value):
    serq = run_serq if value == LOOSE[0] else serq_in_process  # (a child process for one value a command)
    r = serq(cmd, _program(tmp_path), "--set", f"g={value}")
    _refused(r, 2, "error: --set g=", f": {value!r} is not a number ({_hint(value)})")  # (the value as typed
    # is printed with what does not print escaped: g=\xa05)


@pytest.mark.parametrize("value", ["1_0", "\u0661", "+1", " 1"])
def test_an_slo_refuses_it(tmp_path, serq_in_process, value):
    r = serq_in_process("run", _program(tmp_path), "--no-progress", "--slo", f"ttft={value}")
    # the part as given, its blanks too (it was quoted stripped, 'ttft=1' for 'ttft=1 ')
    hint = f"{BLANKS_HINT}: --slo ttft={value.strip(' ')}" if value.strip(" ") != value else NUMBER_HINT
    _refused(r, 2, f"invalid value for --slo: {'ttft=' + value!r}: {value!r} is not a number of seconds ({hint})")


def test_a_definitions_body_is_read_by_the_language_whose_digits_are_ascii(tmp_path):
    # --def's body is an expression of the language, whose literal was /\d+.../: every script's digits
    src = tmp_path / "d.sq"
    src.write_text("def service() = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\n"
                   "session { run s (service()); }\nrun { horizon 5; }\n")
    r = run_serq("check", str(src), "--def", "service=\u0661\u0662")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("--def service:1:1: error: unexpected character `\u0661`"), r.stderr
    assert run_serq("check", str(src), "--def", "service=12").returncode == 0


@pytest.mark.parametrize("args", [
    ("--horizon", "1e9", "--arrivals", "2"), ("--horizon", "inf", "--arrivals", "2"), ("--horizon", "600"),
    ("--warmup", "0"), ("--warmup", "0.5"), ("--max-wall", "30"), ("--seed", "0"), ("--seed", "18446744073709551615"),
    ("--max-events", "1000000"), ("--max-samples", "5000"),
    ("--set", "g=-3"), ("--set", "g=inf"), ("--set", "g=3."), ("--set", "g=.5"), ("--set", "g=1e-308"),
    ("--set", "g=2E+3"),
])
def test_the_forms_the_docs_show_still_work(tmp_path, serq_in_process, args):
    r = serq_in_process("run", _program(tmp_path), "--no-progress", "--json", *args)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("slo", ["ttft=1,tpot=0.05", "e2el=inf", "ttft=.5"])
def test_the_slos_the_docs_show_still_read(tmp_path, serq_in_process, slo):
    # read, then refused for what the program is (it records no requests), not for the numbers
    r = serq_in_process("run", _program(tmp_path), "--no-progress", "--slo", slo)
    assert r.returncode == 1 and r.stderr.startswith("error: --slo: the program records no requests"), r.stderr


@pytest.mark.parametrize("value, want", [("-3", -3.0), ("2e3", 2000.0), (".5", 0.5), ("1E+1", 10.0)])
def test_a_set_value_reaches_the_program(tmp_path, serq_in_process, value, want):
    r = serq_in_process("run", _program(tmp_path), "--no-progress", "--json", "--set", f"g={value}")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["observes"]["x"]["mean"] == want


TRACE_PROGRAM = ('stage d : delay;\nworkload { arrive batch(2); trace "t.csv"; }\n'
                 "session { turn; observe n = new; run d (1); }\nrun { horizon 10; }\n")


@pytest.mark.parametrize("cell, col", [("1_000", 5), ("\u0661\u0662", 5), ("+5", 5), ("\u00a05", 5)])
def test_a_trace_cell_python_would_read_is_refused_at_its_line_and_column(tmp_path, serq_in_process, monkeypatch,
                                                                          cell, col):
    (tmp_path / "p.sq").write_text(TRACE_PROGRAM)
    (tmp_path / "t.csv").write_text(f"session,turn,new,out,think,forced\n0,1,100,5,0,0\n1,1,{cell},5,0,0\n")
    monkeypatch.chdir(tmp_path)  # (in the program's folder, as the child process ran)
    r = serq_in_process("run", "p.sq", "--no-progress")
    # the line quoted under it (a no-break space, which does not print, as \u00a0) with a caret under the
    # cell, after "1,1," (4 characters)
    shown = cell.replace("\u00a0", "\\u00a0")
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert r.stderr == (f"t.csv:3:{col}: error: column new: {cell!r} is not a number ({NUMBER_HINT})\n"
                        f"  1,1,{shown},5,0,0\n  {' ' * (col - 1)}^\n")


def test_a_trace_of_plain_numbers_still_reads(tmp_path):
    # spaces and tabs around a cell are CSV's layout; an exponent may carry a + (printf's %e); another
    # column may hold any text (its _ and non-ASCII letters make the reader check every cell: same answer)
    (tmp_path / "p.sq").write_text(TRACE_PROGRAM)
    for extra in ("", ",note"):
        rows = ["0,1, 100,5,0,0", "1,1,\t1.5e+02 ,5,0,0"]
        text = "session,turn,new,out,think,forced" + extra + "\n" + "".join(
            r + (",caf\u00e9_x" if extra else "") + "\n" for r in rows)
        (tmp_path / "t.csv").write_text(text, encoding="utf-8")
        r = run_serq("run", "p.sq", "--no-progress", "--json", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["observes"]["n"]["mean"] == 125.0
