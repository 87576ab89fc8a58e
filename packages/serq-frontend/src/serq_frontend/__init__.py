"""serq-frontend: serQ's text language. Parse (lark, LALR), take the sugar away, link to the IR.

>>> p = compile(source="stage svc : fifo; workload { arrive poisson(0.5); } session { run svc (~exp(1)); }")
>>> [s.name for s in p.stages]
['svc']
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from serq.shared import SharedSetting, collector_raised

if TYPE_CHECKING:  # pathlib is imported by a compile, not by a hit of the compile cache (start-up)
    from pathlib import Path

__all__ = ["CompileError", "Pos", "compile", "layers", "parse"]

def __getattr__(name: str) -> Any:
    # CompileError and Pos are imported on first use (PEP 562): the plugin host imports this package.
    if name in ("CompileError", "Pos"):
        from . import diagnostics

        value = getattr(diagnostics, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _default_pm(pm: Any = None) -> Any:
    """The plugin manager a call uses: ``pm``, or the installed plugins' (built once) when it passes none; a
    ``pm`` that is no plugin manager is a TypeError (:func:`serq.plugins.api_plugin_manager`)."""
    from serq.plugins import api_plugin_manager

    return api_plugin_manager(pm)


def layers(pm: Any = None) -> list[Any]:
    """The sugar layers in the order they apply: those the plugins of ``pm`` register through
    ``serq_frontend_register_sugar``, in registration order (serq-frontend's own, registered by its
    plugin, come first when it is registered first, as the host registers it; see :mod:`serq.plugins`).
    With no ``pm``, serq-frontend's own layers."""
    from .sugar import builtin_layers, layer_problem

    if pm is None:
        return list(builtin_layers())
    from serq.plugins import collect

    pm = _default_pm(pm)  # (layers(pm=3) was an AttributeError of .hook)

    # each layer checked as the parser and the desugaring will use it (its builders, its rewrite, a rule of
    # its grammar without a builder): the plugin named here, not a TypeError from serQ's call of it later
    reg = collect(pm, "serq_frontend_register_sugar", "sugar layer", key=lambda layer: layer.name,
                  check=layer_problem)
    _check_rules(reg)
    return [layer for _name, layer in reg.items()]


def _check_rules(reg: Any) -> None:
    """Refuse a plugin's layer whose builders build a rule that the kernel or an earlier layer builds: the
    parser keeps one builder a rule, the last layer's, so two plugins' layers that both wrote ``-> s_tally``
    each built the other's statement with its own builder (``tally n;`` of one plugin became the other's
    node, silently), and a builder of a kernel rule (``s_run``) changed what every program means."""
    from .sugar import is_builtin

    if all(is_builtin(layer) for _name, layer in reg.items()):
        return  # serQ's own layers alone (the parser's module is not imported for them)
    from serq.errors import PluginError

    from .parser import KERNEL_BUILDERS

    built: dict[str, str | None] = {rule: None for rule in KERNEL_BUILDERS}
    for name, layer in reg.items():
        rules = getattr(layer, "builders", None) or {}
        if not is_builtin(layer):
            for rule in rules:
                if rule in built:
                    first = built[rule]
                    by = ("serQ's own grammar" if first is None
                          else f"the sugar layer {first!r} of {reg.provider(first)}")
                    raise PluginError(reg.plugin_message(
                        name, f"registers the sugar layer {name!r}, whose builder of the rule {rule!r} is refused",
                        f"{by} builds the rule {rule!r} too, and a rule has one builder (give the layer's rules "
                        f"names of its own, `-> s_{name}_…`)"))
        for rule in rules:
            built.setdefault(rule, name)


def _cache_dir() -> Path | None:
    """Where the LALR tables (and the compile cache) are kept between runs: see :func:`cache.cache_dir`."""
    from .cache import cache_dir

    return cache_dir()


def _get_parser(layer_list: Sequence[Any]) -> Any:
    """``parser.get_parser`` with the grammar's LALR tables kept on disk (``parser.load_tables``: JSON, never
    pickle, keyed by the grammar text, the options, lark's and Python's version, and rebuilt when any
    differ). Building the tables is most of a small program's compile time; loading them is a tenth of it."""
    import hashlib

    from . import parser as P

    kept = P.cached_parser(layer_list)
    if kept is not None:
        return kept
    d = _cache_dir()
    if d is None:
        return P.get_parser(layer_list)
    import lark

    names = "\0".join(getattr(layer, "name", "?") for layer in layer_list)
    tag = hashlib.sha256(f"{lark.__version__}\0{names}".encode()).hexdigest()[:16]
    return P.get_parser(layer_list, cache=str(d / f"lalr-{tag}.json"))


def _layer_error(pm: Any, name: str, what: str, reason: str) -> Exception | None:
    """The :class:`serq.errors.PluginError` of the plugin that registered sugar layer ``name`` (``None``:
    serq-frontend's own layer, whose failure is a bug of serQ's)."""
    from serq.errors import PluginError
    from serq.plugins import collect

    from .sugar import builtin_layers

    if pm is None or any(layer.name == name for layer in builtin_layers()):
        return None
    reg = collect(pm, "serq_frontend_register_sugar", "sugar layer", key=lambda layer: layer.name)
    if name not in reg:
        return None
    return PluginError(reg.plugin_message(name, what, reason))


