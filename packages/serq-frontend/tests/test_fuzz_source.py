"""Fuzzing the source: the examples' and the library's .sq text mutated (tokens deleted, duplicated, swapped
or replaced; numbers replaced by 0, -1, 1e308, 1e400, inf, nan…; names by other names, keywords, unknown
ones; operators and brackets inserted; lines deleted, duplicated, swapped; random characters; truncation).
``serq_frontend.compile(source=...)`` returns IR or raises CompileError, whose message starts with
``<source>:LINE:COL: error:`` (or a used library file's name and position); nothing else may escape. What compiles runs for
a short while (a small horizon, few arrivals, a CPU-time guard): a report or a SimError, nothing else.
The CLI part checks that ``serq check``/``serq run`` on mutated sources exit 1 with one message (its
position, the source line and a caret) and no traceback.

Deterministic (``derandomize=True``). ``SERQ_FUZZ_EXAMPLES=N`` runs N examples per test instead of the
default, to search further (``SERQ_FUZZ_SEED=S`` draws other ones: seeded, not derandomized), e.g.::

    SERQ_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest -q -p no:cacheprovider \\
        packages/serq-frontend/tests/test_fuzz_source.py
"""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from hypothesis import given
from hypothesis import strategies as st
from sqhelpers import EXAMPLES, LIB, ROOT, _pm

# the run guard and the fuzz settings are the IR fuzz test's (serq-sim's tests)
sys.path.insert(0, str(ROOT / "packages" / "serq-sim" / "tests"))
from fuzzir import RUN_CPU, Chooser, OverTime, bounded, capped, cpu_limit, fuzz_seed, fuzz_settings, shortened  # noqa: E402

PATHS = sorted(EXAMPLES.rglob("*.sq")) + sorted((ROOT / "bench").glob("*.sq")) + sorted(LIB.glob("*.sq"))
SOURCES = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in PATHS}
NAMES = sorted(SOURCES)


#: the simulated time and arrivals a compiled mutant runs for at most, and the CPU-time guard of one run

TOKEN = re.compile(r"//[^\n]*|\"[^\"\n]*\"|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|[A-Za-z_]\w*"
                   r"|<=|>=|==|!=|&&|\|\||\S")
NUMBER = re.compile(r"\.?\d")
WORD = re.compile(r"[A-Za-z_]\w*")
NUMBERS = ["0", "0.0", "1", "-1", "0.5", "2", "3", "1e308", "1e400", "1e-400", "inf", "-inf", "nan",
           "99999999999999999999", "1e15", "0.1e-5", "1.", "007"]
KEYWORDS = ["let", "def", "use", "pool", "stage", "workload", "session", "queue", "run", "share", "gauge",
            "cap", "block", "evict", "preempt", "admit", "via", "spill", "when", "fifo", "ps", "delay", "step",
            "budget", "cost", "chunk", "serve", "memory", "arrive", "trace", "init", "turn", "hidden", "request",
            "set", "observe", "hold", "reserve", "reuse", "at", "cache", "lease", "grow", "drop", "release",
            "load", "growing", "branch", "with", "else", "loop", "choose", "in", "by", "end", "mark", "prefill",
            "decode", "transfer", "tool", "on", "from", "to", "pull", "latency", "nic", "now", "present",
            "tokens", "position", "admission", "serial", "cached", "computed", "min", "max", "sum", "lru",
            "lifo", "poisson", "renewal", "closed", "batch", "exp", "erlang", "h2", "bernoulli", "used",
            "budget_left", "price", "blocksize", "horizon", "warmup", "seed", "arrivals", "servers", "zzz"]
