"""The ``serq`` command, assembled from the subcommands the installed parts register.

Exit status: 0 on success, 1 for an error in a program or an input (one ``error:`` line, with source
context where there is a source), 2 for a usage error.
"""

from __future__ import annotations

import sys

import click

from .plugins import collect, get_plugin_manager


def _show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # click's version_option, with the version looked up only when it is asked for
    if not value or ctx.resilient_parsing:
        return
    from . import __version__

    click.echo(f"serq, version {__version__}", color=ctx.color)
    ctx.exit()


def build_cli(pm=None) -> click.Group:
    """The ``serq`` group with every registered subcommand."""
    pm = pm or get_plugin_manager()

    @click.group(context_settings={"help_option_names": ["-h", "--help"]})
    @click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
                  help="Show the version and exit.")
    @click.pass_context
    def cli(ctx: click.Context) -> None:
        """serQ: an LLM serving deployment as a program, simulated.

        Run `serq COMMAND --help` for a command's options. The commands come from the installed parts;
        `serq plugins` lists them.
        """
        ctx.obj = pm

    for name, command in collect(pm, "serq_register_commands", "command", key=lambda c: c.name).items():
        cli.add_command(command, name)
    return cli


def is_user_error(exc: BaseException) -> bool:
    return bool(getattr(type(exc), "serq_user_error", False))


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``serq`` and ``python -m serq``."""
    from . import plugins

    previous = plugins._running
    try:
        pm = get_plugin_manager()
        plugins._running = pm
        cli = build_cli(pm)
        rv = cli.main(args=argv, prog_name="serq", standalone_mode=False)
        code = rv if isinstance(rv, int) else 0
    except click.exceptions.UsageError as e:
        e.show()
        code = 2
    except click.exceptions.Exit as e:
        code = e.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        code = 130
    except click.ClickException as e:
        e.show()
        code = 1
    except BrokenPipeError:
        code = 1
    except OSError as e:
        if e.filename is None:  # not about a file the user named: a bug, with its traceback
            raise
        click.echo(f"error: {e.filename}: {e.strerror or e}", err=True)
        code = 1
    except Exception as e:  # a user's mistake is one message; anything else is a bug with a traceback
        if not is_user_error(e):
            raise
        msg = str(e)
        click.echo(msg if msg.startswith("error") or ": error:" in msg else f"error: {msg}", err=True)
        code = 1
    finally:
        plugins._running = previous
    sys.exit(code)
