"""Every serq command's ``--help`` shows how it is used, and what it shows works as written.

The help is what a user meets first (``serq COMMAND --help``); most commands gave no example of a command line,
and several no exit status. Each command and group of the installed parts now ends its help with an
``Examples:`` block (``Example:`` for one), a line per command line, and the lines are checked by the means
test_docs_commands.py checks the docs' ```sh blocks with (docs_helpers.py): each is parsed with the real command line (the
command is the one whose help shows it, every option is one of its own, every required option is given), and
every one that test_docs_commands.py runs, a sweep, a comparison and a plot only parsed, is run here in a folder
laid out as the repository's root (``examples/``, the placeholder inputs ``steps.jsonl`` and ``prog.ir.json``,
and ``prog.sq``), in process, in the order a reader would run them (``serq run``'s records before ``serq
metrics`` reads them). ``serq vllm real`` needs vLLM, which is no dependency: only parsed.
"""

from __future__ import annotations

import json
import re
import shlex

import click
import pytest
from docs_helpers import PARSE_ONLY, docs_folder, parse
from host_helpers import REPO

pytestmark = pytest.mark.timeout(240)

#: a help's examples: the line ``Example:`` or ``Examples:`` and the indented ``serq …`` lines under it
EXAMPLES = re.compile(r"^\x08?\s*Examples?:\n((?:[ \t]+serq .*(?:\n|$))+)", re.M)
#: examples not run here (they need what no test installs)
NOT_RUN = {("vllm", "real")}


def commands() -> list[tuple[tuple[str, ...], click.Command]]:
    """(path, command) of every command and group below ``serq`` itself."""
    from serq.cli import build_cli

    cli = build_cli()
    out = []

    def walk(group, ctx, path):
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            out.append(((*path, name), sub))
            if isinstance(sub, click.Group):
                walk(sub, click.Context(sub, info_name=name, parent=ctx), (*path, name))

    walk(cli, click.Context(cli, info_name="serq"), ())
    return out


def examples(cmd: click.Command) -> list[str]:
    m = EXAMPLES.search(cmd.help or "")
    return [line.strip() for line in m.group(1).splitlines()] if m else []


def test_every_command_shows_examples():
    found = commands()
    assert {p for p, _ in found} >= {("run",), ("check",), ("ir",), ("fmt",), ("ast",), ("fit",), ("plugins",),
                                     ("sweep",), ("compare",), ("plot",), ("metrics",), ("vllm",),
                                     ("vllm", "scenario"), ("vllm", "scenarios"), ("vllm", "target"),
                                     ("vllm", "real")}
    for path, cmd in found:
        shown = examples(cmd)
        assert shown, f"serq {' '.join(path)} --help shows no example"
        # and says its exit status, as `serq --help` says every command's help does
        assert isinstance(cmd, click.Group) or "Exit status: 0" in " ".join((cmd.help or "").split()), f"serq {' '.join(path)} --help"
        for line in shown:
            # the example runs the command whose help shows it (a group's, one of its commands)
            args = shlex.split(line)[1:]
            assert tuple(args[:len(path)]) == path, f"serq {' '.join(path)} --help: {line!r} runs another command"


@pytest.mark.parametrize("path,line", [pytest.param(p, line, id=f"{' '.join(p)}: {line}")
                                       for p, cmd in commands() for line in examples(cmd)])
def test_an_example_of_the_help_parses(path, line):
    words = shlex.split(line)
    assert words[0] == "serq" and not set(words) & {"|", "&&", ";", ">", "<"}, f"{line}: one plain command line"
    parse(words[1:])  # the command exists, every option is its own, every required option is given