OPERATORS = ["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "!", "?", ":", "~", "(",
             ")", "{", "}", "[", "]", ";", ",", ".", "=", "#", "\"", "'", "\\", "\t", "\n", "\u00e9", "\x00"]


def split(text: str) -> list[list[str]]:
    """``[token, text after it]`` pairs (the text before the first token is the first pair's ``""`` token)."""
    out = [["", ""]]
    pos = 0
    for m in TOKEN.finditer(text):
        out[-1][1] += text[pos:m.start()]
        out.append([m.group(), ""])
        pos = m.end()
    out[-1][1] += text[pos:]
    return out


def join(toks: list[list[str]]) -> str:
    return "".join(t + gap for t, gap in toks)


OPS = ["delete", "duplicate", "swap", "replace", "number", "number", "number", "name", "name", "operator",
       "lines", "chars", "truncate"]


def mutate_once(c: Chooser, text: str) -> str:
    op = c.pick(OPS)
    toks = split(text)
    if op in ("delete", "duplicate", "swap", "replace", "number", "name", "operator") and len(toks) > 1:
        if op == "number":
            cands = [i for i, (t, _) in enumerate(toks) if NUMBER.match(t)]
        elif op == "name":
            cands = [i for i, (t, _) in enumerate(toks) if WORD.fullmatch(t)]
        else:
            cands = list(range(1, len(toks)))
        if not cands:
            return text
        i = c.pick(cands)
        if op == "delete":
            toks[i][0] = ""
        elif op == "duplicate":
            toks.insert(i, [toks[i][0], " "])
        elif op == "swap":
            j = c.int(1, len(toks) - 1)
            toks[i][0], toks[j][0] = toks[j][0], toks[i][0]
        elif op == "replace":
            toks[i][0] = c.pick(toks[1:])[0]
        elif op == "number":
            toks[i][0] = c.pick(NUMBERS)
        elif op == "name":
            words = [t for t, _ in toks if WORD.fullmatch(t)]
            toks[i][0] = c.pick(words) if c.int(0, 1) else c.pick(KEYWORDS)
        else:
            toks[i][0] = c.pick(OPERATORS) + (" " if c.int(0, 1) else "") + toks[i][0]
        return join(toks)
    if op == "lines":
        lines = text.split("\n")
        i, j = c.int(0, len(lines) - 1), c.int(0, len(lines) - 1)
        how = c.int(0, 2)
        if how == 0:
            del lines[i]
        elif how == 1:
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)
    if op == "chars":
        i = c.int(0, len(text))
        raw = "".join(chr(c.int(0, 0x24F)) for _ in range(c.int(1, 3)))
        return text[:i] + raw + text[i:]
    return text[: c.int(0, len(text))]


def mutate(c: Chooser) -> tuple[str, str]:
    name = c.pick(NAMES)
    text = SOURCES[name]
    for _ in range(c.int(1, 3)):
        text = mutate_once(c, text)
    return name, text


# -- hostile programs: deep nesting, huge sizes, long aggregates, bytes that are not UTF-8 -----------------------

#: nesting depths around the limits (blocks 32, expressions 64, Python's 20 blocks and ~100 parentheses, the
#: parsed program's 1 000)
DEPTHS = [1, 2, 8, 9, 20, 21, 31, 32, 33, 63, 64, 65, 100, 200, 999, 1000, 1001, 2500]
#: family sizes and aggregate counts around the limits (100 000 pools or stages, 10 000 terms) and far out
SIZES = ["1", "2", "200", "1000", "9999", "10000", "10001", "1e5", "100000", "100001", "1e9", "1e20", "1e308",
         "1e400", "inf", "nan", "0", "-1", "0.5", "99999999999999999999"]
HUGE = ["1e308", "-1e308", "1e-308", "5e-324", "1e400", "1e20", "0", "inf", "nan", "99999999999999999999"]
BAD_BYTES = [b"\x80", b"\xff", b"\xfe", b"\xc0\x80", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xe2\x82",
             b"\xf4\x90\x80\x80"]

HOSTILE = """let N = {n};
let C = {cap};
stage svc{sfam} : fifo;
pool kv{pfam} {{ cap C; }}
{defs}
workload {{ arrive poisson({rate}); }}

session {{
  set y = ~exp(1);
{body}
  end;
}}

run {{ horizon 30; }}
"""


