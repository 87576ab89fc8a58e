"""The commands and Python snippets the docs show run as written (docs drift fails here).

Scope: README.md, docs/*.md, packages/*/README.md and examples/*/README.md; docs/tutorial.md is run by
packages/serq-vllm/tests/test_tutorial.py and is left out here, and each example plugin's README
(examples/plugins/*/README.md, whose commands only that plugin adds) by test_example_plugins.py. The
examples each command's ``--help`` gives are checked by the same means in test_docs_round3_help.py.

What is checked, by fence:

* A ```sh block: every line that runs serq (``serq …`` or ``.venv/bin/serq …``, also after ``&&``, ``|``
  or ``;``) is run with bash in a fresh folder holding ``examples/`` (``.venv/bin/serq`` is the serq
  beside this interpreter) and must exit 0, print no traceback, and print what the expectations below
  say. Lines that do not run serq (``python3 dev.py …``, ``pip install …``) are left alone. A line that
  runs ``serq sweep``, ``serq compare`` or ``serq plot`` (slow, or reading a slow command's output) is
  only parsed: its subcommand must exist and its options must be the command's (click parses it, not
  running it; a missing input file is not an error then).
* A ```python block runs with ``python -c`` in such a folder and must exit 0.

Inputs the docs name as placeholders are in that folder too: ``steps.jsonl`` (measured iterations for
``serq fit``), ``prog.ir.json`` and ``mm1.ir.json`` (the IR of examples/single-turn/mg1.sq).

Markers, an HTML comment (invisible when rendered) on the line just before the fence:

* ``<!-- docs-test: skip -->``: illustrative, not checked (it needs vLLM or network installs, or shows
  signatures rather than code);
* ``<!-- docs-test: parse -->``: only parsed: the serq lines of an sh block as above, a python block
  compiled (slow, e.g. a 400-run sweep).

Unlabelled fences (grammar excerpts, program fragments, output) are not run, but none may show a serq
command line (a command shown is in an sh fence). Further, over these docs and docs/tutorial.md
(docs/hooks.md names the example plugins' commands and is left out): every `serq …` the prose names in
inline code is a command of the installed parts and every option it gives is one of that command's; every
```sq fence compiles; the programs of docs/language.md's example table compile, and its "Diagnostics"
fence is what `serq check` prints for the definition and use it describes. docs/language.md's other
fences are grammar excerpts (`…`, `|` between forms, placeholders) and a plugin's forms, not programs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from docs_helpers import PARSE_ONLY, _given, docs_folder, missing_options, parse
from host_helpers import REPO

BIN = Path(sys.executable).parent
FENCE = re.compile(r"^(?:<!-- docs-test: (?P<mark>\w+) -->\n)?```(?P<kind>\w*)\n(?P<body>.*?)^```$", re.S | re.M)
SERQ = re.compile(r"(?:^|&&|\|\||[|;(])\s*(?:\.venv/bin/)?serq\s")

# what a command's output says, as the docs say it (a line starting with the key)
EXPECT = {
    "serq check examples/multi-turn/vllm.sq": lambda out, work: re.match(r"OK: \d+ pool\(s\), \d+ stage\(s\), ", out),
    "serq ir examples/single-turn/mg1.sq": lambda out, work: "version" in json.loads(out),
    "serq run examples/single-turn/mg1.sq --seed 2 --json": lambda out, work: json.loads(out)["seed"] == 2,
    "serq run examples/multi-turn/vllm.sq --dump out/": lambda out, work: list((work / "out").glob("*.csv")),
    "serq run examples/multi-turn/vllm.sq --records req.csv --slo": lambda out, work: (
        "goodput" in out and (work / "req.csv").read_text().startswith("session,turn,time,")),
    "serq fit steps.jsonl --name my_gpu": lambda out, work: "def my_gpu() = " in out and "mape" in out,
    "serq fit steps.jsonl --name h100_llama8b": lambda out, work: "def h100_llama8b() = " in out and all(
        re.search(rf"^{kind} +\d+ +[\d.]+ %$", out, re.M) for kind in ("decode", "prefill", "mixed", "idle")),
    "serq fmt --check": lambda out, work: True,
    "serq vllm scenario vllm/preempt": lambda out, work: {"first", "done", "preemptions"} <= set(json.loads(out)),
    "serq vllm target examples/multi-turn/vllm.sq": lambda out, work: "config" in json.loads(out),
}


def doc_files() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "packages").glob("*/README.md")),
             *sorted((REPO / "examples").glob("*/README.md"))]
    return [f for f in files if f.name != "tutorial.md"]


def blocks():
    """(doc, line number, kind, mark, body) of every sh and python fence in scope."""
    for doc in doc_files():
        text = doc.read_text()
        for m in FENCE.finditer(text):
            if m.group("kind") in ("sh", "python"):
                line = text.count("\n", 0, m.start("body"))
                yield doc.relative_to(REPO).as_posix(), line, m.group("kind"), m.group("mark"), m.group("body")


def serq_lines():
    """(id, mark, line) of every line of an sh block that runs serq."""
    for doc, start, kind, mark, body in blocks():
        if kind != "sh" or mark == "skip":
            continue
        for i, line in enumerate(body.replace("\\\n", " ").splitlines()):
            if SERQ.search(line):
                yield f"{doc}:{start + i + 1}", mark, line


def python_blocks():
    for doc, start, kind, mark, body in blocks():
        if kind == "python" and mark != "skip":
            yield f"{doc}:{start}", mark, body


def invocations(line: str) -> list[list[str]]:
    """The argument lists of the serq commands of a shell line (after `serq`)."""
    words = shlex.split(line, comments=True)
    out, cur = [], None
    for w in words:
        if w in ("&&", "||", "|", ";"):
            cur = None
        elif cur is None and w in ("serq", ".venv/bin/serq"):
            cur = []
            out.append(cur)
        elif cur is not None:
            cur.append(w)
    return out


@pytest.fixture
def work(tmp_path):
    """A folder as the repository root looks to a reader running the docs, with the placeholder inputs."""
    return docs_folder(tmp_path)


def env() -> dict[str, str]:
    # the commands keep the test run's caches (SERQ_CACHE_DIR as the root conftest sets it, as a reader's run
    # has its own): with the caches off each one built the parser's tables again, 0.2 s of CPU a command
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_the_docs_have_commands_to_check():
    lines = list(serq_lines())
    assert len(lines) >= 20 and len(list(python_blocks())) >= 8
    # every expectation still names a command the docs show
    shown = [re.sub(r"^\.venv/bin/", "", line.strip()) for _, _, line in lines]
    for key in EXPECT:
        assert any(s.startswith(key) for s in shown), f"no doc command starts with {key!r}"


@pytest.mark.parametrize("where,mark,line", [pytest.param(*x, id=x[0]) for x in serq_lines()])
def test_serq_command(where, mark, line, work):
    calls = invocations(line)
    assert calls, line
    paths = [parse(list(args)) for args in calls]
    if mark == "parse" or any(p[0] in PARSE_ONLY for p in paths):
        return
    cmd = re.sub(r"(^|[|;&(]\s*)\.venv/bin/serq\b", r"\1serq", line.strip())
    p = subprocess.run(["bash", "-c", cmd], cwd=work, env=env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"{where}: {line}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
    assert "Traceback" not in p.stderr, p.stderr
    for key, check in EXPECT.items():
        if cmd.startswith(key):
            assert check(p.stdout, work), f"{where}: {line}: the output is not what the doc says\n{p.stdout[:2000]}"


@pytest.mark.parametrize("where,mark,body", [pytest.param(*x, id=x[0]) for x in python_blocks()])
def test_python_snippet(where, mark, body, work):
    code = compile(body, where, "exec")
    if mark == "parse":
        return
    assert code is not None
    p = subprocess.run([sys.executable, "-c", body], cwd=work, env=env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"{where}\n{body}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"


# --- the commands the prose names, and the programs the docs show --------------------------------------

# docs/hooks.md names the example plugins' commands (`serq lint`, `serq stages`), which only those plugins add
PROSE_DOCS = [d for d in [*doc_files(), REPO / "docs" / "tutorial.md"] if d.name != "hooks.md"]
INLINE = re.compile(r"(?<!`)`((?:\.venv/bin/)?serq (?:[^`]|\n)+?)`(?!`)")
FENCED = re.compile(r"^```.*?^```$", re.S | re.M)


def inline_commands():
    """(doc:line, text) of every inline code span of the prose that is a serq command line."""
    for doc in PROSE_DOCS:
        text = FENCED.sub(lambda m: "\n" * m.group(0).count("\n"), doc.read_text())
        for m in INLINE.finditer(text):
            yield f"{doc.relative_to(REPO).as_posix()}:{text.count(chr(10), 0, m.start()) + 1}", " ".join(m.group(1).split())


def named_options(span: str) -> list[tuple[tuple[str, ...], str]]:
    """(command path, option) of every option a span of prose gives its serq command. `serq vllm
    scenarios | scenario NAME | real [--python PATH]` lists subcommands of one group; a `|` before a
    word that is no such subcommand is a pipe into another program."""
    import click
    from serq.cli import build_cli

    cli = build_cli()
    ctx = click.Context(cli, info_name="serq")
    words = span.split()[1:]
    out, group, path, cmd = [], cli, (), cli
    i = 0
    while i < len(words):
        w = words[i].strip("[]")
        if w == "|":
            nxt = words[i + 1].strip("[]") if i + 1 < len(words) else ""
            if isinstance(group, click.Group) and group is not cmd and group.get_command(ctx, nxt) is not None:
                path, cmd = path[:-1], group  # another subcommand of the same group
            else:
                break  # a pipe
        elif isinstance(cmd, click.Group) and not w.startswith("-") and w != "…":
            sub = cmd.get_command(ctx, w)
            assert sub is not None, f"`{span}`: serq {' '.join(path)} has no command {w!r}"
            group, path, cmd = cmd, (*path, w), sub
        elif w.startswith("-") and len(w) > 1 and w != "-" * len(w):
            out.append((path, w.split("=")[0]))
        i += 1
    return out


def options_of(path: tuple[str, ...]) -> set[str]:
    import click
    from serq.cli import build_cli

    cli = build_cli()
    ctx = click.Context(cli, info_name="serq")
    cmd = cli
    for name in path:
        cmd = cmd.get_command(ctx, name)
    names = {"--help", "-h"}
    for p in cmd.params:
        if isinstance(p, click.Option):
            names.update(p.opts, p.secondary_opts)
    return names


def test_the_prose_names_commands():
    spans = list(inline_commands())
    assert len(spans) >= 100 and any("--desugar" in s for _, s in spans)


@pytest.mark.parametrize("where,span", [pytest.param(*x, id=x[0]) for x in inline_commands()])
def test_a_command_the_prose_names_exists_with_its_options(where, span):
    for path, opt in named_options(span):
        assert opt in options_of(path), f"{where}: `{span}`: serq {' '.join(path)} has no option {opt}"


PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*(\..*)?")  # FILE, DIR, STEPS.jsonl: a synopsis, not a line to type


def whole_command_lines():
    """(doc:line, span, command, its context, its arguments) of every inline span that is a command line a
    reader can type as it stands: every required argument of its command given, none a placeholder (prose
    that names an option in passing, `serq run --strict`, is no command line)."""
    import click
    from serq.cli import build_cli

    cli = build_cli()
    for where, span in inline_commands():
        try:
            words = shlex.split(span)[1:]
        except ValueError:
            continue
        ctx, cmd, name = click.Context(cli, info_name="serq"), cli, "serq"
        while isinstance(cmd, click.Group) and words and not words[0].startswith("-"):
            sub = cmd.get_command(ctx, words[0])
            if sub is None:
                break
            name = words.pop(0)
            ctx, cmd = click.Context(sub, info_name=name, parent=ctx), sub
        if isinstance(cmd, click.Group):
            continue
        try:
            opts, _, _ = cmd.make_parser(ctx).parse_args(list(words))
        except click.ClickException:
            continue  # an option without its value: a mention (`serq plot --y`)
        required = [opts.get(p.name) for p in cmd.params if isinstance(p, click.Argument) and p.required]
        values = [v for r in required if _given(r) for v in ([r] if isinstance(r, str) else r)]
        if all(_given(r) for r in required) and not any(PLACEHOLDER.fullmatch(v) for v in values):
            yield where, span, cmd, ctx, words


def test_the_prose_shows_whole_command_lines():
    assert len(list(whole_command_lines())) >= 40


@pytest.mark.parametrize("where,span,cmd,ctx,words", [pytest.param(*x, id=x[0]) for x in whole_command_lines()])
def test_a_whole_command_line_the_prose_shows_gives_its_required_options(where, span, cmd, ctx, words):
    """`serq plot out/sweep_requests.parquet --cdf ttft --hue blocks` (docs/tutorial.md) gave no `-o`: typed as
    written it is a usage error."""
    missing = missing_options(cmd, ctx, words)
    assert not missing, f"{where}: `{span}`: the required option {missing[0]} is not given"


def test_a_command_line_shown_is_in_a_checked_block():
    """A fence that shows serq command lines is a ```sh fence (so the tests above run or parse it) or
    is marked as not checked."""
    for doc in [*doc_files(), REPO / "docs" / "tutorial.md"]:
        text = doc.read_text()
        for m in FENCE.finditer(text):
            lines = [x.strip() for x in m.group("body").splitlines()]
            if m.group("kind") != "sh" and m.group("mark") != "skip":
                shown = [x for x in lines if re.match(r"(\.venv/bin/)?serq [a-z]", x)]
                assert not shown, f"{doc.name}:{text.count(chr(10), 0, m.start()) + 1}: {shown[0]!r} in a ```{m.group('kind')} fence"