def test_the_examples_of_the_help_run_as_written(tmp_path, serq_in_process, monkeypatch):
    work = docs_folder(tmp_path)
    # prog.sq, the program `serq fmt prog.sq` formats: examples/single-turn/mg1.sq written out of form
    canonical = (REPO / "examples" / "single-turn" / "mg1.sq").read_text()
    (work / "prog.sq").write_text(canonical.replace("stage svc : fifo;", "stage   svc:fifo ;"))
    monkeypatch.chdir(work)
    ran = []
    shown = [(p, line) for p, cmd in commands() for line in examples(cmd)]
    for path, line in sorted(shown, key=lambda x: x[0] == ("metrics",)):  # the records first
        args = shlex.split(line)[1:]
        if parse(list(args))[0] in PARSE_ONLY or tuple(args[:2]) in NOT_RUN or path in NOT_RUN:
            continue
        r = serq_in_process(*args)
        assert r.returncode == 0, f"serq {' '.join(path)} --help: {line}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}"
        assert "Traceback" not in r.stderr, r.stderr
        ran.append(line)
        if "-o" in args:
            assert (work / args[args.index("-o") + 1]).stat().st_size > 0, line
        if path == ("check",):
            assert r.stdout.startswith("OK: "), r.stdout
        if path in (("ir",), ("ast",), ("plugins",), ("vllm", "scenario"), ("vllm", "target")):
            json.loads(r.stdout)  # as JSON, as each help says
    assert len(ran) >= 15
    # the fmt example formatted prog.sq: it is the canonical text again
    assert (work / "prog.sq").read_text() == canonical
    # serq metrics --by engine: a row per replica and the run's whole, read from serq run's records
    rows = json.loads((work / "by_engine.json").read_text())
    assert len(rows) >= 2, rows


def test_the_run_settings_helps_give_the_defaults_a_run_has(tmp_path, serq_in_process, monkeypatch):
    """--seed, --warmup (serq run, ir; sweep and compare the latter) say the run block's value is the default,
    else 1 and 0: what a run of a program whose run block gives neither reports."""
    from serq.cli import build_cli

    cli = build_cli()
    ctx = click.Context(cli, info_name="serq")
    for name in ("run", "ir", "sweep", "compare"):
        cmd = cli.get_command(ctx, name)
        helps = {p.opts[0]: " ".join((p.help or "").split()) for p in cmd.params if isinstance(p, click.Option)}
        assert "(default: the run block's warmup, else 0)" in helps["--warmup"], name
        assert "default: the run block's horizon" in helps["--horizon"], name
        if name in ("run", "ir"):
            assert "(default: the run block's seed, else 1)" in helps["--seed"], name
        else:  # docs/sweep.md, "Seeds": always --seeds', never the run block's seed
            assert "(never the run block's seed)" in helps["--seeds"], name
    (tmp_path / "p.sq").write_text("stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (0.5); end; }\n"
                                   "run { horizon 10; }\n")
    monkeypatch.chdir(tmp_path)
    r = serq_in_process("run", "p.sq", "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert (report["seed"], report["warmup"], report["horizon"]) == (1, 0, 10)
    # a sweep of a program whose run block says seed 2 runs seed 1 by default, as serq run --seed 1 does
    (tmp_path / "p2.sq").write_text((tmp_path / "p.sq").read_text().replace("horizon 10;", "horizon 10; seed 2;"))
    r = serq_in_process("sweep", "p2.sq", "--workers", "0", "--no-progress")
    assert r.returncode == 0, r.stderr
    header, row = r.stdout.splitlines()[:2]
    assert dict(zip(header.split(","), row.split(",")))["seed"] == "1", r.stdout[:500]


def test_a_doc_a_help_points_to_is_there_with_its_section():
    """serq run --trace's help points to docs/language.md, "A trace file", serq vllm real's to docs/vllm-oracle.md
    ("Installing vLLM CPU-only"): each doc a help names exists, and so does each section it names."""
    pointed = 0
    for path, cmd in commands():
        texts = [cmd.help or "", *[p.help or "" for p in cmd.params if isinstance(p, click.Option)]]
        for text in texts:
            flat = " ".join(text.split())
            for m in re.finditer(r"docs/([\w-]+\.md)(?:,? \(?\"([^\"]+)\")?", flat):
                doc = REPO / "docs" / m.group(1)
                assert doc.is_file(), f"serq {' '.join(path)} --help names {m.group(0)}"
                if m.group(2):
                    assert m.group(2) in " ".join(doc.read_text().split()), f"serq {' '.join(path)}: {m.group(0)}"
                pointed += 1
            for m in re.finditer(r"(?<![\w/])((?:packages|examples)/[\w./-]*\w)", flat):
                assert (REPO / m.group(1)).exists(), f"serq {' '.join(path)} --help names {m.group(1)}"
                pointed += 1
    assert pointed >= 10
