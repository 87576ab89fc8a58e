"""What test_docs_commands.py and test_docs_round3_help.py share: the real command line's parse of a serq
command line a doc or a help shows, and the folder the docs' commands run in."""

from __future__ import annotations

import json
import random
from pathlib import Path

from host_helpers import REPO

#: commands only parsed, not run (slow, or reading a slow command's output)
PARSE_ONLY = {"sweep", "compare", "plot"}


def parse(args: list[str]) -> tuple[str, ...]:
    """Parse ``serq ARGS`` with the real command line without running it; the command's path."""
    import click
    from serq.cli import build_cli

    cli = build_cli()
    ctx = click.Context(cli, info_name="serq")
    cmd, path = cli, []
    while isinstance(cmd, click.Group):
        assert args and not args[0].startswith("-"), f"serq {' '.join(path)}: no subcommand in {args}"
        sub = cmd.get_command(ctx, args[0])
        assert sub is not None, f"serq {' '.join(path)}: no command {args[0]!r}"
        path.append(args.pop(0))
        ctx = click.Context(sub, info_name=path[-1], parent=ctx)
        cmd = sub
    try:
        cmd.make_context(path[-1], list(args), parent=ctx.parent)
    except (click.NoSuchOption, click.BadOptionUsage) as e:
        raise AssertionError(f"serq {' '.join(path)}: {e.format_message()}") from None
    except click.ClickException:
        pass  # a value click checks (a file that exists): the doc's inputs are not made here
    # ... but not a required option left out: click checks the values in order (plot's SOURCE, a file that
    # does not exist here, before -o), so the line is read for what it gives, without the values' checks
    missing = missing_options(cmd, click.Context(cmd, info_name=path[-1], parent=ctx.parent), args)
    assert not missing, f"serq {' '.join(path)}: {args}: the required option {missing[0]} is not given"
    return tuple(path)


def _given(value) -> bool:
    return isinstance(value, str) or (isinstance(value, (tuple, list)) and len(value) > 0)


def missing_options(cmd, ctx, args: list[str]) -> list[str]:
    """The required options of ``cmd`` that ``args`` does not give (click's parser only: no value checked)."""
    import click

    opts, _, _ = cmd.make_parser(ctx).parse_args(list(args))
    return [p.opts[-1] for p in cmd.params if isinstance(p, click.Option) and p.required and not _given(opts.get(p.name))]


def docs_folder(tmp_path: Path) -> Path:
    """``tmp_path`` laid out as the repository root looks to a reader running the docs, with the placeholder
    inputs: ``examples/`` (a link to the repository's), ``steps.jsonl`` (measured iterations for ``serq fit``),
    ``prog.ir.json`` and ``mm1.ir.json`` (the IR of examples/single-turn/mg1.sq)."""
    (tmp_path / "examples").symlink_to(REPO / "examples")
    rng = random.Random(1)
    with open(tmp_path / "steps.jsonl", "w") as f:
        for _ in range(40):
            d = rng.randint(0, 30)
            kv = d * rng.randint(500, 3000)
            p = rng.choice([0, 0, rng.randint(16, 512)])
            a = p * (rng.randint(0, 2000) + p / 2)
            t = (0.014 + 4e-5 * d + 1e-8 * kv + 5e-5 * p + 1e-10 * a) * (1 + rng.uniform(-0.03, 0.03))
            f.write(json.dumps({"decoders": d, "kv_decode": kv, "prefilled": p, "attention": a, "time": t}) + "\n")
    import serq_frontend
    import serq_ir

    ir = serq_ir.encode(serq_frontend.compile(str(REPO / "examples" / "single-turn" / "mg1.sq")))
    for name in ("prog.ir.json", "mm1.ir.json"):
        (tmp_path / name).write_bytes(ir)
    return tmp_path
