"""Fuzzing the source: the examples' and the library's .sq text mutated (tokens deleted, duplicated, swapped
or replaced; numbers replaced by 0, -1, 1e308, 1e400, inf, nan…; names by other names, keywords, unknown
ones; operators and brackets inserted; lines deleted, duplicated, swapped; random characters; truncation).
``serq_frontend.compile(source=...)`` returns IR or raises CompileError, whose message starts with
``<source>:LINE:COL: error:`` (or a used library file's name and position); nothing else may escape. What compiles runs for
a short while (a small horizon, few arrivals, a wall-clock guard): a report or a SimError, nothing else.
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
from fuzzir import WALL, Chooser, WallClock, fuzz_seed, fuzz_settings, shortened, wall_clock  # noqa: E402

PATHS = sorted(EXAMPLES.rglob("*.sq")) + sorted((ROOT / "bench").glob("*.sq")) + sorted(LIB.glob("*.sq"))
SOURCES = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in PATHS}
NAMES = sorted(SOURCES)


#: the simulated time and arrivals a compiled mutant runs for at most, and the wall-clock guard of one run

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


# -- judging --------------------------------------------------------------------------------------------------

DIAGNOSTIC = re.compile(r"^(.+?):(\d+):(\d+): error: ")


def check_diagnostic(e: Exception, src: str) -> None:
    msg = str(e)
    lines = msg.split("\n")
    assert "Traceback" not in msg, msg
    m = DIAGNOSTIC.match(lines[0])
    assert m, f"no position in the diagnostic: {msg!r}"
    if m.group(1) == "<source>":  # else a library file the source uses
        assert 1 <= int(m.group(2)) <= src.count("\n") + 1, msg


def outcome(src: str) -> str:
    """``"compile-error"``, ``"sim-error"``, ``"report"`` or ``"slow"``; anything else propagates."""
    try:
        program = serq_frontend.compile(source=src, pm=_pm())
    except serq_frontend.CompileError as e:
        check_diagnostic(e, src)
        return "compile-error"
    serq_sim = pytest.importorskip("serq_sim")
    serq_report = pytest.importorskip("serq_report")
    try:
        with wall_clock(WALL):
            report = serq_sim.run(shortened(program))
            serq_report.text_reporter(report, io.StringIO())
            serq_report.json_reporter(report, io.StringIO())
    except WallClock:
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


SERQ = str(Path(sys.executable).parent / "serq")


def cli_cases() -> list[tuple[str, str]]:
    """A handful of mutated sources: fixed ones (a stray character, a truncation, a branch guard that is
    0.5 at run time) and the first few seeded mutations that fail to compile."""
    mg1 = SOURCES["examples/single-turn/mg1.sq"]
    assert "set t0 = now;" in mg1
    cases = [("compile-error", mg1 + "\n\u00e9\n"),
             ("compile-error", mg1.split("session {")[0] + "session { set t0 ="),
             ("sim-error", mg1.replace("set t0 = now;", "set t0 = now; branch (0.5 + t0 * 0) { end; }"))]
    rng = random.Random(2)
    want = 3
    while want:
        _, src = mutate(Chooser(rng=rng))
        try:
            serq_frontend.compile(source=src, pm=_pm())
        except serq_frontend.CompileError:
            want -= 1
            cases.append(("compile-error", src))
    return cases


@pytest.mark.parametrize("command", ["check", "run"])
def test_the_cli_gives_one_message_for_a_mutated_source(tmp_path, command):
    pytest.importorskip("serq_sim")
    for i, (what, src) in enumerate(cli_cases()):
        if command == "check" and what == "sim-error":
            continue
        f = tmp_path / f"m{i}.sq"
        f.write_text(src, encoding="utf-8")
        args = [SERQ, command, str(f)]
        if command == "run":
            args += ["--no-progress", "--horizon", "30", "--warmup", "0"]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert r.returncode == 1, (what, r.returncode, r.stderr)
        assert "Traceback" not in r.stderr, (what, r.stderr)
        first, *rest = r.stderr.split("\n")
        assert re.match(rf"{re.escape(str(f))}:\d+:\d+: error: ", first), (what, r.stderr)
        assert what != "sim-error" or ": error: at t=0, session 0: branch guard is 0.5" in first, r.stderr
        assert len(rest) == 3 and rest[1].lstrip().startswith("^") and rest[2] == "", r.stderr  # line, caret
        assert r.stdout == "", (what, r.stdout)