def _deep_expr(c: Chooser, depth: int) -> str:
    shape = c.pick(["neg", "paren", "add", "cond", "call", "draw", "agg", "mixed"])
    e = "y"
    for _ in range(depth):
        k = c.pick(["neg", "paren", "add", "cond", "call", "draw", "agg"]) if shape == "mixed" else shape
        e = {"neg": "-{}", "paren": "({})", "add": "({} + 1)", "cond": "(y > 0 ? {} : 1)", "call": "abs({})",
             "draw": "~det({})", "agg": "max j in 2 ({})"}[k].format(e)
    return e


def _deep_block(c: Chooser, depth: int, inner: str) -> str:
    shape = c.pick(["loop {", "hold kv{i} (1) {", "branch (y > 0.5) {", "mixed"])
    opens = [c.pick(["loop {", "hold kv{i} (1) {", "branch (y > 0.5) {"]) if shape == "mixed" else shape
             for _ in range(depth)]
    closes = ["end; }" if o == "loop {" else "}" for o in reversed(opens)]
    return "\n".join([*opens, inner, *closes])


SHAPES = ["blocks", "blocks", "expr", "expr", "defs", "def-blocks", "agg", "work", "doubling", "aggs"]


def hostile(c: Chooser, shape: str | None = None, depth: int | None = None) -> str:
    """A program of one hostile shape: blocks or an expression nested ``DEPTHS`` deep (also through
    ``def``s), defs that use the one before twice (2**depth nodes written out), a long or nested aggregate,
    many aggregates, a huge family, cap, rate or work."""
    fam = c.int(0, 2)
    n = c.pick(SIZES) if fam else "1"
    sfam, pfam = ("[N]" if fam in (1, 2) and c.int(0, 1) else ""), ("[N]" if fam == 2 else "")
    idx = "[N - 1]" if c.int(0, 1) else "[0]"
    fill = {"n": n, "cap": c.pick(HUGE + ["100"]) if c.int(0, 2) == 0 else "100",
            "sfam": sfam, "pfam": pfam, "defs": "",
            "rate": c.pick(HUGE) if c.int(0, 5) == 0 else "1"}
    run = f"run svc{idx if sfam else ''} (0.01);"
    shape = shape or c.pick(SHAPES)
    depth = depth or c.pick(DEPTHS)
    if shape == "blocks":
        body = _deep_block(c, depth, run)
    elif shape == "expr":
        body = f"set x = {_deep_expr(c, depth)};\n{run}\nobserve o = x;"
    elif shape == "defs":  # an expression that nests only once the defs are expanded
        fill["defs"] = "def f0(a) = a;\n" + "".join(
            f"def f{k}(a) = {c.pick(['-f{}(a)', 'f{}(a) + 1', 'abs(f{}(a))', '(a > 0 ? f{}(a) : 1)'])};\n"
            .format(k - 1) for k in range(1, depth + 1))
        body = f"set x = f{depth}(y);\n{run}\nobserve o = x;"
    elif shape == "def-blocks":  # blocks that nest only once the defs are expanded
        fill["defs"] = f"def g0() {{ {run} }}\n" + "".join(
            f"def g{k}() {{ " + c.pick(["loop {{ g{p}(); end; }}", "branch (y > 0.5) {{ g{p}(); }}",
                                        "hold kv{{i}} (1) {{ g{p}(); }}"]).format(p=k - 1) + " }\n"
            for k in range(1, depth + 1))
        body = f"g{depth}();"
    elif shape == "doubling":  # each def uses the one before twice: 2**depth nodes once written out
        if c.int(0, 1):
            fill["defs"] = "def f0(a) = a;\n" + "".join(
                f"def f{k}(a) = {c.pick(['f{p}(a) + f{p}(a)', 'max(f{p}(a), f{p}(a))', '(a > 0 ? f{p}(a) : f{p}(a))'])};\n"
                .format(p=k - 1) for k in range(1, depth + 1))
            body = f"set x = f{depth}(y);\n{run}\nobserve o = x;"
        else:
            fill["defs"] = f"def g0() {{ {run} }}\n" + "".join(
                f"def g{k}() {{ " + c.pick(["g{p}(); g{p}();", "branch (y > 0.5) {{ g{p}(); }} g{p}();",
                                            "loop {{ g{p}(); g{p}(); end; }}"]).format(p=k - 1) + " }\n"
                for k in range(1, depth + 1))
            body = f"g{depth}();"
    elif shape == "aggs":  # many aggregates, each within its limit
        m = c.pick(["100", "1000", "10000"])
        body = "".join(f"set x{k} = sum j in {m} (y * j + {k});\n" for k in range(c.pick([1, 4, 5, 20, 100])))
        body += f"{run}\nobserve o = x0;"
    elif shape == "agg":
        agg = c.pick(["sum", "max", "min"])
        m = c.pick(SIZES)
        inner = c.pick(["y * j", f"{agg} i in {c.pick(['2', '100', '1000', '10000'])} (y * i + j)", "j"])
        body = f"set x = {agg} j in {m} ({inner});\n{run}\nobserve o = x;"
    else:
        body = f"run svc{idx if sfam else ''} ({c.pick(HUGE)});\nhold kv{idx if pfam else ''} ({c.pick(HUGE)}) {{ {run} }}"
    return HOSTILE.format(**fill, body=body).replace("kv{i}", "kv[0]" if pfam else "kv")