def _grammar_failure(pm: Any, layer_list: Sequence[Any], e: Exception) -> Exception:
    """What a parser that cannot be built is: the grammar of a plugin's layer lark refuses (alone, on the
    kernel with serq-frontend's layers), named; else ``e`` itself (serq-frontend's own grammar)."""
    from . import parser as P
    from .sugar import builtin_layers, is_builtin

    own = builtin_layers()
    reason = f"{type(e).__name__}: {e}"
    for layer in layer_list:
        if is_builtin(layer):
            continue
        try:
            P.Parser([*own, layer])
        except Exception as alone:  # noqa: BLE001 - whatever lark raises of a grammar
            reason = f"{type(alone).__name__}: {alone}"
        else:
            continue
        found = _layer_error(pm, layer.name, f"registers the sugar layer {layer.name!r}, whose grammar does "
                             "not build", reason)
        if found is not None:
            return found
    # every plugin's grammar builds alone: the first that does not build beside an earlier one (two plugins'
    # layers that both define `stmt: "tally" NAME ";"` were lark's GrammarError, naming neither)
    theirs = [layer for layer in layer_list if not is_builtin(layer)]
    for i, layer in enumerate(theirs):
        for before in theirs[:i]:
            try:
                P.Parser([*own, before, layer])
            except Exception as pair:  # noqa: BLE001 - whatever lark raises of a grammar
                found = _layer_error(pm, layer.name, f"registers the sugar layer {layer.name!r}, whose grammar "
                                     f"does not build beside the sugar layer {before.name!r} of "
                                     f"{_layer_provider(pm, before.name)}", f"{type(pair).__name__}: {pair}")
                if found is not None:
                    return found
    return e


def _layer_provider(pm: Any, name: str) -> str:
    """The plugin that registered sugar layer ``name``, as a message names it."""
    from serq.plugins import collect

    reg = collect(pm, "serq_frontend_register_sugar", "sugar layer", key=lambda layer: layer.name)
    return reg.provider(name) if name in reg else "?"


def _given(overrides: Any) -> Any:
    """``sets`` or ``defs`` as given, {} for None (and only for None): ``sets or {}`` took any empty value for
    none (``sets=""``, ``sets=0``, ``defs=False`` compiled without a word) and asked a DataFrame, a Series
    or an array its truth (pandas' and numpy's ValueError, "The truth value of a DataFrame is ambiguous"),
    where :func:`check_overrides` says what a mapping of overrides is."""
    return {} if overrides is None else overrides


def check_overrides(sets: Any, defs: Any) -> tuple[dict[str, float], dict[str, str]]:
    """``sets`` and ``defs`` as a compile takes them: mappings of names to numbers (a real number, not a bool
    nor NaN, within the doubles) and to expression texts, or TypeError/ValueError naming the entry. What was
    not checked went wrong far from the call: a list of pairs for ``sets`` was no override at all (silently),
    a str value a TypeError of float() in the linker, an int beyond the doubles an OverflowError, an int
    body ``object of type 'int' has no len()``."""
    import math
    import numbers

    from serq.numbers import real

    out: list[dict[str, Any]] = []
    for arg, given, kind in (("sets", sets, "number"), ("defs", defs, "str")):
        if not isinstance(given, Mapping):
            raise TypeError(f"{arg} is a mapping of names to {kind}s, not {type(given).__name__}")
        checked: dict[str, Any] = {}
        for name, v in given.items():
            if not isinstance(name, str):
                raise TypeError(f"{arg}: a name is a str, not {type(name).__name__} ({name!r})")
            if kind == "str":
                if not isinstance(v, str):
                    raise TypeError(f"defs[{name!r}] is an expression's text (a str), not {type(v).__name__}")
                checked[name] = v
                continue
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"sets[{name!r}] is a number, not {type(v).__name__}")
            x = real(v)  # (a real number: None only for an int beyond the doubles)
            if x is None:
                raise ValueError(f"sets[{name!r}]: an integer of {int(v).bit_length()} bits is beyond the "
                                 "doubles")
            if math.isnan(x):
                raise ValueError(f"sets[{name!r}]: NaN is not the value of a constant (a number or inf)")
            checked[name] = x
        out.append(checked)
    return out[0], out[1]


def check_path(path: Any, who: str) -> None:
    """Refuse a path that is no str or os.PathLike (a TypeError naming ``who``'s path) or the empty str (a
    ValueError): ``compile`` and ``cache.load`` by one rule (``cache.load(3)`` was ``os.fspath``'s TypeError
    from inside serq.files)."""
    import os

    given = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    if not isinstance(given, str):
        raise TypeError(f"{who}'s path is a str or os.PathLike, not {type(path).__name__}"
                        + (" naming bytes" if isinstance(path, os.PathLike) else ""))
    if not given:  # (pathlib read '' as '.': "error: : cannot read: is a folder, not a file")
        raise ValueError(f"{who}'s path is empty: it names no file")


