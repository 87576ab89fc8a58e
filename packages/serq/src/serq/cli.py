"""The ``serq`` command, assembled from the subcommands the installed parts register.

Exit status: 0 on success, 1 for an error in a program or an input (one ``error:`` line, with source
context where there is a source), 2 for a usage error (click's, and a flag's value its own form refuses,
:class:`serq.errors.UsageError`), 130 when stopped by Ctrl-C, 143 by SIGTERM and 129 by SIGHUP (a closed
terminal; ``serq run`` writes the partial report first; see :mod:`serq.signals`). A command may add its own
(``serq run``: 3 for a run stopped at a bound the user set).

:func:`main` handles SIGINT, SIGTERM and SIGHUP before it imports anything else (click, pluggy, the parts), so a
Ctrl-C early in start-up is the one line ``interrupted`` too; before that, from the first statements of the
``serq`` package, the command's start-up handler (``serq._startup_interrupt``) says the same and exits 130.

Standard output that cannot take what a command writes is not a bug: a reader that went away (``serq run
x.sq | head -c1``, a broken pipe) ends the command quietly with status 141, as a program killed by
SIGPIPE ends; a full device, a closed descriptor (``>&-``) or another failed write is one line on stderr,
``error: cannot write to standard output: REASON``, and status 1. A command that a signal stopped keeps the
signal's status (130, 143, 129) whatever its standard output did.
"""

from __future__ import annotations

import errno
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import click


def _show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # click's version_option, with the version looked up only when it is asked for
    if not value or ctx.resilient_parsing:
        return
    import click

    from . import __version__

    click.echo(f"serq, version {__version__}", color=ctx.color)
    ctx.exit()


class LazyCommand:
    """A subcommand registered by its name and where it is defined, ``"module:attribute"``, and imported
    only when it is needed: when the command line names it, or ``serq --help`` lists the commands.
    ``register(LazyCommand("run", "serq_sim.cli:run_command"))`` in ``serq_register_commands`` adds the
    command ``run`` without importing ``serq_sim.cli`` (and click's options of it) in every other
    command's start-up. What ``target`` names must be a ``click.Command`` of that ``name``."""

    __slots__ = ("name", "target")

    def __init__(self, name: str, target: str):
        self.name = name
        self.target = target

    def load(self, provider: Callable[[], str] | None = None) -> click.Command:
        """The command ``target`` names. What cannot be had (its module raises on import or is missing, or
        what it names is not a click command of this name) is a :class:`~serq.errors.PluginError` naming
        the plugin that registered it, ``provider()`` (``NAME (DIST VERSION)``), when it is known."""
        import click

        from .errors import PluginError, printable
        from .plugins import BadEntryPoint, load_object, raising_line

        try:
            command = load_object(self.target)
        except (PluginError, KeyboardInterrupt):  # (Ctrl-C, SIGTERM: the command's stop, wherever it landed)
            raise
        except BaseException as e:  # noqa: BLE001 - whatever the command's import raises is its plugin's failure
            # (a sys.exit() of its module ended `serq --help` and the command with that status and no word)
            by = f" (registered by {provider()})" if provider is not None else ""
            if isinstance(e, BadEntryPoint):
                raise PluginError(printable(f"error: the command {self.name!r}{by} cannot be loaded: its target "
                                            f"{e}")) from None
            here = raising_line(e)
            at = f" at {printable(here[0])}:{here[1]}" if here is not None else ""
            raise PluginError(printable(f"error: the command {self.name!r}{by} cannot be loaded ({self.target}): "
                                        f"{' '.join(f'{type(e).__name__}: {e}'.split())}") + at) from e
        if not isinstance(command, click.Command) or command.name != self.name:
            by = f" (registered by {provider()})" if provider is not None else ""
            raise PluginError(f"error: the command {self.name!r}{by} registered as {self.target} is not a click "
                              f"command named {self.name!r}")
        return command

    def __repr__(self) -> str:
        return f"<LazyCommand {self.name} = {self.target}>"


class Interrupt(BaseException):
    """A ``KeyboardInterrupt`` (Ctrl-C, or :class:`serq.signals.Terminated` for SIGTERM) raised in a command,
    carried past click's ``main`` (:meth:`SerqGroup.invoke`), which turns one into ``Abort`` after a blank
    line on stderr. ``interrupt`` is the exception itself, whose traceback names a plugin's code it stopped."""

    def __init__(self, interrupt: KeyboardInterrupt):
        super().__init__(interrupt)
        self.interrupt = interrupt