def bad_bytes(c: Chooser, data: bytes) -> bytes:
    for _ in range(c.int(1, 3)):
        i = c.int(0, len(data))
        data = data[:i] + c.pick(BAD_BYTES) + data[i:]
    return data


# -- judging --------------------------------------------------------------------------------------------------

DIAGNOSTIC = re.compile(r"^(.+?):(\d+):(\d+): error: ")


def check_diagnostic(e: Exception, src: str) -> None:
    msg = str(e)
    lines = msg.split("\n")
    assert "Traceback" not in msg, msg
    m = DIAGNOSTIC.match(lines[0])
    assert m, f"no position in the diagnostic: {msg!r}"
    if m.group(1) == "<source>":  # else a library file the source uses
        line, col = int(m.group(2)), int(m.group(3))
        assert 1 <= line <= src.count("\n") + 1, msg
        text = src.split("\n")[line - 1].rstrip("\r")  # the line quoted, the caret under col
        # nothing unprintable: a tab a space, a control character below 0x80 \xNN, any other \uNNNN (docs/language.md)
        shown = [" " if ch == "\t" else ch if ch.isprintable() else f"\\x{ord(ch):02x}" if ord(ch) < 0x80
                 else f"\\u{ord(ch):04x}" for ch in text]
        assert all(ch == "\n" or ch.isprintable() for ch in msg), msg
        if len(text) <= 200:  # a longer line is cut around the caret (test_diagnostics.py)
            at = len("".join(shown[: max(1, min(col, len(text) + 1)) - 1]))
            assert lines[1:3] == ["  " + "".join(shown), "  " + " " * at + "^"], msg


def outcome(src: str) -> str:
    """``"compile-error"``, ``"sim-error"``, ``"report"`` or ``"slow"``; anything else propagates."""
    try:
        with bounded("the compile"):
            program = serq_frontend.compile(source=src, pm=_pm())
    except serq_frontend.CompileError as e:
        check_diagnostic(e, src)
        return "compile-error"
    serq_sim = pytest.importorskip("serq_sim")
    serq_report = pytest.importorskip("serq_report")
    try:
        with cpu_limit(RUN_CPU):
            report = serq_sim.run(shortened(program))
            serq_report.text_reporter(report, io.StringIO())
            serq_report.json_reporter(report, io.StringIO())
    except OverTime:
        return "slow"
    except Exception as e:
        if not getattr(type(e), "serq_user_error", False):
            raise
        msg = str(e)
        assert msg and "error:" in msg.split("\n")[0] and "Traceback" not in msg, msg
        return "sim-error"
    return "report"