def _setup(path: str | Path | None, source: str | None, pm: Any, sets: Mapping[str, float],
           defs: Mapping[str, str], use_pm: bool, *, text: str | None = None,
           library_paths: Sequence[Path] | Callable[[], list[Path]] | None = None, recorder: Any = None,
           who: str = "compile()", option_name: Any = None) -> tuple[Any, Any, str, str | None]:
    """The context of one compile. The compile cache passes the program's ``text`` it has read (and
    keyed), the ``library_paths`` (or a function that gives them, called at the first ``use``), and a
    ``recorder`` of what the compile looks for and reads.
    ``who`` is the function its messages name (``parse()`` was told of as ``compile()``); ``option_name``
    how they name an override (:attr:`Context.option_name`: the Python API's argument by default)."""
    from pathlib import Path

    from serq.files import MAX_SOURCE, check_text, read_input

    from .context import Context
    from .diagnostics import CompileError, Reporter, Sources, check_unicode, decode_source, strip_bom

    if (path is None) == (source is None):
        raise TypeError(f"{who} takes a path or source=, not both" if path is not None
                        else f"{who} takes a path or source=: neither was given")
    if path is not None:
        check_path(path, who)
    if source is not None and not isinstance(source, str):
        raise TypeError(f"{who}'s source= is a str, not {type(source).__name__}")
    sets, defs = check_overrides(sets, defs)
    if use_pm:
        pm = _default_pm(pm)
    layer_list = layers(pm)
    if recorder is not None:
        recorder.layers = layer_list
    try:
        parser = _get_parser(layer_list)
    except Exception as e:
        if getattr(type(e), "serq_user_error", False):
            raise
        raise _grammar_failure(pm, layer_list, e) from e
    sources = Sources()
    name = str(path) if path is not None else "<source>"
    reporter = Reporter(sources, name)
    if path is not None:
        p = Path(path)
        if text is None:
            try:
                data = read_input(p, limit=MAX_SOURCE, what="a serQ source")
            except OSError as e:
                from serq.errors import missing_file_note, shown_path

                note = missing_file_note(name) if isinstance(e, FileNotFoundError) else ""
                raise CompileError(f"error: {shown_path(name)}: cannot read: {e.strerror or e}{note}") from None
            text = decode_source(data, name)
        else:
            text = strip_bom(text)  # the compile cache's read of the file
        base: Path | None = p.parent
    else:
        text = strip_bom(source or "")  # as a file's: text read with encoding="utf-8" keeps the mark
        try:  # the size a program's file may have (a text of 100 MB would take some 6 GB to parse)
            check_text(text, limit=MAX_SOURCE, what="a serQ source", name=name)
        except OSError as e:
            from serq.errors import shown_path

            raise CompileError(f"error: {shown_path(name)}: {e.strerror}") from None
        check_unicode(text, name)  # (a file's bytes are decoded strictly: it holds none)
        base = None
    if option_name is None:
        from serq.loading import argument_given as option_name
    for dname, body in defs.items():  # a definition's body given from outside: held to a source's size too
        from serq.errors import clipped

        shown = option_name("def", clipped(dname))  # (a name a message quotes is cut to a width)
        try:
            check_text(body, limit=MAX_SOURCE, what="a definition's body", name=shown)
        except OSError as e:
            raise CompileError(f"error: {shown}: {e.strerror}") from None
        check_unicode(body, shown)
    sources.add(name, text)
    parser.context.seen = set()
    parser.context.made = {}
    parser.context.nones = []

    def _library_paths() -> list[Path]:
        from .cache import library_paths as paths

        return paths(pm)

    ctx = Context(reporter=reporter, sources=sources, parser=parser, base_dir=base,
                  library_paths=(_library_paths if library_paths is None
                                 else library_paths if callable(library_paths) else list(library_paths)),
                  sets=dict(sets), defs=dict(defs), pm=pm, option_name=option_name)
    ctx.recorder = recorder
    return ctx, layer_list, text, name


def parse(path: str | Path | None = None, *, source: str | None = None, pm: Any = None,
          desugar: bool = False, sets: Mapping[str, float] | None = None,
          defs: Mapping[str, str] | None = None) -> Any:
    """The AST of a program (:class:`serq_frontend.ast.Module`); with ``desugar`` after every layer."""
    from serq.numbers import switch

    if not switch(desugar):  # (taken by its truth: desugar="no" desugared)
        raise TypeError(f"desugar must be True or False, not {desugar!r:.60}")
    ctx, layer_list, text, name = _setup(path, source, pm, _given(sets), _given(defs), desugar, who="parse()")
    return _front(ctx, text, name, layer_list, desugar)


def _front(ctx: Any, text: str, name: str, layer_list: Sequence[Any], desugar: bool, finish: Any = None) -> Any:
    """Parse ``text`` and, with ``desugar``, run the sugar layers over it, then ``finish`` (the linker) if
    given. The passes after parsing recurse over the program: a program within MAX_NESTING stays within
    the raised limit, and one that still overflows it is one message, not a RecursionError."""
    from . import ast as A
    from .diagnostics import CompileError

    try:
        with collector_raised():  # (its objects live to the end of the compile: serq.shared.WORK_GC_THRESHOLD)
            try:
                parsed = ctx.parser.parse(text, name, ctx.reporter)
            except CompileError as e:
                raise _syntax_noted(ctx, e) from None
            module = A.Module(parsed, name)
            _check_built(ctx, module, layer_list)
            _check_nesting(module, ctx)  # what is parsed is walked by recursive passes (and printed)
            if desugar:
                with deeper_recursion(8 * MAX_NESTING):
                    module = _desugar(module, ctx, layer_list)
                    return module if finish is None else finish(module)
            return module if finish is None else finish(module)
    except CompileError as e:
        raise ctx.sets_noted(e) from None
    except RecursionError as e:
        # a plugin's sugar layer whose own code recursed without end (its rewrite calling itself) is its
        # failure, at its line: it was "p.sq: error: the program nests too deeply to compile", the program's
        from serq.plugins import exit_as_plugin_error

        failure = exit_as_plugin_error(ctx.extensions.pm, e, "the compile")
        if failure is not None:
            raise failure from e
        raise ctx.error(None, "the program nests too deeply to compile") from None
    except BaseException as e:
        # a plugin's sugar layer (its builders in the parse, its rewrite) that calls sys.exit() or raises a
        # BaseException of its own: named, not taken as the command's exit
        from serq.plugins import exit_as_plugin_error

        failure = exit_as_plugin_error(ctx.extensions.pm, e, "the compile")
        if failure is None:
            raise
        raise failure from e
    finally:
        ctx.parser.context.forget()


def _check_built(ctx: Any, module: Any, layer_list: Sequence[Any]) -> None:
    """Refuse, naming the plugin, a parse whose plugin builders built no tree (:func:`_graph_problem`): a node
    within itself was "the program nests more than 1000 deep here", at the user's statement, and one shared
    2**40 times a walk that never ended, ``serq ast`` (whose JSON it is too) included."""
    theirs = _their_layers(ctx, layer_list)
    if not theirs:
        return
    why = _graph_problem(module.items)
    if why is None:
        return
    found = _builders_failed(ctx, theirs, why)
    if found is not None:
        raise found


def _their_layers(ctx: Any, layer_list: Sequence[Any]) -> list[str]:
    """The names of the third parties' sugar layers (of ``layer_list``) whose rules the parse built."""
    from .sugar import is_builtin

    seen = ctx.parser.context.seen
    return [layer.name for layer in layer_list if layer.name in seen and not is_builtin(layer)]


