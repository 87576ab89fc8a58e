"""Click options shared by the commands that load a program."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from .loading import LoadOptions


class Path(click.Path):
    """``click.Path`` that refuses an empty name (``-o ''``: no file; click takes it as a path, which then
    meant stdout, no dump or a traceback further on): the type of every file or folder a serq command
    is given."""

    def convert(self, value, param, ctx):
        if isinstance(value, str | bytes) and not value:
            self.fail("an empty name names no file", param, ctx)
        return super().convert(value, param, ctx)


def load_options(f: Callable) -> Callable:
    """``FILE``, ``--set NAME=value`` and ``--def NAME=expr``."""
    f = click.option("--def", "defs", multiple=True, metavar="NAME=EXPR",
                     help="Give an expression definition's body (repeatable).")(f)
    f = click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
                     help="Override a let constant (repeatable).")(f)
    return click.argument("file", type=Path(dir_okay=False))(f)


def run_options(f: Callable) -> Callable:
    """``--seed``, ``--horizon``, ``--warmup``, ``--arrivals``: override the program's run block."""
    f = click.option("--arrivals", type=int, default=None, help="Exactly N arrivals, then drain.")(f)
    f = click.option("--warmup", type=float, default=None, help="Discard samples before T.")(f)
    f = click.option("--horizon", type=float, default=None, help="End of the simulation.")(f)
    return click.option("--seed", type=int, default=None, help="Seed of the random streams.")(f)


def to_load_options(sets: tuple[str, ...], defs: tuple[str, ...]) -> LoadOptions:
    from .loading import LoadOptions, parse_assignments, parse_sets  # (a command that loads no program
    # imports options for its path type only)

    return LoadOptions(sets=parse_sets(sets), defs=parse_assignments(defs, "--def"))