# -- the tests --------------------------------------------------------------------------------------------------


@st.composite
def mutated(draw):
    return mutate(Chooser(draw=draw))


def test_the_sources_split_and_join_back():
    for text in SOURCES.values():
        assert join(split(text)) == text


@fuzz_seed
@fuzz_settings(300)
@given(mutated())
def test_a_mutated_source_compiles_or_gives_one_diagnostic_and_runs_or_gives_a_sim_error(case):
    name, src = case
    outcome(src)


@st.composite
def hostile_programs(draw):
    return hostile(Chooser(draw=draw))


@fuzz_seed
@fuzz_settings(30)
@given(hostile_programs())
def test_a_hostile_program_compiles_and_runs_or_gives_one_positioned_diagnostic(src):
    # deep nesting (also through defs), long and nested aggregates, huge families, caps, rates and work:
    # the compile is bounded (time and memory), a refusal is one diagnostic with its line, column, source
    # line and caret, and what compiles runs (bounded) to a report or a simulator's error
    outcome(src)


@pytest.mark.parametrize("shape", sorted(set(SHAPES)))
def test_each_hostile_shape_at_its_deepest_compiles_and_runs_or_gives_one_positioned_diagnostic(shape):
    # the shapes at the depth that blew up: defs that double 40 deep wrote out 2**41 nodes (did not end)
    outcome(hostile(Chooser(rng=random.Random(shape)), shape, 40 if shape == "doubling" else DEPTHS[-1]))


@st.composite
def undecodable(draw):
    c = Chooser(draw=draw)
    _, src = mutate(c) if c.int(0, 1) else ("", hostile(c))
    data = bad_bytes(c, src.encode())
    try:  # an inserted byte can complete a sequence (b"\xe2\x82" before b"\x80" is the euro sign)
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    return data + b"\xff"


@fuzz_seed
@fuzz_settings(60)
@given(undecodable())
def test_a_source_that_is_not_utf8_gives_one_diagnostic_at_its_first_bad_byte(tmp_path_factory, data):
    f = tmp_path_factory.mktemp("bytes") / "p.sq"
    f.write_bytes(data)
    with pytest.raises(serq_frontend.CompileError) as e, bounded("the compile"):
        serq_frontend.compile(f, pm=_pm())
    first = data.decode("utf-8", errors="surrogateescape")
    bad = next(i for i, ch in enumerate(first) if "\udc80" <= ch <= "\udcff")
    line = first[:bad].count("\n") + 1
    col = bad - (first.rfind("\n", 0, bad) + 1) + 1
    head, src_line, caret = str(e.value).split("\n")
    assert head.startswith(f"{f}:{line}:{col}: error: the file is not UTF-8 text (byte 0x"), str(e.value)
    # the caret stands under the bad byte, quoted as `\xNN` (a line longer than the quote's width is cut
    # around it, `...` marking the cut, so its column in the quote is not always its column in the file)
    byte = data[len(first[:bad].encode("utf-8", "surrogateescape"))]
    assert caret.strip() == "^" and src_line[len(caret) - 1:].startswith(f"\\x{byte:02x}"), str(e.value)
    assert "\ufffd" not in src_line, str(e.value)
    # uncut, the caret is at the byte's column when every character before it on its line is shown as itself
    # (a NUL or another byte before it is an escape of four columns: `\x00\x80…` puts it at column 6, not 2)
    if len(src_line) <= 2 + 200 and all(ch.isprintable() for ch in first[bad - col + 1:bad]):
        assert caret == "  " + " " * (col - 1) + "^", str(e.value)


SERQ = str(Path(sys.executable).parent / "serq")