def _group_class() -> type:
    import click

    class SerqGroup(click.Group):
        """The ``serq`` group: a :class:`LazyCommand` is imported when it is first looked up.

        One that cannot be loaded (its module raises on import, say) takes no other command with it:
        ``serq --help`` lists it with the reason, and only naming it fails, with one message naming the
        plugin that registered it (from ``registry``, the commands' :class:`serq.plugins.Registry`)."""

        registry = None
        #: the plugin manager the commands come from (a command's resolution comes before the group's
        #: callback hands it to the commands as ``ctx.obj``)
        pm = None

        def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
            command = self.commands.get(cmd_name)
            if isinstance(command, LazyCommand):
                from .errors import PluginError

                reg = self.registry
                try:
                    command = command.load(None if reg is None else lambda: reg.provider(cmd_name))
                except PluginError as e:
                    command = _unloadable(cmd_name, str(e))
                self.commands[cmd_name] = command
            if command is not None and "_serq_clash" not in command.__dict__:
                reg = self.registry
                command._serq_clash = _option_clash(  # type: ignore[attr-defined]
                    command, None if reg is None or cmd_name not in reg else reg.provider(cmd_name))
            return command if command is None else once_only(command)

        def invoke(self, ctx: click.Context):
            # Ctrl-C or SIGTERM in a command passes click's main as Interrupt, which main ends as click's Abort
            # was ended: click wrote a blank line on stderr before it raised Abort, the first line of the two
            try:
                return super().invoke(ctx)
            except KeyboardInterrupt as e:
                raise Interrupt(e) from e

        def resolve_command(self, ctx: click.Context, args: list[str]):
            try:
                return super().resolve_command(ctx, args)
            except click.UsageError:  # no such command: one a switched-off part registers says so
                if not args or args[0] in self.commands or args[0].startswith("-"):
                    raise
                from .parts import disabled_command, missing_command, others_switched_off

                why = disabled_command(self.pm, args[0]) or missing_command(self.pm, args[0])
                if why is None:
                    off = others_switched_off(self.pm)
                    option = self.option_named(ctx, args[0])
                    if not off and not option:
                        raise
                    why = f"no such command {args[0]!r}{option}{off}"
                raise click.UsageError(why, ctx=ctx) from None

        def option_named(self, ctx: click.Context, name: str) -> str:
            """`` (--find is an option of serq sweep)`` when ``name`` is no command but the long option
            ``--name`` of some (``serq find`` for ``serq sweep --find``, ``serq records`` for ``--records``),
            the commands named in the listing's order; nothing otherwise. Said only on the way to the error,
            where loading every command costs nothing a command run would."""
            flag = f"--{name}"
            if name != name.strip("-") or not name or not all(c.isalnum() or c in "-_" for c in name):
                return ""
            having = []
            for cmd_name in self.list_commands(ctx):
                try:
                    command = self.get_command(ctx, cmd_name)
                except Exception:  # noqa: BLE001 - a command that cannot be loaded offers no option
                    continue
                params = getattr(command, "params", ())
                if any(flag in getattr(p, "opts", ()) or flag in getattr(p, "secondary_opts", ()) for p in params):
                    having.append(f"serq {cmd_name}")
            if not having:
                return ""
            which = having[0] if len(having) == 1 else f"{', '.join(having[:-1])} and {having[-1]}"
            return f" ({flag} is an option of {which})"

    return SerqGroup


def once_only(command: click.Command) -> click.Command:
    """``command`` (and, for a group, every subcommand it gives) refusing an option of one value given more
    than once: ``serq run p.sq --seed 1 --seed 2`` is the usage error ``--seed is given twice (1 and 2)``
    (status 2), as ``--set x=1 --set x=2`` is an error; click took the last value silently. The rule of
    every serq command, plugins' included, put here once: the ``serq`` group applies it to each command as
    it is looked up. Not refused: an option that takes several values (``multiple``: ``--set``, ``--show``),
    a counted one, and a flag (``--json --json`` says the same thing twice).

    Applied to the command object itself (its ``parse_args``, and a group's ``get_command``), as the commands
    are click's own classes, made by each part's ``@click.command``; applying it again changes nothing."""
    import click

    if command.__dict__.get("_serq_once_only"):
        return command
    parse = command.parse_args

    def parse_args(ctx: click.Context, args: list[str]) -> list[str]:
        clash = command.__dict__.get("_serq_clash")
        if clash and not ctx.resilient_parsing:
            command._serq_clash = None  # type: ignore[attr-defined]  # (said once)
            click.echo(clash, err=True)
        if not ctx.resilient_parsing:
            _refuse_option_as_value(command, ctx, args)
            _refuse_repeats(command, ctx, args)
        try:
            return parse(ctx, args)
        except click.UsageError as e:
            if e.ctx is None:  # click's parser raises some without one ("option '--seed' requires an
                # argument"), and the message then pointed at 'serq --help', not this command's
                e.ctx, e.cmd = ctx, command
            raise

    command.parse_args = parse_args  # type: ignore[method-assign]
    if isinstance(command, click.Group):
        get = command.get_command

        def get_command(ctx: click.Context, cmd_name: str) -> click.Command | None:
            sub = get(ctx, cmd_name)
            return sub if sub is None else once_only(sub)

        command.get_command = get_command  # type: ignore[method-assign]
    command._serq_once_only = True  # type: ignore[attr-defined]
    return command


def _option_clash(command: click.Command, provider: str | None) -> str | None:
    """The warning of a command two of whose parameters take one option's name (``--x`` of both ``x`` and
    ``x2``): click gives it to the last of them and warns, in Python's words, at each of its parses (four
    warnings of ``serq hello``, each naming a line of serQ's); it is said once, naming the command and the
    plugin that registered it, when the command is parsed (click's own are silenced: :func:`main`)."""
    import click

    if isinstance(command, click.Group):
        return None
    seen: dict[str, str] = {}
    for param in getattr(command, "params", ()):
        for opt in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())):
            first = seen.setdefault(opt, str(param.name))
            if first != param.name:
                from .errors import printable

                by = f" (registered by {provider})" if provider else ""
                return printable(f"warning: the command {command.name!r}{by} gives the option {opt} to two of its "
                                 f"parameters, {first} and {param.name}: {opt} sets {param.name} alone")
    return None