def _builders_failed(ctx: Any, theirs: list[str], holds: str) -> Any:
    """The failure of the builders of the plugins' sugar layers ``theirs`` (:func:`_their_layers`), whose program
    ``holds`` what the passes cannot walk: named by the first layer's plugin, the others listed (None: no plugin
    to name, :func:`_layer_error`)."""
    others = f" (one of the sugar layers {', '.join(map(repr, theirs))} the program uses)" if len(theirs) > 1 else ""
    return _layer_error(ctx.extensions.pm, theirs[0], f"failed in the builders of its sugar layer {theirs[0]!r}",
                        f"the program they built holds {holds}{others}")


def _none_built(ctx: Any, at: Any) -> tuple[Any, str, str] | None:
    """``(pos, layer, rule)`` of the call of a plugin's builder that built the None found within the node at
    ``at`` (None: any place): of the compile's such calls (BuildContext.nones), the one nearest ``at`` in its
    file (the line first, then the column; the first of two as near), else the first; None when no plugin's
    builder built None."""
    nones = getattr(getattr(getattr(ctx, "parser", None), "context", None), "nones", None) or []
    near = [n for n in nones if at is not None and n[0].file == at.file]
    if near:
        return min(near, key=lambda n: (abs(n[0].line - at.line), abs(n[0].col - at.col)))
    return nones[0] if nones else None


def _missing_expression(ctx: Any, node: Any) -> Exception:
    """The error of None where an expression belongs, within ``node`` (a statement or an item; None: not
    known), which a plugin's builder built (a builder of an expression that returned None, or a statement's
    that left one of its expressions None): the failure of the builder's layer, naming it, at the place of
    the construct it built (:func:`_none_built`). It was "<source>: error: an expression the linker does not
    know (NoneType)", at no place and naming no plugin (in a ``let``, an AttributeError). A node of a class a
    plugin's builder built that holds None is that layer's failure at the node's place; other None (a
    rewrite's) is told at the node's place."""
    from .diagnostics import Pos

    at = getattr(node, "pos", None)
    if not isinstance(at, Pos):
        at = None
    none = _none_built(ctx, at)
    pm = ctx.extensions.pm
    belongs = "where an expression belongs (a node: serq_frontend.ast.Num for a number)"
    failure = None
    if none is not None and pm is not None:
        pos, layer, rule = none
        failure = _layer_error(pm, layer, f"failed in the builders of its sugar layer {layer!r}",
                               f"its builder of `{rule}` built None at {pos.at()}, and the program holds it "
                               f"{belongs}")
    elif at is not None and pm is not None:
        layer = getattr(getattr(getattr(ctx, "parser", None), "context", None), "made", {}).get(type(node))
        if layer is not None:
            failure = _layer_error(pm, layer, f"failed in the builders of its sugar layer {layer!r}",
                                   f"the program they built holds None {belongs}, in the {type(node).__name__} "
                                   f"at {at.at()} (a class of node its builders built)")
    rewrote = getattr(ctx, "rewritten_by", None) or []
    if failure is None and rewrote and pm is not None:
        # None no builder built: a rewrite's (the kernel's and serQ's layers leave none), named by the first
        # plugin's layer whose rewrite ran, the others listed
        name = rewrote[0]
        others = (f" (one of the sugar layers {', '.join(map(repr, rewrote))} whose rewrites ran)"
                  if len(rewrote) > 1 else "")
        where = "" if at is None else f", in the {type(node).__name__} at {at.at()}"
        failure = _layer_error(pm, name, f"failed in the rewrite of its sugar layer {name!r}",
                               f"rewrite(module, ctx) returned a program that holds None {belongs}{where}{others}")
    if failure is not None:
        return failure
    return ctx.error(at, "an expression is missing here: the program holds None where one belongs")


def _syntax_noted(ctx: Any, e: Any) -> Any:
    """``e``, a program's syntax error, with a note of the installed third parties' plugins that are switched
    off (``SERQ_DISABLED_PLUGINS``, ``SERQ_DISABLE_PLUGIN_AUTOLOAD``), whose sugar layers may be the syntax
    the program is written in: ``p.sq:3:17: note: the installed plugin 'acme' (serq-acme 0.3.0) is disabled
    by SERQ_DISABLED_PLUGINS (take 'acme' out of SERQ_DISABLED_PLUGINS to enable it), and its sugar layers
    may give this syntax``, as a stage kind no loaded plugin registers says (serq.parts.others_switched_off).
    A program of a plugin's syntax compiled from the compile cache with the plugin on misses once it is off,
    and was told ``unexpected `{```, naming none."""
    pm = ctx.extensions.pm
    if pm is None:
        return e
    from serq.parts import others_switched_off

    off = others_switched_off(pm)
    if not off:
        return e
    from serq.errors import shown_path

    from .diagnostics import CompileError

    note = off.removeprefix("; ").removesuffix(", and may register it") + ", and its sugar layers may give this syntax"
    at = f"{e.pos.at()}: note: " if e.pos is not None else f"{shown_path(ctx.reporter.name)}: note: "
    return CompileError(e.message, e.pos, rendered=f"{e}\n{at}{note}")


#: the recursion limit, raised while any compile walks its program (threads may compile at once)
_RECURSION = SharedSetting(sys.getrecursionlimit, sys.setrecursionlimit)


def deeper_recursion(depth: int) -> Any:
    """Raise the interpreter's recursion limit to at least ``depth`` for the duration, and put back after
    the last of the calls under way the limit there was before the first began
    (:class:`serq.shared.SharedSetting`: compiles in several threads share it)."""
    return _RECURSION.raised(lambda limit: depth if limit < depth else None)


def _declarations(module: Any) -> list[tuple[str, int, int]]:
    """``(name, line, col)`` of each pool, stage and let ``module`` declares (at the declaration's place)."""
    from . import ast as A
    from .diagnostics import Pos

    return [(item.name, item.pos.line, item.pos.col) for item in module.items
            if isinstance(item, (A.PoolItem, A.StageItem, A.Let)) and isinstance(getattr(item, "pos", None), Pos)]