def cli_cases() -> list[tuple[str, str]]:
    """A handful of mutated sources: fixed ones (a stray character, a truncation, a branch guard that is
    0.5 at run time) and the first few seeded mutations that fail to compile."""
    mg1 = SOURCES["examples/single-turn/mg1.sq"]
    assert "set t0 = now;" in mg1
    cases = [("compile-error", mg1 + "\n\u00e9\n"),
             ("compile-error", mg1.split("session {")[0] + "session { set t0 ="),
             ("sim-error", mg1.replace("set t0 = now;", "set t0 = now; branch (0.5 + t0 * 0) { end; }")),
             ("compile-error", mg1.encode().replace(b"set t0", b"set \xff\xfe t0")),  # not UTF-8
             ("compile-error", mg1.replace("run svc (service());", "loop {\n" * 1001 + "}\n" * 1001)),
             ("compile-error", mg1.replace("stage svc : fifo;", "stage svc[1e20] : fifo;"))]
    rng = random.Random(2)
    want = 3
    while want:
        _, src = mutate(Chooser(rng=rng))
        try:
            with bounded("the compile"):
                serq_frontend.compile(source=src, pm=_pm())
        except serq_frontend.CompileError:
            want -= 1
            cases.append(("compile-error", src))
    return cases


@pytest.mark.parametrize("command", ["check", "run"])
def test_the_cli_gives_one_message_for_a_mutated_source(tmp_path, command, serq_in_process, monkeypatch):
    pytest.importorskip("serq_sim")
    monkeypatch.chdir(tmp_path)  # (the folder the child process runs in)
    for i, (what, src) in enumerate(cli_cases()):
        if command == "check" and what == "sim-error":
            continue
        f = tmp_path / f"m{i}.sq"
        if isinstance(src, bytes):
            f.write_bytes(src)
        else:
            f.write_text(src, encoding="utf-8")
        args = [command, str(f)]
        if command == "run":
            args += ["--no-progress", "--horizon", "30", "--warmup", "0"]
        # the first source as the command's own process (its memory capped); the others, which are about what
        # the command says, on serq.cli.main in this process
        r = subprocess.run(capped([SERQ, *args]), capture_output=True, text=True, timeout=60, cwd=tmp_path) \
            if i == 0 else serq_in_process(*args)
        assert r.returncode == 1, (what, r.returncode, r.stderr)
        assert "Traceback" not in r.stderr, (what, r.stderr)
        first, *rest = r.stderr.split("\n")
        assert re.match(rf"{re.escape(str(f))}:\d+:\d+: error: ", first), (what, r.stderr)
        assert what != "sim-error" or ": error: at t=0, session 0: branch guard is 0.5" in first, r.stderr
        assert len(rest) == 3 and rest[1].lstrip().startswith("^") and rest[2] == "", r.stderr  # line, caret
        assert r.stdout == "", (what, r.stdout)


# -- the guard of a compile: a compile that does not end, or that wants too much memory, fails fast -------------


def test_the_guard_fails_a_compile_that_does_not_end(monkeypatch):
    import time

    import fuzzir

    def spin(*a, **k):
        t = time.monotonic()
        while time.monotonic() - t < 5:
            pass

    monkeypatch.setattr(serq_frontend, "compile", spin)
    monkeypatch.setattr(fuzzir, "COMPILE_CPU", 0.2)
    t = time.process_time()
    with pytest.raises(AssertionError, match=r"^the compile took more than 0\.2 s of CPU time$"):
        outcome("run { horizon 1; }")
    assert time.process_time() - t < 2


def test_the_guard_caps_the_memory_of_a_compile(monkeypatch):
    import mmap

    import fuzzir

    def grab(*a, **k):  # maps (without touching) more than a guarded step may add
        return mmap.mmap(-1, fuzzir.MEMORY + (1 << 30))

    monkeypatch.setattr(serq_frontend, "compile", grab)
    with pytest.raises((MemoryError, OSError)):
        outcome("run { horizon 1; }")