def _refuse_option_as_value(command: click.Command, ctx: click.Context, args: list[str]) -> None:
    """The usage error of an option that takes a value followed, where its value belongs, by another option
    of the command: ``serq plot r.csv --cdf -o cdf.svg`` (``--cdf`` without its name). click takes the next
    word as the value whatever it is, so the error named what that left out (``missing option '-o' /
    '--out'``, of a command line that gives ``-o``), or the run went on with ``--set`` of ``--json`` as a
    value. Part of :func:`once_only`, the rule of every serq command. A value that merely starts with ``-``
    (``--warmup -1``, a ``--def`` body) is the command's to judge; ``--opt=value`` and the words after
    ``--`` are values whatever they say."""
    import click

    if isinstance(command, click.Group):
        return
    names: dict[str, click.Option] = {}
    for param in command.get_params(ctx):
        if isinstance(param, click.Option):
            for name in (*param.opts, *param.secondary_opts):
                names[name] = param
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            return
        param = names.get(word)
        if param is None or param.is_flag or param.count:
            i += 1
            continue
        n = max(param.nargs, 1)
        for k in range(i + 1, min(i + 1 + n, len(args))):
            if args[k] in names:
                raise click.UsageError(f"{word} takes a value, and {args[k]} where it belongs is an option of "
                                       f"this command: give {word} its value before {args[k]}", ctx=ctx)
        i += 1 + n


def _single_valued(param: click.Parameter) -> bool:
    import click

    return (isinstance(param, click.Option) and not param.multiple and not param.count and not param.is_flag)


def _refuse_repeats(command: click.Command, ctx: click.Context, args: list[str]) -> None:
    """The usage error of the first option of one value that ``args`` give twice (see :func:`once_only`):
    ``args`` are parsed as the command will parse them, and a parse that fails is left to the command,
    whose own parse says why."""
    import click

    parser = command.make_parser(ctx)
    values: dict[int, list] = {}
    try:  # what each occurrence gave, for the message (click's parser keeps the last only); only names
        # the option where click's parser is not as it was when this was written
        for opt in {id(o): o for o in (*parser._long_opt.values(), *parser._short_opt.values())}.values():
            if not _single_valued(opt.obj):
                continue

            opt.process = _recording(opt.process, values.setdefault(id(opt.obj), []))
    except AttributeError:  # pragma: no cover - another click
        values = {}
    try:
        _, _, order = parser.parse_args(args=list(args))
    except click.ClickException:
        return
    seen: set[int] = set()
    for param in order:
        if not _single_valued(param):
            continue
        if id(param) in seen:
            name = "/".join(param.opts)
            given = values.get(id(param), [])
            shown = ""
            if len(given) >= 2:
                texts = [" ".join(map(str, v)) if isinstance(v, (tuple, list)) else str(v) for v in given]
                texts = [t if len(t) <= 40 else t[:37] + "..." for t in texts]
                shown = f" ({', '.join(texts[:-1])} and {texts[-1]})"
            raise click.UsageError(f"{name} is given {'twice' if len(given) <= 2 else f'{len(given)} times'}"
                                   f"{shown}; it takes one value: give it once", ctx=ctx)
        seen.add(id(param))


def _recording(process: Callable, into: list) -> Callable:
    """``process`` (an option's in click's parser) that also appends each value it is given to ``into``."""

    def recorded(value, state) -> None:
        into.append(value)
        process(value, state)

    return recorded


def _unloadable(name: str, message: str) -> click.Command:
    """A command that stands for one that cannot be loaded: ``serq --help`` lists it with the reason, and
    running it (with any arguments) is the one message ``message``."""
    import click

    from .errors import PluginError

    def refuse(**_kwargs) -> None:
        raise PluginError(message)

    reason = message.removeprefix("error: ").split("\n", 1)[0]
    return click.Command(name, callback=refuse, help=f"(cannot be loaded) {reason}", add_help_option=False,
                         context_settings={"ignore_unknown_options": True, "allow_extra_args": True})


def build_cli(pm=None) -> click.Group:
    """The ``serq`` group with every registered subcommand (a :class:`LazyCommand` stays unimported until
    it is looked up)."""
    import click

    from .plugins import collect, get_plugin_manager

    pm = pm or get_plugin_manager()

    @click.group(cls=_group_class(), context_settings={"help_option_names": ["-h", "--help"]})
    @click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
                  help="Show the version and exit.")
    @click.pass_context
    def cli(ctx: click.Context) -> None:
        """serQ: an LLM serving deployment as a program, simulated.

        Run `serq COMMAND --help` for a command's options, exit status and examples. The commands come from
        the installed parts; `serq plugins` lists them. The guide is docs/tutorial.md of the repository.
        """
        ctx.obj = pm

    commands = collect(pm, "serq_register_commands", "command", key=lambda c: c.name, check=_command_problem)
    for name, command in commands.items():
        cli.add_command(command, name)
    cli.registry = commands
    cli.pm = pm
    return cli


def _command_problem(command) -> str | None:
    """Why ``serq_register_commands`` cannot take ``command`` (``None``: it can)."""
    import click

    if isinstance(command, (click.Command, LazyCommand)):
        name = command.name
        if not (isinstance(name, str) and name):
            return f"the command {command!r} has no name"
        if name.startswith("-"):  # the command line reads it as an option: no one could run the command
            return f"the command's name {name!r} begins with '-', which the command line reads as an option's"
        return None
    return f"{command!r} is not a click.Command (nor a serq.cli.LazyCommand)"