def _note_declared(ctx: Any, name: str, before: list[tuple[str, int, int]], after: Any) -> None:
    """Note on ``ctx`` the declarations the rewrite of the plugin's sugar layer ``name`` added (those of
    ``after`` not among ``before``, the declarations of the module it was handed, listed before the call: a
    rewrite that adds to the module it is handed, in place, and returns it added them too, which were not
    told as the layer's), by the layer and its plugin (Context.layer_declared)."""
    had = set(before)
    added = [d for d in _declarations(after) if d not in had]
    if not added:
        return
    by = f"the sugar layer {name!r}"
    pm = ctx.extensions.pm
    if pm is not None:
        from serq.plugins import collect

        reg = collect(pm, "serq_frontend_register_sugar", "sugar layer", key=lambda layer: layer.name)
        if name in reg:
            by += f" (plugin {reg.provider(name)})"
    for d in added:
        ctx.layer_declared[d] = by


def _odd_kinds(module: Any) -> set[tuple[str, str, Any]]:
    """``("stage", name, kind)`` of each stage item of ``module`` whose kind the kernel does not have,
    ``("pool", name, kind)`` of each such option of a pool item, and ``("workload", "", kind)`` of each such
    item of a workload (a kind that is no str by its ``repr``)."""
    from . import ast as A

    items = module.items if isinstance(getattr(module, "items", None), (list, tuple)) else ()
    out: set[tuple[str, str, Any]] = set()
    for item in items:
        if isinstance(item, A.StageItem) and isinstance(item.kind, A.Kind):
            kind = item.kind.kind
            if not isinstance(kind, str) or kind not in A.KERNEL_STAGE_KINDS:
                out.add(("stage", item.name, kind if isinstance(kind, str) else repr(kind)))
        elif isinstance(item, A.PoolItem) and isinstance(item.opts, (list, tuple)):
            for o in item.opts:
                kind = getattr(o, "kind", None)
                if not isinstance(kind, str) or kind not in A.KERNEL_POOL_OPTIONS:
                    out.add(("pool", item.name, kind if isinstance(kind, str) else repr(kind)))
        elif isinstance(item, A.WorkloadItem) and isinstance(item.items, (list, tuple)):
            for w in item.items:
                kind = getattr(w, "kind", None)
                if not isinstance(kind, str) or kind not in A.KERNEL_WORKLOAD_ITEMS:
                    out.add(("workload", "", kind if isinstance(kind, str) else repr(kind)))
    return out


def _kind_of(obj: Any) -> str:
    return "None" if obj is None else f"an object of type {type(obj).__name__}"


def _desugar(module: Any, ctx: Any, layer_list: Sequence[Any]) -> Any:
    from . import ast as A
    from .diagnostics import CompileError
    from .sugar import is_builtin

    seen = ctx.parser.context.seen
    ran = set()
    theirs = _their_layers(ctx, layer_list)
    made = ctx.parser.context.made
    builders = {"stage": made.get(A.StageItem) or made.get(A.Kind), "pool": made.get(A.PoolItem) or made.get(A.PoolOpt),
                "workload": made.get(A.WorkloadItem) or made.get(A.WlItem)}
    if any(builders.values()):  # a plugin's builder's (the kernel's builders build the kernel's)
        for odd in _odd_kinds(module):
            if builders[odd[0]] is not None:
                ctx.kinds_left[odd] = (builders[odd[0]], "builder")
    if theirs:
        # what a plugin's builders built is held to the shape the passes walk, as its rewrite's result is
        # (below): a builder's None, str or node without a place, left for the linker by a layer without a
        # rewrite (or kept by its rewrite), was the linker's AttributeError, naming no plugin (a tree it is:
        # _check_built, at the parse)
        bad = _shape_problem(module, graph=False)
        if bad is not None:
            why, where = bad
            none = _none_built(ctx, where) if why.startswith("None ") else None
            found = _builders_failed(ctx, theirs, why.removeprefix("a module whose ")
                                     + ("" if where is None else f" (within the node at {where.at()})")
                                     + ("" if none is None else f"; the builder of `{none[2]}` of the layer "
                                        f"{none[1]!r} built None at {none[0].at()}"))
            if found is not None:
                raise found
    for layer in layer_list:
        if layer.rewrite is not None and (layer.name in seen or not layer.builders):
            ctx.set_module(module)
            plugins = not is_builtin(layer)
            before = _declarations(module) if plugins else []
            kinds = _odd_kinds(module) if plugins else set()
            module = layer.rewrite(module, ctx)
            ran.add(layer.name)
            if plugins:
                ctx.rewritten_by.append(layer.name)
            if not isinstance(module, A.Module):  # the next pass, or the linker, would fail on it
                found = _layer_error(ctx.extensions.pm, layer.name, f"failed in the rewrite of its sugar layer {layer.name!r}",
                                     f"rewrite(module, ctx) returned {_kind_of(module)}, not a "
                                     "serq_frontend.ast.Module")
                if found is None:
                    raise TypeError(f"sugar layer {layer.name!r}: its rewrite returned {_kind_of(module)}")
                raise found
            if plugins:
                # what a plugin's rewrite made is held to the shape the passes after it walk: a statement that
                # is no statement (a str, None) or a node without a place (pos None) was an AttributeError
                # from the linker's walk or its span of the place, a traceback naming no plugin
                bad = _shape_problem(module)
                if bad is not None:
                    why, where = bad
                    found = _layer_error(ctx.extensions.pm, layer.name,
                                         f"failed in the rewrite of its sugar layer {layer.name!r}",
                                         f"rewrite(module, ctx) returned {why}"
                                         + ("" if where is None else f" (within the node at {where.at()})"))
                    if found is not None:
                        raise found
                # what a plugin's rewrite made is held to the nesting the parsed text is held to: the passes
                # after it recurse, and a tree nested 100 000 deep was "p.sq: error: the program nests too
                # deeply to compile" (one 2 000 deep, the linker's error at the user's session), naming neither
                # the plugin nor a place of the program's
                try:
                    _check_nesting(module, ctx)
                except CompileError:
                    found = _layer_error(ctx.extensions.pm, layer.name,
                                         f"failed in the rewrite of its sugar layer {layer.name!r}",
                                         f"rewrite(module, ctx) returned a program nested more than {MAX_NESTING} "
                                         "deep (expressions and blocks inside one another), which no program's "
                                         "text may be")
                    if found is None:
                        raise
                    raise found from None
                _note_declared(ctx, layer.name, before, module)
                for odd in _odd_kinds(module) - kinds:  # a stage kind or pool option the kernel lacks, its rewrite's
                    ctx.kinds_left[odd] = (layer.name, "rewrite")
    if ctx.defs and "defs" not in ran:  # no def or use in the program: every --def names nothing
        from .sugar.defs import unknown_defs

        unknown_defs(ctx, set(), module)
    ctx.set_module(module)
    return module


