"""The frontend's commands: ``serq fmt`` and ``serq ast``.

Registering them imports nothing of the frontend: every ``serq`` command line assembles them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click
from serq.files import MAX_SOURCE, read_input
from serq.options import Path as SerqPath


def _not_ir(f: str, command: str) -> None:
    """Refuse an IR file given to a command of serQ source (``serq fmt *.ir.json``, a glob that caught one):
    it was a parse error at its first ``{``, "unexpected `{` (expected a name)", of a file that is no source."""
    if Path(f).name.endswith(".ir.json"):
        from serq.errors import printable

        from .diagnostics import CompileError

        raise CompileError(f"error: {printable(f)}: an IR file, not serQ source: serq {command} reads a program's "
                           "source (.sq); serq check, ir and run read IR files")


class CheckFailed(Exception):
    """An error of ``serq fmt --check`` (a file that cannot be read or does not parse, a plugin that fails in
    its parse): its message as it is, status 2, where the same error is 1 without ``--check``. Status 1 of
    ``--check`` says "some file would be reformatted" and nothing else, so a script tells a file out of form
    from one that could not be checked (both were 1). 2 is the status of a usage error, of every command:
    the one other than 1 that says the command could not do what it was asked."""

    serq_user_error = True
    serq_usage_error = True  # (serq.cli: status 2)


@click.command("fmt")
@click.argument("files", nargs=-1, required=True, type=SerqPath(dir_okay=False))
@click.option("--check", is_flag=True, help="Change nothing; list the files fmt would change, exit 1 if any "
                                            "(2 for an error: a file that cannot be read or does not parse).")
@click.pass_obj
def fmt_command(pm: Any, files: tuple[str, ...], check: bool) -> None:
    """Reformat serQ source in one canonical style (comments kept).

    The layout: docs/language.md, "Commands and API". Every file is read and formatted before any is
    written, each then replaced atomically. Exit status: 0; 1 for an error (a file that cannot be read or
    does not parse: nothing is written); 2 for a usage error. With --check: 0 when every file is in form, 1
    when some is not, 2 for an error.

    \b
    Examples:
      serq fmt prog.sq
      serq fmt --check examples/single-turn/mg1.sq examples/multi-turn/vllm.sq
    """
    if not check:
        changed = _quietly(_formatted, pm, files)
    else:
        try:
            changed = _quietly(_formatted, pm, files)
        except Exception as e:
            from serq.cli import is_user_error
            from serq.plugins import plugin_failure

            said = str(e) if is_user_error(e) else plugin_failure(pm, e)
            if said is None:  # serQ's bug: its traceback
                raise
            raise CheckFailed(said) from None
    _write_and_list(changed, check)
    if check and changed:
        sys.exit(1)


def _quietly(f: Any, *args: Any, **kwargs: Any) -> Any:
    """``f(*args, **kwargs)`` with what it writes to standard output sent to standard error
    (serq.loading.stdout_to_stderr, as a loader's call is): a plugin's sugar layer that prints (or writes to
    file descriptor 1) while a program is parsed and desugared wrote ahead of ``serq ast``'s JSON, which no
    reader then took, and among the files ``serq fmt`` lists."""
    from serq.loading import stdout_to_stderr

    with stdout_to_stderr():
        return f(*args, **kwargs)


def _formatted(pm: Any, files: tuple[str, ...]) -> list[tuple[str, bytes, str]]:
    """``(name, bytes read, new text)`` of each file named whose layout is not fmt's, every file read,
    parsed and formatted (one named twice, once); the first file that cannot be read or does not parse
    raises its error."""
    from . import parse
    from .diagnostics import CompileError, decode_source
    from .fmt import format_source

    # every file is read, parsed and formatted before any is written: a file that does not parse (or
    # cannot be read) leaves all of them as they were, the ones before it included
    changed = []
    seen: set[tuple[int, int, str]] = set()
    for f in files:
        _not_ir(f, "fmt")
    for f in files:
        p = Path(f)
        try:
            data = read_input(p, limit=MAX_SOURCE, what="a serQ source")
            entry = _entry(f)
        except OSError as e:
            from serq.errors import shown_path

            raise CompileError(f"error: {shown_path(f)}: cannot read: {e.strerror or e}") from None
        if entry in seen:  # one file named twice (a.sq ./a.sq, a symbolic link): formatted once
            continue
        seen.add(entry)
        text = decode_source(data, f)
        module = parse(p, pm=pm)  # a file that does not parse is not formatted
        new = format_source(text)
        if new != text:  # (a byte-order mark, which decode_source leaves out of the text, is kept)
            _reads_back(pm, f, module, new)
            changed.append((f, data, "\ufeff" + new if data.startswith(b"\xef\xbb\xbf") else new))
    return changed


def _reads_back(pm: Any, name: str, module: Any, new: str) -> None:
    """Refuse the layout ``new`` of the program ``name`` (parsed as ``module``) that does not read back as the
    same program, when a third party's sugar layer gives the syntax: the formatter spaces tokens by serQ's
    grammar, and a plugin's own (``go -> s;``, ``ns a::b;``, ``say 'a  b';``) became ``go - > s;``, which no
    longer parses, or ``' a b '``, another string, written over the user's file. The layout is parsed again
    and its AST, places aside, compared with the program's; a program of serQ's syntax alone is not (its
    layout is the formatter's own, tested to keep the IR)."""
    from . import MAX_NESTING, deeper_recursion, layers, parse
    from .diagnostics import CompileError, Pos
    from .sugar import is_builtin

    theirs = [layer.name for layer in layers(pm) if not is_builtin(layer)]
    if not theirs:
        return
    import dataclasses

    def bare(x: Any) -> Any:
        if isinstance(x, Pos):
            return None
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            return [type(x).__name__, *[bare(getattr(x, f.name)) for f in dataclasses.fields(x)]]
        if isinstance(x, (list, tuple)):
            return [bare(v) for v in x]
        if isinstance(x, dict):
            return {str(k): bare(v) for k, v in x.items()}
        return x if x is None or isinstance(x, (str, int, float)) else _other(x)

    why = None
    try:
        again = parse(source=new, pm=pm)
    except CompileError as e:
        first = str(e).splitlines()[0].removeprefix("<source>:").replace(": error: ", ": ", 1)
        why = f"the laid-out text does not parse ({first})"
    else:
        with deeper_recursion(8 * MAX_NESTING):
            if bare(again.items) != bare(module.items):
                why = "the laid-out text reads as another program"
    if why is not None:
        from serq.errors import shown_path

        which = ", ".join(map(repr, theirs))
        raise CompileError(f"error: {shown_path(name)}: serq fmt cannot lay this program out: {why}; the sugar "
                           f"layers of plugins ({which}) give syntax the formatter does not know, so no file is "
                           "changed")


def _entry(path: str) -> tuple[int, int, str]:
    """The folder entry ``path`` names, symbolic links followed: its folder's device and inode, and its name
    there. One file named twice (``a.sq ./a.sq``, a symbolic link to it) is one entry, formatted once; two
    hard links to one file are two entries, each formatted and replaced by its own write. The file's own
    inode took two hard links for one file: the first name's write (a new file renamed over it, as every
    output is written) parted them, and the second was left in its old layout, neither listed nor said."""
    folder, name = os.path.split(os.path.realpath(path))
    st = os.stat(folder or os.sep)
    return st.st_dev, st.st_ino, name


def _write_and_list(changed: list[tuple[str, bytes, str]], check: bool) -> None:
    """Write each changed file (not with ``check``), then list them."""
    from .diagnostics import CompileError

    if not check:
        from serq.errors import shown_path
        from serq.files import write_atomic

        for f, _data, _new in changed:
            # a path under /dev is written through (serq.files), never replaced: /dev/stdin (or /dev/fd/3) of a
            # program's file was read whole, and its new layout appended to the old text of that file
            if os.name == "posix" and os.path.abspath(f).startswith("/dev/"):
                raise CompileError(f"error: {shown_path(f)}: serq fmt replaces the file it formats, and a path under "
                                   "/dev is written through, never replaced (the new layout would follow the old "
                                   "text); give the file's own name (--check reads it there); nothing was written")
        # a file that changed since it was read (an editor saved it while serq fmt parsed) is not written
        # over: its new text would be lost for the layout of the old one (one that another serq fmt has
        # just given this very layout needs no write)
        done = set()
        for f, data, new in changed:
            try:
                now = read_input(Path(f), limit=MAX_SOURCE)
            except OSError:
                now = None
            if now == new.encode("utf-8"):
                done.add(f)
            elif now != data:
                raise CompileError(f"error: {f}: changed while serq fmt was formatting it; nothing was "
                                   "written (run serq fmt again)")
        for f, _data, new in changed:  # atomically, as every output (serq.files): a failed write leaves the file as it was
            if f not in done:
                write_atomic(Path(f), new)
    from serq.errors import printable

    for f, _data, _new in changed:  # a name as a message prints it: `serq fmt *.sq` in a folder someone sent
        click.echo(f"{'would reformat' if check else 'reformatted'} {printable(f)}")


def to_json(x: Any) -> Any:
    """An AST as JSON values: each node a dict with its class under ``node``, positions ``LINE:COL``."""
    import dataclasses

    from .diagnostics import Pos

    def conv(x: Any) -> Any:
        if isinstance(x, Pos):
            return f"{x.line}:{x.col}"
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            d: dict[str, Any] = {"node": type(x).__name__}
            for f in dataclasses.fields(x):
                d[f.name] = conv(getattr(x, f.name))
            return d
        if isinstance(x, (list, tuple)):
            return [conv(v) for v in x]
        if isinstance(x, dict):
            return {json_key(k): conv(v) for k, v in x.items()}
        if isinstance(x, float):
            return _number(x)
        if x is None or isinstance(x, (str, int)):
            return x
        return _other(x)

    return conv(x)


_INF = float("inf")


def json_key(k: Any) -> str:
    """A dict's key in ``serq ast``'s JSON, :func:`to_json`'s and the written text's alike: as Python's JSON
    encoder writes it (``True`` is ``"true"``, ``None`` ``"null"``, ``2`` ``"2"``, ``1.5`` ``"1.5"``, an infinity
    ``"Infinity"`` and NaN ``"NaN"``, text that JSON takes as a key). A key the encoder takes none of (a
    plugin's node may keep a tuple) is written by its type, ``"<tuple>"``, as :func:`_other` writes such a
    value (its text, a repr, may hold an address that differs run to run). ``to_json`` wrote ``str(k)``
    (``"True"``), and the text a dict held in a node's field so, and ``"\"inf\""`` and ``"null"`` (None's) for
    the float keys of a dict in a list."""
    import numbers

    if isinstance(k, str):
        return k
    if k is True or k is False or k is None:
        return "true" if k is True else "false" if k is False else "null"
    if isinstance(k, numbers.Integral):
        return int.__repr__(int(k))
    if isinstance(k, numbers.Real):
        k = float(k)
        if k != k:
            return "NaN"
        if k in (_INF, -_INF):
            return "Infinity" if k > 0 else "-Infinity"
        return float.__repr__(k)
    return f"<{type(k).__name__}>"


def _number(x: float) -> float | str | None:
    """A float as ``serq ast`` writes it: itself when finite; infinity as the IR writes it, ``"inf"`` or
    ``"-inf"``, and NaN as the JSON report writes it, ``null``. JSON has neither (a plugin's builder may leave
    one in its node, ``Num(nan)``), and Python's encoder wrote ``NaN`` and ``Infinity``, which no strict
    JSON reader takes."""
    if x != x:
        return None
    if x in (_INF, -_INF):
        return "inf" if x > 0 else "-inf"
    return x


def _other(x: Any) -> Any:
    """A value of a plugin's node that is no JSON value, as ``serq ast`` shows it: a number as a number (numpy's
    ``int64``), anything else by its type, ``{"object": "set"}`` (a builder may keep what its rewrite reads: its
    context, a set). It was ``TypeError: an AST holds no set``, a traceback naming no plugin."""
    import numbers

    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real):
        return _number(float(x))
    return {"object": type(x).__name__}


def json_node(x: Any) -> Any:
    """One node of an AST as :func:`to_json` gives it, its fields as they are (the encoder asks again for each
    node among them): a ``json.JSONEncoder``'s ``default``, so a tree is encoded without a copy of it. A
    dict's keys are text, as :func:`to_json` makes them (:func:`json_key`)."""
    import dataclasses

    from .diagnostics import Pos

    if isinstance(x, Pos):
        return f"{x.line}:{x.col}"
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        d: dict[str, Any] = {"node": type(x).__name__}
        for f in dataclasses.fields(x):
            v = getattr(x, f.name)
            d[f.name] = _text_keys(v) if isinstance(v, dict) else v
        return d
    return _other(x)


def write_json(items: Any, write: Any, size: int = 2**16) -> None:
    """``items`` (an AST, a list of its nodes) as ``serq ast`` prints it, ``json.dumps(to_json(items),
    indent=1)`` and a line end, given to ``write`` as it is encoded, ``size`` characters at a time or so;
    each node is made a dict as the encoder reaches it (:func:`json_node`). The whole tree of dicts and the
    text built at once took 15 times the text's size (1.3 GB for the 80 MB of a 10 MB program's AST).

    The text is that of ``json.JSONEncoder(indent=1, default=json_node)`` (a float JSON has no number for
    as :func:`_number` writes it), made by a loop with a stack of the open lists and objects: the encoder's
    own (Python's, as with an indent) is a generator a level, and hands each piece up through every level
    around it, a cost the pieces times their depth (``serq ast --desugar`` of a program nested 990 holds
    deep: 324 million generator steps for 51 MB, some 11 s of its 11.5)."""
    from json.encoder import encode_basestring_ascii as text

    def number(x: float) -> str:  # (a float that is no JSON number as _number writes it)
        if x == x and x not in (_INF, -_INF):
            return float.__repr__(x)
        v = _number(x)
        return "null" if v is None else f'"{v}"'

    def scalar(x: Any) -> str | None:
        """The text of ``x`` when it is a JSON scalar, as the encoder tests them (None: it is not)."""
        if isinstance(x, str):
            return text(x)
        if x is None:
            return "null"
        if x is True:
            return "true"
        if x is False:
            return "false"
        if isinstance(x, int):
            return int.__repr__(x)
        if isinstance(x, float):
            return number(x)
        return None

    indents = ["\n"]  # "\n" and the indent of each level

    def newline(level: int) -> str:
        while len(indents) <= level:
            indents.append(indents[-1] + " ")
        return indents[level]

    part: list[str] = []
    held = 0
    markers: set[int] = set()
    # each open list or object: [its items' iterator, whether an object, its items' level, the marker ids
    # to let go of when it closes (its own, and those of the nodes it was made of by json_node), first]
    stack: list[list[Any]] = []

    def open_value(x: Any, level: int) -> None:
        """Write ``x`` at ``level``: a scalar whole, a list or an object its opening (pushed on the stack)."""
        nonlocal held
        release = []
        while True:
            t = scalar(x)
            if t is not None:
                part.append(t)
                held += len(t)
                break
            if isinstance(x, (list, tuple, dict)):
                if not x:
                    part.append("{}" if isinstance(x, dict) else "[]")
                    held += 2
                    break
                if id(x) in markers:
                    raise ValueError("Circular reference detected")
                markers.add(id(x))
                release.append(id(x))
                is_dict = isinstance(x, dict)
                opening = ("{" if is_dict else "[") + newline(level + 1)
                part.append(opening)
                held += len(opening)
                stack.append([iter(x.items()) if is_dict else iter(x), is_dict, level + 1, release, True])
                return
            if id(x) in markers:  # (a node within itself, as the encoder says it)
                raise ValueError("Circular reference detected")
            markers.add(id(x))
            release.append(id(x))
            x = json_node(x)
        markers.difference_update(release)

    def key_text(k: Any) -> str:
        return text(json_key(k))

    done = object()
    open_value(items, 0)
    while stack:
        top = stack[-1]
        x = next(top[0], done)
        level = top[2]
        if x is done:
            closing = newline(level - 1) + ("}" if top[1] else "]")
            part.append(closing)
            held += len(closing)
            markers.difference_update(top[3])
            stack.pop()
        else:
            lead = "" if top[4] else "," + newline(level)
            top[4] = False
            if top[1]:
                k, x = x
                lead += key_text(k) + ": "
            part.append(lead)
            held += len(lead)
            open_value(x, level)
        if held >= size:
            write("".join(part))
            part, held = [], 0
    part.append("\n")
    write("".join(part))


def _text_keys(d: dict) -> dict:
    return {json_key(k): _text_keys(v) if isinstance(v, dict) else v for k, v in d.items()}


@click.command("ast")
@click.argument("file", type=SerqPath(dir_okay=False))
@click.option("--desugar", is_flag=True, help="After every sugar layer: the kernel AST the linker reads.")
@click.pass_obj
def ast_command(pm: Any, file: str, desugar: bool) -> None:
    """Print a program's AST as JSON (for debugging the frontend).

    Exit status: 0; 1 for an error in the program; 2 for a usage error.

    \b
    Examples:
      serq ast examples/single-turn/mg1.sq
      serq ast --desugar examples/multi-turn/vllm.sq
    """
    from . import parse

    _not_ir(file, "ast")
    module = _quietly(parse, file, pm=pm, desugar=desugar)  # refuses a program nested deeper than MAX_NESTING
    from . import MAX_NESTING, deeper_recursion

    with deeper_recursion(8 * MAX_NESTING):  # the encoder recurses a few frames per level
        write_json(module.items, lambda text: click.echo(text, nl=False))
