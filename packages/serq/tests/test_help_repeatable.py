"""Every option a command takes more than once says so in its --help ("repeatable"), and --set and --def say
it alike in every command that takes them: serq ir's and serq vllm target's said "Override a let
constant." and "Give a definition's body." (serq check's and serq run's "(repeatable)"), and serq sweep
--find did not say that several conditions may be given."""

from __future__ import annotations

import click
import pytest
from serq.cli import build_cli

pytestmark = pytest.mark.timeout(60)


def _commands():
    cli = build_cli()

    def walk(cmd, path):
        ctx = click.Context(cmd, info_name=path[-1])
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                yield from walk(cmd.get_command(ctx, name), (*path, name))
        else:
            yield " ".join(path), cmd

    return list(walk(cli, ("serq",)))


def test_a_repeatable_option_says_so():
    commands = _commands()
    names = {path for path, _ in commands}
    assert {"serq ir", "serq vllm target", "serq run", "serq sweep"} <= names  # the parts are installed here
    for path, cmd in commands:
        for p in cmd.params:
            if isinstance(p, click.Option) and p.multiple:
                assert "repeatable" in (p.help or ""), f"{path} {p.opts[0]}: {p.help!r}"


def test_set_and_def_are_told_alike_everywhere():
    helps: dict[str, set[str]] = {"--set": set(), "--def": set()}
    for path, cmd in _commands():
        if path in ("serq sweep", "serq compare"):  # a sweep's --set takes VALUES, not one VALUE
            continue
        for p in cmd.params:
            if isinstance(p, click.Option) and p.opts[0] in helps:
                helps[p.opts[0]].add(p.help)
    assert helps == {"--set": {"Override a let constant (repeatable)."},
                     "--def": {"Give an expression definition's body (repeatable)."}}