def compile(path: str | Path | None = None, *, source: str | None = None,  # noqa: A001
            sets: Mapping[str, float] | None = None, defs: Mapping[str, str] | None = None,
            pm: Any = None) -> Any:
    """Compile a serQ program to its IR (a :class:`serq_ir.Program`).

    :param path: the program file; or give ``source=`` text instead. Either is at most
        ``serq.files.MAX_SOURCE`` bytes (16 MiB, in UTF-8), as ``serq check`` takes it; the file is read only
        as a regular file (a FIFO, a device or a folder is a ``CompileError`` naming it, at once).
    :param sets: ``--set NAME=value``: override ``let`` constants (an unknown name is an error).
    :param defs: ``--def NAME=expr``: give expression definitions' bodies (an unknown name is an error).
    :param pm: the plugin manager whose sugar layers and library paths apply (default: the installed
        plugins, loaded once).
    :raises CompileError: the program does not parse or link; ``str(e)`` is the whole diagnostic.

    The program names its files as they were given (its ``source``, its spans, its trace clause), relative to
    the current folder; that folder is noted with the program (:mod:`serq_ir.folders`), and ``serq_sim.run``
    reads the trace and quotes the lines from it even after an ``os.chdir``. The ``source=`` text (named
    ``<source>``) and the ``defs=`` bodies are noted with the program too, held as given (no copy, nothing
    written anywhere): a run-time error of ``serq_sim.run`` in one quotes its line with a caret.
    """
    given_defs = _given(defs)
    program = _compile(path, source, _given(sets), given_defs, pm)
    import os

    # the texts its spans name that are in no file, noted with the program: a run-time error in one quotes its
    # line with a caret in serq_sim.run, as one in a file does (it gave the place alone). ``source`` is the
    # caller's own str, held, not copied: the IR keeps no text, so this reference is what quoting costs
    texts: dict[str, str | None] = {} if source is None else {"<source>": source}
    if given_defs:  # (the bodies of defs=, named as its spans name them: defs['m'], as serq run --def does)
        from serq.loading import argument_given, def_texts

        texts.update(def_texts(given_defs, argument_given))
    if texts:
        from serq_ir.folders import note_texts

        note_texts(program, texts)
    try:
        here = os.getcwd()
    except OSError:  # (a current folder since removed: a relative name can name nothing anyway)
        return program
    from serq_ir.folders import note_folder

    note_folder(program, here)
    return program


def knob_names(path: str | Path, *, pm: Any = None) -> tuple[list[str], list[str]]:
    """The names of the program ``path``'s `let`s and of its expression definitions (``def rate() = …``, a
    library's it uses too), in order: what a name given for a knob may have meant (``serq sweep --over``'s
    did-you-mean, serq.errors.knob_hint). Raises ``CompileError`` as :func:`compile` does."""
    ctx, layer_list, text, name = _setup(path, None, pm, {}, {}, True)
    _front(ctx, text, name, layer_list, True)
    return list(ctx.lets()), list(ctx.notes.get("expression_defs", ()))


def _compile(path: str | Path | None, source: str | None, sets: Mapping[str, float],
             defs: Mapping[str, str], pm: Any, **setup: Any) -> Any:
    from .link import link

    ctx, layer_list, text, name = _setup(path, source, pm, sets, defs, True, **setup)
    if path is not None:
        from serq.files import name_not_text, shown_name

        from .diagnostics import CompileError

        problem = name_not_text(name)
        if problem is not None:  # (the IR names it: its source, its spans)
            raise CompileError(f"error: {shown_name(name)}: {problem}, and a program's IR names its files as "
                               "text; rename it to compile it (serq fmt and serq ast read it as it is)")
    return _front(ctx, text, name, layer_list, True, lambda module: link(module, ctx, str(path) if path is not None else None))


#: how deep the parsed program's nodes may nest (each expression, statement, block and item a level) before
#: the sugar layers see it; the linker's own limits (serq_ir.rules.MAX_EXPR_DEPTH, MAX_BLOCK_DEPTH) are far
#: below, and give the precise message
MAX_NESTING = 1000


def _nesting_hint() -> str:
    """What the refusal of a program nested deeper than MAX_NESTING says after its place: the linker's limits
    a program that compiles keeps to, and how to keep to them."""
    from serq_ir.rules import MAX_BLOCK_DEPTH, MAX_EXPR_DEPTH

    return (f"an expression may nest {MAX_EXPR_DEPTH} deep and loops, branches and holds {MAX_BLOCK_DEPTH}: "
            "name a part with `set`, or write a long chain of terms as `sum j in n (…)`")