def test_the_sq_programs_the_docs_show_compile():
    import serq_frontend

    programs = [(doc, m.group("body")) for doc in [*doc_files(), REPO / "docs" / "tutorial.md"]
                for m in FENCE.finditer(doc.read_text()) if m.group("kind") == "sq"]
    assert programs, "docs/tutorial.md shows its program in a ```sq fence"
    for _doc, body in programs:
        serq_frontend.compile(source=body)


def test_the_examples_docs_language_lists_compile():
    """docs/language.md: "Examples (each compiles with `serq check`)" and its table of them."""
    import serq_frontend

    text = (REPO / "docs" / "language.md").read_text()
    table = text[text.index("Examples (each compiles"):text.index("## Lexical")]
    links = re.findall(r"\]\(\.\./(examples/[^)]+\.sq)\)", table)
    assert len(links) >= 10
    for link in links:
        serq_frontend.compile(str(REPO / link))


def test_the_diagnostic_docs_language_shows_is_what_serq_prints(tmp_path):
    """docs/language.md, "Diagnostics": an error in a definition's body, with a note at its use."""
    text = (REPO / "docs" / "language.md").read_text()
    section = text[text.index("## Diagnostics"):]
    shown = next(m.group("body") for m in FENCE.finditer(section))
    (tmp_path / "lib.sq").write_text("def serve_one(s, w) {\n  run egine (w);\n}\n")
    (tmp_path / "prog.sq").write_text('use "lib.sq";\nstage engine : fifo;\nworkload { arrive poisson(1); }\n'
                                      "session {\n  serve_one(engine, 1);\n}\nrun { horizon 10; }\n")
    p = subprocess.run([str(BIN / "serq"), "check", "prog.sq"], cwd=tmp_path, env=env(), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 1 and p.stderr == shown, p.stderr


# --- what the docs say each part registers --------------------------------------------------------------

# "The host registers `plugins`, `check` and `ir`; serq-frontend `fmt` and `ast`; …": a sentence from
# "registers" to its end, each segment (after ";" or ", " before another part) a part and the names it has
CLAIM = re.compile(r"(The host|serq-[a-z]+)\s+registers\s+(.*?)\.(?=\s|$)", re.S)
# a segment's names: the list of code spans it starts with (`a`, `b` and `c`; the `vllm` group)
NAMES = re.compile(r"\s*(?:serq-[a-z]+\s+)?(?:the\s+)?((?:`[^`]+`(?:,\s*(?:and\s+)?|\s+and\s+)?)+)")


def registration_claims():
    """(doc:line, distribution, names) of every claim of the docs that a part registers these names."""
    for doc in doc_files():
        text = doc.read_text()
        for m in CLAIM.finditer(text):
            where = f"{doc.relative_to(REPO).as_posix()}:{text.count(chr(10), 0, m.start()) + 1}"
            dist = "serq" if m.group(1) == "The host" else m.group(1)
            for k, seg in enumerate(re.split(r";|,\s+(?=serq-)", m.group(2))):
                head = re.match(r"\s*(serq-[a-z]+)\s", seg)
                if k and head:
                    dist = head.group(1)
                names = NAMES.match(seg)
                if names:
                    yield where, dist, re.findall(r"`([^`]+)`", names.group(1))


def test_what_the_docs_say_a_part_registers_is_what_it_registers():
    """serq-report registers the formats `text`, `json` and `csv`: docs/hooks.md and serq-sim's README said
    `text` and `json`, and the README that `-o r.csv` writes text."""
    p = subprocess.run([str(BIN / "serq"), "plugins"], env=env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    by_dist: dict[str, list[list[str]]] = {}
    for plugin in json.loads(p.stdout):
        by_dist.setdefault(plugin["distribution"], []).extend(plugin["registers"].values())
    claims = list(registration_claims())
    assert {d for _, d, _ in claims} >= {"serq", "serq-frontend", "serq-sim", "serq-sweep", "serq-ir", "serq-report"}
    for where, dist, names in claims:
        kinds = by_dist.get(dist, [])
        assert sorted(names) in [sorted(k) for k in kinds], (
            f"{where}: the docs say {dist} registers {names}; it registers {kinds}")