#: The status of a command whose standard output was a pipe that its reader closed (128 + SIGPIPE).
BROKEN_PIPE_STATUS = 141


class StdoutError(Exception):
    """Standard output refused a write (or a flush): ``cause`` is the ``OSError``."""

    def __init__(self, cause: OSError):
        super().__init__(f"error: cannot write to standard output: {cause.strerror or cause}")
        self.cause = cause


class _Diagnostics:
    """``sys.stderr`` while a command runs (:func:`main`): the stream itself, but a write or a flush it refuses (a
    full device, ``2>/dev/full``; a reader that went away) makes its descriptor the null device, so that what is
    said there from then on, and what its buffer held, is dropped, and the command goes on: standard error carries
    what a command says of its work, not the work, and the status is the work's (docs/architecture.md). A sweep
    with ``-o`` ended with status 1 after writing every output (its summary line's ``OSError``, taken for a bug),
    a comparison printed no table (its note came first) and a usage error was status 1 (its own message's
    ``OSError``)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, data):
        try:
            return self._stream.write(data)
        except OSError:
            self._gone()
            return len(data)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            self._gone()

    def _gone(self) -> None:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self._stream.fileno())
            finally:
                os.close(null)
            self._stream.flush()  # (what the buffer held, into the null device)
        except (OSError, ValueError):  # (no descriptor beneath, or a stream of another kind: nothing more to do)
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _Output:
    """``sys.stdout`` while a command runs: the stream itself, whose failed writes and flushes raise
    :class:`StdoutError` (so they are told apart from an ``OSError`` of anything else). ``None`` stands
    for a closed standard output (Python sets ``sys.stdout`` to ``None`` then): every write fails with
    ``EBADF``."""

    def __init__(self, stream, binary: bool = False):
        self._stream = stream
        self._binary = binary

    def _failed(self, e: OSError | None = None):
        return StdoutError(e or OSError(errno.EBADF, os.strerror(errno.EBADF)))

    def write(self, data):
        if self._stream is None:
            raise self._failed()
        try:
            raw = self._raw()
            if raw is not None:
                return self._write_all(raw, data)
            return self._stream.write(data)
        except OSError as e:
            raise self._failed(e) from None

    def _raw(self):
        """The unbuffered file beneath (``PYTHONUNBUFFERED=1``, ``python -u``: the text stream writes
        through to a raw ``FileIO``), else ``None``. A raw write may take part of the data (a pipe whose
        reader goes away mid-write, a signal, a non-blocking descriptor) and says so by its count, which
        the text stream above it drops: the rest was lost, and a broken pipe ended the command with
        status 0 and its output cut short."""
        import io

        stream = self._stream if self._binary else getattr(self._stream, "buffer", None)
        if isinstance(stream, io.RawIOBase) and (self._binary or os.linesep == "\n"):
            return stream
        return None

    def _write_all(self, raw, data) -> int:
        if self._binary:
            view = memoryview(data).cast("B")
        else:
            self._stream.flush()
            view = memoryview(data.encode(self._stream.encoding, self._stream.errors))
        while view:
            n = raw.write(view)
            if n is None:  # a non-blocking descriptor that takes nothing now: wait until it can
                import select

                select.select([], [raw], [])
                continue
            view = view[n:]
        return len(data)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except OSError as e:
            raise self._failed(e) from None

    @property
    def buffer(self):
        return _Output(None if self._stream is None else self._stream.buffer, binary=True)

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    @property
    def encoding(self) -> str:
        return "utf-8" if self._stream is None else self._stream.encoding

    @property
    def errors(self) -> str:
        return "strict" if self._stream is None else self._stream.errors

    def fileno(self) -> int:
        if self._stream is None:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        return self._stream.fileno()

    def __getattr__(self, name: str):
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


def _utf8(stream) -> tuple[str, str] | None:
    """Make the text stream ``stream`` (standard output) encode UTF-8, keeping its error handler; what it
    had, for :func:`_restore`, or ``None`` when it encoded UTF-8 already (or cannot be changed).

    What serq writes to standard output is what it writes to a file: a report, the IR, a table, JSON, in
    UTF-8, the encoding of every file it reads (``serq ir p.sq > p.ir.json`` is an IR file ``serq run``
    takes, and ``serq run p.sq > r.txt`` the bytes of ``-o r.txt``). The locale's encoding is not that
    everywhere (``PYTHONIOENCODING=ascii`` or ``latin-1``, a C locale with ``PYTHONUTF8=0``, a Windows
    code page for a redirected output): the text report's ``±`` and any name of an IR file outside that
    encoding ended the command in a ``UnicodeEncodeError`` traceback, and an IR or a table written in
    Latin-1 was refused as not UTF-8 when serq read it back."""
    import codecs

    encoding, errors = getattr(stream, "encoding", None), getattr(stream, "errors", None)
    reconfigure = getattr(stream, "reconfigure", None)
    if not isinstance(encoding, str) or reconfigure is None:
        return None
    try:
        if codecs.lookup(encoding).name == "utf-8":
            return None
    except LookupError:
        pass
    try:
        reconfigure(encoding="utf-8", errors=errors)
    except (OSError, ValueError):  # (a stream that takes no new encoding: written as it is)
        return None
    return encoding, errors


def _restore(stream, had: tuple[str, str] | None) -> None:
    """Give ``stream`` back the encoding :func:`_utf8` took from it (a program that calls :func:`main` and
    goes on writing keeps its own)."""
    if had is not None:
        try:
            stream.reconfigure(encoding=had[0], errors=had[1])
        except (OSError, ValueError):  # (its flush failed: said already, as standard output's failure)
            pass


def _hold_descriptor(fd: int) -> None:
    """Open the null device at ``fd`` if it is closed, so that no file the command opens becomes its
    standard output or error (nor a child's)."""
    try:
        os.fstat(fd)
        return
    except OSError:
        pass
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:  # pragma: no cover - no null device
        return
    if null != fd:
        os.dup2(null, fd)
        os.close(null)
    from .files import HELD_CLOSED

    HELD_CLOSED.add(fd)  # (an output naming it, -o /dev/stdout, is refused: it would go to the null device)


def _silence_stdout() -> None:
    """After standard output failed: point its descriptor at the null device, so the interpreter's
    flush at exit has somewhere to put what is still buffered (instead of a second error)."""
    stream = sys.__stdout__
    if stream is None:
        return
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError):  # pragma: no cover - a stream without a descriptor
        return
    try:
        os.dup2(null, fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(null)


def is_user_error(exc: BaseException) -> bool:
    return bool(getattr(type(exc), "serq_user_error", False))


def _exit_quickly() -> None:
    """At the interpreter's exit (an ``atexit`` function): collect the garbage, as the shutdown does first
    (the finalizers of unreachable objects run, unclosed files are flushed), then freeze what is left.

    What is left is what still exists at exit: the modules, their classes and functions, the plugin
    manager. The shutdown would take them apart through the cyclic collector, pass after pass, about
    10 ms of CPU after a short command; frozen, it leaves them to the end of the process (Python runs no
    finalizer of an object that still exists at exit anyway). Only at exit: a program that calls
    :func:`main` and goes on keeps its collector as it was."""
    import gc

    if gc.isenabled():
        gc.collect()
    gc.freeze()
    if _own_process and _exit_last and isinstance(_exit_code, int):
        _end_process(_exit_code)


def _end_process(code: int) -> None:
    """The end of ``serq`` as the process's own command (:func:`entry`), from the last function at exit
    (:func:`_exit_quickly`, when it is the last: every other one, the command's own, has run, and Python
    has joined the command's threads): the standard output and error flushed, then ``os._exit(code)``,
    without the interpreter's teardown.

    What the command made is frozen (:func:`_leave_to_exit`), so the teardown would not free it, and the
    native libraries it used were torn down around objects of theirs still alive: Arrow's (pandas reads
    a Parquet file through it, and keeps its words in Arrow arrays) ended the process with SIGABRT,
    ``terminate called without an active exception``, about once in 20 commands under load, after the
    command had said all it had to (a table refused by ``serq plot``: the refusal's traceback, frozen,
    held the table read). The process's files are its outputs, each written whole and closed before the
    command returns (:mod:`serq.files`), and a library's own function at exit (logging's flush of its
    handlers) has run; what is left to flush is the standard streams. A standard stream that cannot
    take what is left is status 120, as Python's own exit gives."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # (a closed stream is a ValueError)
            code = 120
    os._exit(code)


_exit_registered = False

#: whether :func:`_exit_quickly` is the last function at exit (none was registered before it)
_exit_last = False

#: the status :func:`main` ends the command with, for :func:`_end_process` (None: it ended another way, an
#: exception Python reports at exit itself)
_exit_code: int | None = None

#: set by :func:`entry` (the ``serq`` command as a process): the collector is off from the start until the
#: command line is assembled, then what exists is frozen (see :func:`entry`)
_startup_gc = False

#: set by :func:`entry`: ``serq`` is the process's own command, which ends when :func:`main` does
_own_process = False


def entry() -> None:
    """The ``serq`` script's and ``python -m serq``'s entry point: :func:`main` as the process's own command.

    The cyclic collector is switched off while the command line is assembled (the plugins found and
    imported, click and the commands' registrations: about 20 000 objects, nearly all modules, classes
    and functions that live as long as the process, and a few hundred of garbage), then those objects
    are frozen (``gc.freeze``: no later collection walks them) and the collector is on again for the
    command's own work, at the threshold a compile and a run work at (:data:`serq.shared.WORK_GC_THRESHOLD`):
    the command's work is a compile or a run and the modules they import, whose young collections (about
    20 of a short command, 2 % of its instructions) found next to nothing to free. Collections during
    start-up walked them again and again: about 5 % of a short command's CPU. Only here, not in
    :func:`main`: a program that calls :func:`main` and goes on keeps its collector as it was."""
    global _startup_gc, _own_process
    import gc

    from .shared import stack_room

    _names_as_utf8()
    stack_room()  # (a program nesting 1 000 deep recurses through C frames: serq.shared.STACK_BYTES)
    _own_process = True
    if gc.isenabled():
        gc.disable()
        _startup_gc = True
    main()


def _names_as_utf8() -> None:
    """Start the command again in Python's UTF-8 mode (``-X utf8``, passed on to a sweep's workers) when this
    process decodes file names as ASCII: the C or POSIX locale with UTF-8 mode switched off
    (``LC_ALL=C PYTHONUTF8=0``; Python's own default in that locale is UTF-8 mode). There the system has no
    encoding for a name beyond ASCII, and Python gave the bytes of ``prö.sq`` as lone surrogates, no text:
    every command that compiles refused it as "not UTF-8 text" (its content blamed), and a program's
    ``trace "tö.csv"`` was a ``UnicodeEncodeError`` traceback. serQ's names are UTF-8 text (the IR, a
    table's cells, the cache), and standard output is UTF-8 whatever the locale: the file is opened by its
    bytes' name and run. Only the process's own command (:func:`entry`), and only where the interpreter's
    command line is known; if the start fails the command goes on as it is."""
    import codecs

    if sys.flags.utf8_mode:
        return
    try:
        if codecs.lookup(sys.getfilesystemencoding()).name != "ascii":
            return
    except LookupError:  # pragma: no cover - Python names only codecs it has
        return
    argv = getattr(sys, "orig_argv", None)
    if not argv or not sys.executable:
        return
    try:
        sys.stdout.flush()
        os.execv(sys.executable, [argv[0], "-X", "utf8", *argv[1:]])
    except (OSError, ValueError):  # (not started again: the command as this process has it)
        return


def _startup_done() -> None:
    """The command line is assembled: freeze what exists and switch the collector on, at the work threshold
    (:func:`entry`; never lower than it was, as :func:`serq.shared.collector_raised` raises it, and for the
    rest of the process, which the command is)."""
    global _startup_gc
    if _startup_gc:
        import gc

        from .shared import WORK_GC_THRESHOLD

        _startup_gc = False
        gc.freeze()
        first, *rest = gc.get_threshold()
        if 0 < first < WORK_GC_THRESHOLD:
            gc.set_threshold(WORK_GC_THRESHOLD, *rest)
        gc.enable()


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``serq`` and ``python -m serq``."""
    global _exit_registered, _exit_code, _exit_last
    from . import signals

    if not _exit_registered:  # registered first: it runs after every atexit function the command adds
        import atexit

        # (one registered before it, by a program that runs the command, runs after it: then the process ends
        # as Python ends it, not at _end_process, which would leave that function out)
        _exit_last = getattr(atexit, "_ncallbacks", lambda: 1)() == 0
        atexit.register(_exit_quickly)
        _exit_registered = True
    stderr = sys.stderr
    diagnostics = None
    if not isinstance(stderr, _Diagnostics):  # (a failed write there fails no command)
        stream = stderr
        if stream is None:  # started with standard error closed (2>&-): what is said there is dropped
            _hold_descriptor(2)
            stream = os.fdopen(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stderr = diagnostics = _Diagnostics(stream)
    try:
        signals.install()  # in the try: a signal as the handlers go in is an interrupt like any other
        code = _main(argv)
        if signals.pending():  # its exception was dropped on the way (serq.signals), and the command ended
            code = _interrupted()
    except KeyboardInterrupt:  # before or after a command (a run catches its own: its partial report)
        code = _interrupted()
    except BaseException:
        if not signals.pending():
            raise
        code = _interrupted()  # its exception became another on the way (serq.signals: __set_name__)
    finally:
        _leave_to_exit()
        signals.uninstall(_own_process)
        if diagnostics is not None and sys.stderr is diagnostics:
            sys.stderr = stderr
    if _own_process:
        _exit_code = code
    sys.exit(code)


def _leave_to_exit() -> None:
    """The command is done (its outputs written, or its error said) and ``serq`` is the process's own
    command (:func:`entry`): what exists now is frozen (``gc.freeze``), so that the collection at exit
    (:func:`_exit_quickly`) does not walk it. A run leaves its simulation behind as garbage in reference
    cycles (every session, its generator, its jobs and holds, the engine): after a run with millions of
    sessions live, that collection walked and freed them for 6-14 s after the report was out, the partial
    report of a SIGTERM included, whose sender waits for the process to end. Frozen, they go with the
    process. A program that calls :func:`main` and goes on keeps its collector as it was."""
    if _own_process:
        import gc

        gc.freeze()


def _interrupted() -> int:
    from . import signals

    return signals.interrupted()


def _usage_message(e, argv: list[str] | None = None) -> str:
    """A usage error (a bad flag, a missing argument, an option's value refused) as one line, as every
    error of serq's is: ``error: invalid value for '--horizon': … (see 'serq run --help')``. (click's own
    form is three lines, ``Usage: …``, ``Try …`` and ``Error: …``.)"""
    from .errors import printable

    # (click quotes some of what the command line gave as it is, `got unexpected extra argument (x)`: a
    # character of it that does not print is written as an escape, as in every message of serq's)
    msg = printable(" ".join(e.format_message().split("\n")).strip())
    if msg[:1].isupper() and msg[1:2].islower():  # an English word first: the message goes on after "error:"
        msg = msg[0].lower() + msg[1:]
    msg = msg[:-1] if msg.endswith(".") else msg
    where = e.ctx.command_path if getattr(e, "ctx", None) is not None else "serq"
    return f"error: {msg}{_dash_file(e, argv)} (see '{where} --help')"


def _dash_file(e, argv: list[str] | None) -> str:
    """For an option click does not know that is the start of a file's name given on the command line (`serq
    check -p.sq`, read as the options `-p`, `-.`, …): that the file is there, and how to give it (it was
    `no such option '-p'` alone, naming neither the file nor the way)."""
    import click

    name = getattr(e, "option_name", None)
    if not isinstance(e, click.exceptions.NoSuchOption) or not isinstance(name, str):
        return ""
    args = sys.argv[1:] if argv is None else argv
    for arg in args:
        if arg == "--":
            break
        if isinstance(arg, str) and arg.startswith(name) and arg[:1] == "-":
            try:
                there = os.path.lexists(arg)
            except (OSError, ValueError):  # a name the system refuses to look up
                there = False
            if there:
                from .errors import printable, shown_path

                shown = printable(shown_path(arg))
                return f"; {shown} is a file here: give it as ./{shown}, or after --"
    return ""


def _memory_hint(argv: list[str] | None, e: BaseException | None = None) -> str:
    """What bounds the memory of the command ``argv`` runs, said after "out of memory": for ``serq run``, where
    it ran out when the exception says (:class:`serq.errors.OutOfMemory`: compiling its program there was no
    sample that ``--max-samples`` could bound), else its samples, which ``--max-samples`` bounds; nothing for
    another command, which has no such flag (``serq check`` and ``serq sweep`` were told of ``serq run
    --max-samples``)."""
    from .errors import OutOfMemory

    args = sys.argv[1:] if argv is None else argv
    command = next((a for a in args if isinstance(a, str) and not a.startswith("-")), None)
    if command != "run":
        return ""
    return f" {e.where}" if isinstance(e, OutOfMemory) else " (--max-samples N bounds the samples a run holds)"


def _named_by_user(e: OSError, argv: list[str] | None) -> bool:
    """Whether the file an OSError is about is one the command line names (an argument, or an option's
    value, ``--opt=FILE`` too), as given or as the same absolute path."""
    args = sys.argv[1:] if argv is None else argv
    names = set()
    for f in (e.filename, getattr(e, "filename2", None)):
        if isinstance(f, (str, os.PathLike)):
            names.add(_absolute(os.fsdecode(f)))
    for arg in args:
        if not isinstance(arg, str):
            continue
        for part in (arg, arg.partition("=")[2]):
            if part and _absolute(part) in names:
                return True
    return False


def _absolute(path: str) -> str:
    """``os.path.abspath(path)``, or ``path`` normalized when the current folder is gone (abspath asks
    for it, and that is an OSError: :func:`_cwd_gone`)."""
    try:
        return os.path.abspath(path)
    except OSError:
        return os.path.normpath(path)


def _cwd_gone() -> bool:
    """Whether the current folder no longer exists (removed, or renamed away, while a shell was in it):
    ``os.getcwd()`` then fails, and with it every relative path made absolute (``os.path.abspath``,
    ``realpath``, ``Path.resolve``), an OSError naming no file."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    except OSError:  # (another reason it cannot be had: not this one)
        return False
    return False


#: what a command in a current folder that no longer exists is told
CWD_GONE = ("error: the current folder no longer exists (it was removed or renamed while in use); cd to a folder "
            "that exists: without it a relative path cannot be resolved, nor worker processes started")


def _named(names: Sequence[str]) -> str:
    """``names`` as one warning lists them: each quoted (and cut, :func:`serq.errors.clipped`), the first five
    and how many more: ``'a', 'b' and 'c'``, ``'a', 'b', 'c', 'd', 'e' and 19995 more``. A variable of
    20 000 names no plugin has was said in 20 000 warnings, one a name, and a name of 100 000 characters
    whole."""
    from .errors import clipped

    shown = [clipped(repr(str(n))) for n in names[:5]]
    if len(names) > 5:
        return f"{', '.join(shown)} and {len(names) - 5} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _main(argv: list[str] | None) -> int:
    import warnings

    import click
    import pluggy

    from . import plugins
    from .errors import printable_lines

    exiting: SystemExit | None = None
    stdout = sys.stdout
    if stdout is None:
        _hold_descriptor(1)
    if sys.stderr is None:
        _hold_descriptor(2)
    guarded = isinstance(stdout, _Output)
    had = None
    if not guarded:
        had = _utf8(stdout)
        sys.stdout = _Output(stdout)
    pm = None
    # what pluggy warns of when an old-style hook wrapper raises in its teardown is raised too, and said once
    # as the plugin's failure (plugins.plugin_failure): the warning said it again, with a line of serQ's
    warnings.filterwarnings("ignore", category=pluggy.PluggyTeardownRaisedWarning)
    # click's warning of an option two parameters of a command take, at each parse: said once instead
    # (_option_clash, naming the command's plugin)
    warnings.filterwarnings("ignore", message=r"The parameter \S+ is used more than once", category=UserWarning)
    try:
        pm = plugins.get_plugin_manager()
        unknown = getattr(pm, "unknown_disabled", ())
        if unknown:
            # as a misspelt name it blocks nothing: said, not refused (a plugin uninstalled since is fine)
            click.echo(printable_lines(f"warning: SERQ_DISABLED_PLUGINS names {_named(unknown)}, which no "
                                       "installed plugin is called (`serq plugins` lists their names)"), err=True)
        cli = build_cli(pm)
        _startup_done()
        rv = cli.main(args=argv, prog_name="serq", standalone_mode=False)
        code = rv if isinstance(rv, int) else 0
    except SystemExit as e:  # a command's own sys.exit(): its status, once what it wrote is out
        exiting, code = e, 0
    except KeyboardInterrupt as e:  # Ctrl-C, SIGTERM: main says so; a plugin's code that did not return is named
        where = plugins.plugin_at(pm, e)
        if where is not None:
            click.echo(f"serq: interrupted in {where}", err=True)
        raise
    except click.exceptions.UsageError as e:
        # a group given no command (`serq`, `serq vllm`): its help, the lines --help prints, on stderr with the
        # status of a usage error; made one line, it was "error: usage: serq [OPTIONS] COMMAND …    serQ: …
        # Commands:   ast …" (see 'serq --help')", every command's summary run together
        no_command = getattr(click.exceptions, "NoArgsIsHelpError", ())
        click.echo(e.format_message() if isinstance(e, no_command) else _usage_message(e, argv), err=True)
        code = 2
    except click.exceptions.Exit as e:
        code = e.exit_code
    except Interrupt as e:  # Ctrl-C or SIGTERM in a command (SerqGroup.invoke)
        where = plugins.plugin_at(pm, e.interrupt)
        if where is not None:  # a plugin's code that did not return: named
            click.echo(f"serq: interrupted in {where}", err=True)
        code = _interrupted()
    except click.exceptions.Abort as e:
        if isinstance(e.__context__, KeyboardInterrupt):  # click's own turn of Ctrl-C (or SIGTERM)
            where = plugins.plugin_at(pm, e.__context__)
            if where is not None:  # a plugin's code that did not return: named
                click.echo(f"serq: interrupted in {where}", err=True)
            code = _interrupted()
        else:
            click.echo("aborted", err=True)
            code = 130
    except click.ClickException as e:
        # a command's own (a plugin's `raise click.ClickException("…")`, click's FileError): one line in
        # serQ's form, `error: …`, where click's show() wrote `Error: …`; its exit code, 1 unless it says
        click.echo(printable_lines(f"error: {e.format_message()}"), err=True)
        code = e.exit_code
    except StdoutError as e:
        code = _output_failed(e)
    except MemoryError as e:  # the machine's limit, not a bug: one line (a run stops with its report if it can)
        click.echo(f"error: out of memory{_memory_hint(argv, e)}", err=True)
        code = 1
    except OSError as e:
        if e.filename is None and _cwd_gone():  # a relative path made absolute: one message, not a traceback
            click.echo(CWD_GONE, err=True)
            code = 1
        elif e.filename is None:  # not about a file the user named: a bug, with its traceback
            raise
        else:
            # a plugin's own file (a data file of its distribution, missing) is the plugin's failure, at its
            # line; a file the command line names is the user's, said as it is
            failure = None if _named_by_user(e, argv) else plugins.plugin_failure(pm, e)
            if failure is not None:
                click.echo(failure, err=True)
            else:
                # the name as every message prints it (serq.errors.shown_path): an -o of 120 000 characters
                # the system refused was repeated whole, where an input's name is cut around `…`
                from .errors import shown_path

                click.echo(printable_lines(f"error: {shown_path(e.filename)}: {e.strerror or e}"), err=True)
            code = 1
    except Exception as e:  # a user's mistake is one message; anything else is a bug with a traceback
        if getattr(type(e), "serq_internal_error", False):  # a check the user asked for found a bug
            click.echo(f"error: {e}\n(an internal check failed: a bug in serQ, not in the program; please report "
                       "it with the program, the seed and the command)", err=True)
            code = 70
        elif not is_user_error(e):
            # an exception in a plugin's code (a hook, a stage kind, a policy, a format it registered) is
            # one message naming the plugin and its line; anywhere else it is serQ's bug, with its traceback
            failure = plugins.plugin_failure(pm, e)
            if failure is None:
                raise
            click.echo(failure, err=True)
            code = 1
        else:
            msg = printable_lines(str(e))  # a name from a program's text does not drive the terminal
            click.echo(msg if msg.startswith("error") or ": error:" in msg else f"error: {msg}", err=True)
            # a flag's value its own form refuses is a usage error (serq.errors.UsageError), as click's are
            code = 2 if getattr(type(e), "serq_usage_error", False) else 1
    except BaseException as e:
        # a BaseException of a plugin's own (not SystemExit or Ctrl-C, above) raised in its command's code
        # (GeneratorExit, a class of its own): named as an exception is, not a traceback; serQ's keeps it
        failure = plugins.plugin_failure(pm, e)
        if failure is None:
            raise
        click.echo(failure, err=True)
        code = 1
    finally:
        _startup_done()  # (the command line could not be assembled: the collector is on again all the same)
        if not guarded:
            sys.stdout = stdout
    try:
        _Output(stdout).flush()
    except StdoutError as e:
        exiting, code = None, _output_failed(e)
    _restore(stdout, had)
    if exiting is not None:
        raise exiting
    return code


def _output_failed(e: StdoutError) -> int:
    """The status of a command whose standard output refused a write: 141 for a reader that went away (quiet),
    else 1 with the error said; but a command a signal stopped (SIGINT, SIGTERM, SIGHUP: a run's partial
    report printed to a pipe whose reader the same Ctrl-C ended) exits with the signal's status, 128 + N, as
    it does when its standard output takes the report (it exited 141, the signal not told by the status)."""
    import click

    from . import signals

    _silence_stdout()
    stopped = signals.exit_status()
    if isinstance(e.cause, BrokenPipeError):
        return stopped or BROKEN_PIPE_STATUS
    try:
        click.echo(str(e), err=True)
    except OSError:  # pragma: no cover - standard error refuses it too; the status still says so
        pass
    return stopped or 1