def _shape_problem(module: Any, graph: bool = True) -> tuple[str, Any] | None:
    """What a plugin's rewrite returned that the passes after it cannot walk, and the place of the nearest
    enclosing node that has one (``None``: the module is of the AST's shape): an item or a statement that is
    no node (a str, None; a statement's class declares ``BLOCKS``, as :class:`serq_frontend.ast.Node`'s
    subclasses do), or a node whose ``pos`` is not a :class:`~serq_frontend.diagnostics.Pos` (the linker
    writes every statement's place into the IR, and a message is placed at a node's). Walked without
    recursion, as :func:`_check_nesting` walks (after it, within its depth). ``graph`` False: the items are
    known to be a tree (:func:`_graph_problem` passed them: what the builders built, at the parse)."""
    import dataclasses

    from . import ast as A
    from .diagnostics import Pos

    items = module.items
    if not isinstance(items, (list, tuple)):
        return f"a module whose items are {_kind_of(items)}, not a list", None
    cyclic = _graph_problem(items) if graph else None
    if cyclic is not None:
        return cyclic, None
    leaves = _LEAVES | {Pos}
    walked: dict[type, tuple[str, ...] | None] = {}
    todo: list[tuple[Any, Any]] = []
    for item in items:
        if type(item) in leaves or not dataclasses.is_dataclass(item) or isinstance(item, type):
            return f"{_kind_of(item)} among the module's items, not an item of the AST", None
        # (an item's own fields first: the blocks below are read through them, a workload's through its WlItems)
        wrong = _field_problem(item, type(item), A)
        if wrong is not None:
            at = getattr(item, "pos", None)
            return wrong, at if isinstance(at, Pos) else None
        todo.append((item, None))
    # the statement blocks: each entry a statement, whose class the walks read BLOCKS of
    blocks = [(b, getattr(item, "pos", None)) for item in items for b in A.item_blocks(item)]
    while blocks:
        block, where = blocks.pop()
        if not isinstance(block, (list, tuple)):
            return f"a block that is {_kind_of(block)}, not a list of statements", where
        for s in block:
            if not hasattr(type(s), "BLOCKS") or isinstance(s, type):
                return (f"{_kind_of(s)} in a block, not a statement (a serq_frontend.ast.Node, or a class that "
                        "declares BLOCKS)"), where
            at = getattr(s, "pos", None)
            blocks.extend((getattr(s, a, None), at if isinstance(at, Pos) else where) for a in type(s).BLOCKS)
    while todo:
        obj, where = todo.pop()
        if isinstance(obj, (list, tuple)):
            todo.extend((x, where) for x in obj if type(x) not in leaves)
            continue
        if isinstance(obj, dict):
            todo.extend((x, where) for x in obj.values() if type(x) not in leaves)
            continue
        t = type(obj)
        if t not in walked:
            walked[t] = (tuple(f.name for f in dataclasses.fields(obj))
                         if dataclasses.is_dataclass(obj) and not isinstance(obj, type) else None)
        names = walked[t]
        if names is None:
            continue
        if "pos" in names:
            pos = obj.pos
            if not isinstance(pos, Pos):
                return (f"a node {t.__name__} whose pos is {_kind_of(pos)}, not a place (a "
                        "serq_frontend.diagnostics.Pos: give a node the pos of the sugar it stands for)"), where
            where = pos
        # a kernel node's other fields hold what ast.py declares (WlItem("hidden", pos, 3): the linker's
        # "TypeError: 'int' object is not iterable", a traceback naming no plugin)
        wrong = _field_problem(obj, t, A)
        if wrong is not None:
            return wrong, where
        # an expression's place holds an expression (a node), not a number or None: the linker's "an
        # expression the linker does not know (float)" named neither the plugin nor a place
        if isinstance(obj, A.Node):
            slots = [(a, getattr(obj, a, None)) for a in t.EXPRS]
            slots += [(a, v) for a in t.EXPR_LISTS for v in (getattr(obj, a, None) or ())]
            slots = [(a, v) for a, v in slots if v is not None]
        elif t in (A.Num, A.Var, A.Call, A.Draw, A.Unary, A.Binary, A.Cond, A.Agg):
            slots = [("", v) for v in A.expr_children(obj)]
        else:
            slots = []
        for a, v in slots:
            if type(v) in leaves or not dataclasses.is_dataclass(v) or isinstance(v, type):
                return (f"{_kind_of(v)} where {t.__name__}{'.' + a if a else ''} holds an expression (a node: "
                        "serq_frontend.ast.Num for a number)"), where
        for name in names:
            x = getattr(obj, name)
            if type(x) not in leaves:
                todo.append((x, where))
    return None


#: the declared types of the kernel's node classes (serq_frontend.ast), by class: ``{field: type}`` of the
#: fields :func:`_field_problem` checks (an expression's field, ``Any``, and a kind's name are not: the walk
#: checks expressions, the linker's refusal of a kind the kernel lacks names the layer)
_DECLARED: dict[type, dict[str, Any]] = {}


def _declared(t: type, A: Any) -> dict[str, Any]:
    got = _DECLARED.get(t)
    if got is None:
        import dataclasses
        import typing

        hints = typing.get_type_hints(t) if t.__module__ == A.__name__ else {}
        names = {f.name for f in dataclasses.fields(t)}
        skip = {"kind"} if t in (A.WlItem, A.Kind, A.PoolOpt) else set()
        got = _DECLARED[t] = {n: h for n, h in hints.items() if n in names and n not in skip and h is not Any}
    return got


def _fits(v: Any, hint: Any) -> bool:
    """Whether ``v`` is of the declared type ``hint`` (a class, ``X | None``, ``list[X]``, ``tuple[X, …]``,
    ``dict[K, V]``, ``Any``). A list may be a tuple; a float an int; a bool an int."""
    import types
    import typing

    if hint is Any:
        return True
    if hint is type(None):
        return v is None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        return any(_fits(v, h) for h in args)
    if origin is list:
        return isinstance(v, (list, tuple)) and all(_fits(x, args[0]) for x in v)
    if origin is tuple:
        return isinstance(v, (list, tuple)) and len(v) == len(args) and all(map(_fits, v, args))
    if origin is dict:
        return isinstance(v, dict) and all(_fits(k, args[0]) and _fits(x, args[1]) for k, x in v.items())
    if hint is float:
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if hint is bool:
        return isinstance(v, (bool, int))
    return isinstance(v, hint)


def _said(hint: Any) -> str:
    """A declared type as the message writes it: ``list[tuple[str, Pos]]``."""
    import typing

    if isinstance(hint, type) and typing.get_origin(hint) is None:
        return hint.__name__
    return str(hint).replace("serq_frontend.diagnostics.", "").replace("serq_frontend.ast.", "").replace(
        "typing.", "")


def _field_problem(obj: Any, t: type, A: Any) -> str | None:
    """What is wrong with a field of ``obj``, a node of the kernel's class ``t``, beside the type ast.py
    declares for it (an expression's and a block's fields are checked apart): ``an object of type int where
    WlItem.arg holds, for `hidden`, list[tuple[str, Pos]]``; None when each fits. What ``arg`` holds by
    kind is the class's ``ARGS`` (:class:`serq_frontend.ast.WlItem`, :class:`serq_frontend.ast.Kind`)."""
    if t.__module__ != A.__name__:
        return None
    for name, hint in _declared(t, A).items():
        v = getattr(obj, name, None)
        if not _fits(v, hint):
            return f"{_kind_of(v)} where {t.__name__}.{name} holds {_said(hint)}"
    by_kind = getattr(t, "ARGS", None)
    if by_kind:
        kind = getattr(obj, "kind", None)
        hint = by_kind.get(kind) if isinstance(kind, str) else None
        if hint is not None and not _fits(obj.arg, hint):
            return f"{_kind_of(obj.arg)} where {t.__name__}.arg holds, for `{kind}`, {_said(hint)}"
    return None


def _graph_problem(items: Any) -> str | None:
    """What makes a plugin's AST (``items``, a module's) no tree that the passes can walk: a node within itself
    (a cycle, which every walk followed for ever, or to the nesting's limit, told as the program's), or one
    node object at several places whose tree, each written out where it stands, has more than
    ``serq_ir.rules.MAX_TREE`` nodes (``e = Binary("+", e, e)`` forty times is forty objects and 2**40 nodes:
    the nesting check and the linker never ended). Each object is walked once, without recursion (a tree
    read from a text shares no node, and is judged by its nesting alone)."""
    import dataclasses

    from serq_ir.rules import MAX_TREE

    from .diagnostics import Pos

    leaves = _LEAVES | {Pos}
    fields: dict[type, tuple[str, ...] | None] = {}

    def kids(obj: Any) -> list[Any]:
        if isinstance(obj, (list, tuple)):
            return [x for x in obj if type(x) not in leaves]
        if isinstance(obj, dict):
            return [x for x in obj.values() if type(x) not in leaves]
        t = type(obj)
        if t not in fields:
            fields[t] = (tuple(f.name for f in dataclasses.fields(obj))
                         if dataclasses.is_dataclass(obj) and not isinstance(obj, type) else None)
        names = fields[t]
        return [] if names is None else [x for n in names if type(x := getattr(obj, n)) not in leaves]

    size: dict[int, int] = {}
    path: set[int] = set()  # the objects whose walk is under way: an ancestor met again is a cycle
    shared = False
    todo: list[tuple[Any, list[Any] | None]] = [(items, None)]
    while todo:
        obj, done = todo.pop()
        key = id(obj)
        if done is not None:  # its children are counted
            size[key] = 1 + sum(size[id(k)] for k in done)
            path.discard(key)
            continue
        if key in size:
            shared = True
            continue
        if key in path:
            return (f"a node {type(obj).__name__} within itself (one of its parts holds it): a program is a tree "
                    "of nodes")
        path.add(key)
        below = kids(obj)
        todo.append((obj, below))
        todo.extend((k, None) for k in below)
    total = size[id(items)]
    if shared and total > MAX_TREE:
        return (f"one node object at several places, which written out where each stands make a tree of {total} "
                f"nodes, more than {MAX_TREE} (copy.deepcopy what is put in twice)")
    return None


#: the types of values in a parsed program that hold nothing (skipped by :func:`_check_nesting` at once)
_LEAVES = frozenset({str, int, float, bool, type(None)})


def _check_nesting(module: Any, ctx: Any) -> None:
    """Refuse, at the position of the first node the walk meets beyond it (on the way to the deepest: the walk
    raises there, without reading on), a parsed program nested deeper than :data:`MAX_NESTING`
    (walked without recursion). A position (a :class:`~serq_frontend.diagnostics.Pos`, a dataclass) is no
    level: an aggregate's ``var_pos`` 1 001 deep was taken for the node beyond, and having no position of its
    own it was refused at none (``deep.sq: error: the program nests more than 1000 deep here``, for ``max j in
    2 (max j in 2 (…))`` 1 100 deep). A node without a position is refused at its nearest enclosing node's."""
    import dataclasses

    from .diagnostics import Pos

    leaves = _LEAVES | {Pos}
    # the fields walked of each type met, None for what is no dataclass instance (a Token, a Pos's parts):
    # dataclasses.fields and is_dataclass asked of every node were most of the walk's time
    walked: dict[type, tuple[str, ...] | None] = {}
    todo = [(module, 0, None)]
    pop, push = todo.pop, todo.append
    while todo:
        obj, d, where = pop()
        t = type(obj)
        if t is list or t is tuple or isinstance(obj, (list, tuple)):
            todo.extend((x, d, where) for x in obj if type(x) not in leaves)
            continue
        if t in walked:
            names = walked[t]
        else:
            names = walked[t] = (tuple(f.name for f in dataclasses.fields(obj) if f.name != "pos")
                                 if dataclasses.is_dataclass(obj) and not isinstance(obj, type) else None)
        if names is None:
            continue
        where = getattr(obj, "pos", None) or where  # (the node's own place, else its nearest enclosing one's)
        d += 1  # (a dataclass of no field but pos is a level all the same)
        if d > MAX_NESTING:
            raise ctx.error(where, f"the program nests more than {MAX_NESTING} deep here "
                            f"(expressions and blocks inside one another); {_nesting_hint()}")
        for name in names:
            x = getattr(obj, name)
            if type(x) not in leaves:
                push((x, d, where))

