"""The parser facade: one LALR parser per set of sugar layers, built once, and the AST builder.

The kernel grammar is ``grammar/kernel.lark``; each sugar layer appends its own grammar (``%extend``) and
the callbacks that build its AST nodes. Lark calls the callbacks while it parses (an inline transformer,
so no parse tree is built), with positions propagated.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from serq.errors import one_edit
from serq_ir.validate import MAX_NAME
from serq_ir.validate import long_name as _long_name

from . import ast as A
from .diagnostics import CompileError, Pos, Reporter, did_you_mean
from .names import DIALECT, KEYWORDS, not_in_language

Builder = Callable[["BuildContext", Pos, list[Any]], Any]


def grammar_text(name: str) -> str:
    """A grammar file of this package (``kernel``, ``serving``, …), UTF-8 as every file of serQ's: read in
    the locale's encoding, an ASCII locale (``LC_ALL=C`` without Python's UTF-8 mode) ended every compile in
    a ``UnicodeDecodeError`` traceback on the comments' ``…`` and ``§``, and a Latin-1 one made the grammar
    another text (another key of its LALR tables)."""
    return resources.files("serq_frontend").joinpath("grammar", f"{name}.lark").read_text(encoding="utf-8")


#: how many of a compile's calls of plugins' builders that built None are kept (BuildContext.nones)
NONES_KEPT = 4096


class BuildContext(threading.local):
    """What a builder callback sees: the file being parsed, and a way to fail at a position.

    One for each thread (a ``threading.local``): a parser, and so its context, is shared by every compile
    of its layers, and compiles in two threads at once set each other's file, reporter and ``seen`` (a
    compile cleared another's ``seen`` in the middle of its parse, whose desugaring then skipped the layers
    it used: ``vllm.sq`` failed with "unknown name `hit`" beside another compile)."""

    def __init__(self) -> None:
        self.file = "<source>"
        self.reporter: Reporter | None = None
        #: the text being parsed (a builder's refusal may look at the rest of the program)
        self.text = ""
        #: the layers whose rules the parses of this compile have built
        self.seen: set[str] = set()
        #: the class of each node a plugin's builder built in this compile, and its layer's name: a node the
        #: linker meets that the kernel does not have is told as that layer's
        self.made: dict[type, str] = {}
        #: ``(pos, layer, rule)`` of the first :data:`NONES_KEPT` calls of a plugin's builder in this compile
        #: that built None (an absent part its own rule reads, or a slip): an expression the linker finds None
        #: is told at the place of the construct whose builder built it, naming its layer
        self.nones: list[tuple[Pos, str, str]] = []

    def error(self, pos: Pos, message: str) -> CompileError:
        assert self.reporter is not None
        return self.reporter.error(pos, message)

    def forget(self) -> None:
        """Let go of the last parse's text and reporter (the compile is over): the thread's parser held them
        until its next compile, a source of 16 MiB and the list of its lines a warning split it into."""
        self.text = ""
        self.reporter = None


# ---------------------------------------------------------------------------------------------------
# Kernel builders
# ---------------------------------------------------------------------------------------------------


def _binop(op: str) -> Builder:
    return lambda b, p, c: A.Binary(op, c[0], c[1], p)


def _stmts(x: Any) -> list[Any]:
    return x if x is not None else []


def _opt(kind: str) -> Builder:
    return lambda b, p, c: A.PoolOpt(kind, [x for x in c if x is not None], p)


def _s_hold(b: BuildContext, p: Pos, c: list[Any]) -> A.SHold:
    pools: list[A.HoldPool] = []
    body: list[Any] = []
    h = A.SHold(pools, body, p)
    for x in c:
        if isinstance(x, A.HoldPool):
            pools.append(x)
        elif isinstance(x, list):
            h.body = x
        elif isinstance(x, tuple):
            tag = x[0]
            if tag == "reuse":
                if h.reuse is not None:
                    raise b.error(x[2], "`reuse` is given twice")
                h.reuse = x[1]
            elif tag == "at":
                if h.bindings:
                    raise b.error(x[2], "`at admission` is given twice")
                h.bindings = x[1]
            elif tag == "cache":
                h.cache = x[1]
            elif tag == "lease":
                h.lease, h.lease_time = x[1], x[2]
    return h


_CACHE_SHAPE = "`hold P (units) { … } cache (units) lease P (time)`"


def _block(b: BuildContext, stmts: list[Any]) -> list[Any]:
    """A block's statements. `cache (…);` is a hold's clause: where the grammar read it as a statement (a
    definition's call, though `cache` is a keyword no definition may take) it stood after a hold's `lease`,
    after a hold's own `cache`, or where no hold's block ended; the error says which, at the word."""
    for i, s in enumerate(stmts):
        if type(s) is A.SDefCall and s.name == "cache":
            named = _definition_named(b.text, "cache")
            if named is not None:  # `def cache(a) { … }` and its use: the name is what is wrong
                raise b.error(Pos(b.file, *named), _KEYWORD_NAMED.format(word="cache"))
            h = stmts[i - 1] if i else None
            if type(h) is A.SHold and h.cache is None and h.lease is not None:
                raise b.error(s.pos, f"`cache` comes before `lease`: {_CACHE_SHAPE}")
            if type(h) is A.SHold and h.cache is not None:
                raise b.error(s.pos, f"this hold has a `cache` already: {_CACHE_SHAPE}")
            raise b.error(s.pos, "`cache` is a hold's clause, after its block: `hold P (units) { … } cache (units)`")
    return stmts


class Word(str):
    """A keyword or name a builder passes on as a value, with its position."""

    pos: Pos


def _word(b: BuildContext, p: Pos, c: list[Any]) -> Word:
    w = Word(str(c[0]))
    w.pos = p
    return w


def name_pos(b: BuildContext, name: Any) -> Pos | None:
    """Where a declaration's name (a NAME token or a word) is written."""
    if isinstance(name, Token) and name.line is not None:
        return Pos(b.file, name.line, name.column)
    at = getattr(name, "pos", None)
    return at if isinstance(at, Pos) else None


class _Part:
    __slots__ = ("name", "index", "pos")

    def __init__(self, name: str, index: Any, pos: Pos):
        self.name, self.index, self.pos = name, index, pos


def _ref_part(b: BuildContext, p: Pos, c: list[Any]) -> _Part:
    return _Part(str(c[0]), c[1] if len(c) > 1 else None, p)


def _var(b: BuildContext, p: Pos, c: list[Any]) -> A.Var:
    return A.Var([(x.name, x.index) for x in c], p)


def _middle(b: BuildContext, p: Pos, c: list[Any]) -> Any:
    return c[0]


def _kind_step(b: BuildContext, p: Pos, c: list[Any]) -> A.Kind:
    k = A.Kind("step", p)
    for name, value, pos in c:
        if name in k.fields:
            if name == "serve" and "exclusive" in (value[0], k.fields[name][0][0]):
                # language.txt §3: the residents are served "the way serve names, said once per stage: an
                # order, by (…), or the rule exclusive prefill, which is not an order and so cannot be
                # combined with one"
                raise b.error(pos, "`serve` is given twice in this step stage: `serve exclusive prefill` is a rule, "
                              "not an order, and cannot be combined with one (`by (…)`, `admission`, `decode "
                              "first`); a stage says `serve` once")
            raise b.error(pos, f"`{name}` is given twice in this step stage")
        k.fields[name] = (value, pos)
    return k


def _step_field(name: str, value: Callable[[list[Any]], Any] = lambda c: c[0]) -> Builder:
    return lambda b, p, c: (name, value(c), p)


def _wl(kind: str, arg: Callable[[list[Any]], Any] = lambda c: None,
        extra: Callable[[list[Any]], Any] = lambda c: None) -> Builder:
    return lambda b, p, c: A.WlItem(kind, p, arg(c), extra(c))


def _number(b: BuildContext, p: Pos, c: list[Any]) -> A.Num:
    v = float(c[0])
    if v == math.inf:  # `1e400`: float() makes it inf, which the command line refuses (serq.numbers.number)
        from serq.numbers import beyond_doubles

        raise b.error(p, beyond_doubles(str(c[0]), _quoted(str(c[0]))))
    if v == 0.0:  # `0.8e-400`: float() makes it 0, refused as the command line refuses it (serq.numbers)
        from serq.numbers import below_doubles, underflows

        if underflows(str(c[0]), v):
            raise b.error(p, below_doubles(str(c[0]), _quoted(str(c[0]))))
    return A.Num(v, p)


KERNEL_BUILDERS: dict[str, Builder] = {
    "start": lambda b, p, c: list(c),
    "expr_start": lambda b, p, c: c[0],
    "let_item": lambda b, p, c: A.Let(str(c[0]), c[1], p, name_pos(b, c[0])),
    "pool_item": lambda b, p, c: A.PoolItem(str(c[0]), c[1], list(c[2:]), p, name_pos(b, c[0])),
    "stage_item": lambda b, p, c: A.StageItem(str(c[0]), c[1], c[2], p, name_pos(b, c[0])),
    "workload_item": lambda b, p, c: A.WorkloadItem(list(c), p),
    "session_item": lambda b, p, c: A.SessionItem(c[0], p),
    "run_item": lambda b, p, c: A.RunItem(list(c), p),
    "share_item": lambda b, p, c: A.ShareItem(str(c[0]), p),
    "gauge_item": lambda b, p, c: A.GaugeItem(str(c[0]), c[1], p),
    "size": lambda b, p, c: c[0],
    "opt_cap": _opt("cap"),
    "opt_block": _opt("block"),
    "opt_evict_lru": _opt("evict_lru"),
    "opt_evict_by": _opt("evict_by"),
    "opt_evict_ext": _opt("evict_ext"),
    "opt_preempt_ext": _opt("preempt_ext"),
    "ext_ref": lambda b, p, c: A.ExtRef(str(c[0])[1:], c[1] or [], p),
    "ext_args": lambda b, p, c: [x if isinstance(x, tuple) else (None, x, getattr(x, "pos", p)) for x in c],
    "ext_named": lambda b, p, c: (str(c[0]), c[1], p),
    "kind_ext": lambda b, p, c: A.Kind("ext", p, c[0]),
    "opt_preempt_none": _opt("preempt_none"),
    "opt_preempt_lifo": _opt("preempt_lifo"),
    "opt_preempt_by": lambda b, p, c: A.PoolOpt("preempt_by", [c[0]], p, c[1] or "head"),
    "requeue": lambda b, p, c: str(c[0]),
    "opt_queue_fifo": _opt("queue_fifo"),
    "opt_queue_by": _opt("queue_by"),
    "opt_reserve_held": _opt("reserve_held"),
    "opt_cache_computed": _opt("cache_computed"),
    "opt_cache_scheduled": _opt("cache_scheduled"),
    "opt_admit_via": _opt("admit_via"),
    "opt_spill": _opt("spill"),
    "kind_fifo": lambda b, p, c: A.Kind("fifo", p, c[0]),
    "paren_expr": lambda b, p, c: c[0],
    "kind_ps": lambda b, p, c: A.Kind("ps", p, c[0]),
    "kind_delay": lambda b, p, c: A.Kind("delay", p),
    "kind_step": _kind_step,
    "step_budget": _step_field("budget"),
    "step_cost": _step_field("cost"),
    "step_chunk": _step_field("chunk"),
    "serve_admission": _step_field("serve", lambda c: ("by", [])),
    "serve_by": _step_field("serve", lambda c: ("by", c[0])),
    "serve_decode_first": _step_field("serve", lambda c: ("decode_first", None)),
    "serve_exclusive": _step_field("serve", lambda c: ("exclusive", None)),
    "step_memory": _step_field("memory"),
    "wl_arrive": _wl("arrive", lambda c: c[1], lambda c: str(c[0])),
    "wl_arrive_none": _wl("arrive", extra=lambda c: "none"),
    "wl_trace": _wl("trace", lambda c: str(c[0])[1:-1], lambda c: c[1] is not None),
    "wl_init": _wl("init", lambda c: c[0]),
    "wl_turn": _wl("turn", lambda c: c[0]),
    "wl_hidden": lambda b, p, c: A.WlItem("hidden", p, [(str(t), Pos(b.file, t.line, t.column)) for t in c]),
    "run_field": lambda b, p, c: (str(c[0]), c[1], p),
    "block": lambda b, p, c: _block(b, list(c)),
    "s_turn": lambda b, p, c: A.STurn(p),
    "s_end": lambda b, p, c: A.SEnd(p),
    "s_set": lambda b, p, c: A.SSet(str(c[0]), c[1], p),
    "s_observe": lambda b, p, c: A.SObserve(str(c[0]), c[1], p),
    "s_record": lambda b, p, c: A.SRecord(str(c[0]), [x[0] for x in c[1:]], [x[1] for x in c[1:]], p,
                                          [x[2] for x in c[1:]]),
    "record_col": lambda b, p, c: (str(c[0]), c[1], p),
    "s_hold": _s_hold,
    "s_grow": lambda b, p, c: A.SGrow(c[0], c[1], p),
    "s_drop": lambda b, p, c: A.SDrop(c[0], p),
    "s_release": lambda b, p, c: A.SRelease(c[0], p),
    "s_load": lambda b, p, c: A.SLoad(c[0], c[1], p),
    "s_run": lambda b, p, c: A.SRun(list(c[:-3]), str(c[-3] or "plain"), c[-2], p, c[-1]),
    "s_run_own": lambda b, p, c: A.SRun([], "plain", c[0], p, c[1]),
    "s_branch": lambda b, p, c: A.SBranch(c[0], c[1], _stmts(c[2]), p),
    "s_loop": lambda b, p, c: A.SLoop(c[0], p),
    "s_choose": lambda b, p, c: A.SChoose(str(c[0]), c[1], c[2], p),
    "semi": lambda b, p, c: None,
    "mode": _word,
    "growing": lambda b, p, c: c[0],
    "else_block": lambda b, p, c: c[0],
    "hold_pool": lambda b, p, c: A.HoldPool(c[0], c[1], c[2]),
    "reserve": lambda b, p, c: c[0],
    "hold_reuse": lambda b, p, c: ("reuse", c[0], p),
    "hold_cache": lambda b, p, c: ("cache", c[0], p),
    "hold_lease": lambda b, p, c: ("lease", c[0], c[1], p),
    "ref": _var,
    "ref_part": _ref_part,
    "rname": _word,
    "args": lambda b, p, c: list(c),
    "cond": lambda b, p, c: A.Cond(c[0], c[1], c[2], p),
    "or_": _binop("||"),
    "and_": _binop("&&"),
    "lt": _binop("<"),
    "le": _binop("<="),
    "gt": _binop(">"),
    "ge": _binop(">="),
    "eq": _binop("=="),
    "ne": _binop("!="),
    "add": _binop("+"),
    "sub": _binop("-"),
    "mul": _binop("*"),
    "div": _binop("/"),
    "mod": _binop("%"),
    "neg": lambda b, p, c: A.Unary("-", c[0], p),
    "not_": lambda b, p, c: A.Unary("!", c[0], p),
    "number": _number,
    "var": _var,
    "atom": _middle,
    "var_part": _ref_part,
    "call": lambda b, p, c: A.Call(str(c[0]), c[1] or [], p),
    "draw": lambda b, p, c: A.Draw(str(c[0]), c[1] or [], p),
}


# ---------------------------------------------------------------------------------------------------
# The parser, built once per set of layers
# ---------------------------------------------------------------------------------------------------


class Parser:
    """A lark LALR parser for the kernel and the given layers, with its builder."""

    def __init__(self, layers: Sequence[Any], cache: str | None = None):
        from .sugar import is_builtin

        texts = [grammar_text("kernel")]
        builders = dict(KERNEL_BUILDERS)
        owner: dict[str, str] = {}
        #: the tokens a builder is given: serQ's named terminals, and those a plugin's grammar defines (`DUR:
        #: /[0-9]+ms/`), whose text its builder reads (they were dropped as a keyword is: `"sleep" DUR ";"`
        #: built from no children, the duration nowhere)
        named = set(NAMED_TERMINALS)
        for layer in layers:
            if layer.grammar:
                texts.append(layer.grammar)
                if not is_builtin(layer):
                    named.update(_TERMINAL_DEFINED.findall(layer.grammar))
            for rule in layer.builders or {}:
                owner[rule] = layer.name
            builders.update(layer.builders or {})
        plugins = {layer.name for layer in layers if not is_builtin(layer)}
        #: the layers it was built from, kept alive (its entry in :data:`_PARSERS` is keyed by their ids)
        self.layers = tuple(layers)
        self.context = BuildContext()
        ctx = self.context

        def method(fn: Builder, keep: bool, layer: str | None, rule: str) -> Callable[..., Any]:
            # Every token is kept (so that a rule knows where its first keyword is); the builder sees
            # the children lark would give it without keep_all_tokens: named terminals, nodes, and the
            # None of an absent optional.
            def m(children: list[Any]) -> Any:
                pos = None
                for c in children:
                    if c is None:
                        continue
                    if type(c) is Token:
                        pos = Pos(ctx.file, c.line, c.column)
                    else:
                        pos = _pos_of(c)
                    if pos is not None:
                        break
                if pos is None:
                    pos = Pos(ctx.file, 0, 0)
                if not keep:
                    children = [c for c in children if type(c) is not Token or c.type in named]
                if layer is not None:
                    ctx.seen.add(layer)
                    if layer in plugins:
                        built = fn(ctx, pos, children)
                        ctx.made.setdefault(type(built), layer)
                        if built is None and len(ctx.nones) < NONES_KEPT:
                            ctx.nones.append((pos, layer, rule))
                        return built
                return fn(ctx, pos, children)

            return m

        ns = {name: staticmethod(method(fn, name in KEEP_TOKENS, owner.get(name), name))
              for name, fn in builders.items()}
        callbacks = type("SerqBuilder", (), ns)()
        grammar = "\n".join(texts)
        lark = None
        if cache:
            key = tables_key(grammar, LARK_OPTIONS)
            lark = load_tables(cache, key, callbacks)
        if lark is None:
            lark = Lark(grammar, transformer=callbacks, **LARK_OPTIONS)
            if cache:
                save_tables(cache, key, lark)
        self.lark = lark

    def parse(self, text: str, file: str, reporter: Reporter, *, start: str = "start") -> Any:
        """The AST of ``text`` (lark's LALR loop, ``parse_from_state``, with one guard): a parse whose stack
        grows past :data:`MAX_STACK` entries is refused at the token that grows it, without reading on.
        What the parser holds on its stack until it can reduce it (a run of ``(``, of prefix ``-``, of
        ``c ? a :``) took some 400 bytes a character: a source of 16 MiB of ``(`` would take 6 GB before any
        error; a program nested so deeply is refused after the parse anyway (``MAX_NESTING``, at its
        deepest node), and a program within it needs a stack of a few thousand at most."""
        self.context.file = file
        self.context.reporter = reporter
        self.context.text = text
        if not text.isascii():
            _warn_bidi(text, file, reporter)
        try:
            ip = self.lark.parse_interactive(text, start=start)
            state = ip.parser_state
            stack = state.state_stack
            token = None
            size = len(text)
            for token in ip.lexer_thread.lex(state):
                if token.type in _WORDS:
                    if len(token) > MAX_NAME and token.type in ("NAME", "EXT_NAME"):
                        # (a plugin's name is what follows its `@`: `@` and 256 characters is a name of 256)
                        name = str(token) if token.type == "NAME" else str(token)[1:]
                        if len(name) > MAX_NAME:
                            raise reporter.error(Pos(file, token.line or 0, token.column or 0), long_name(name))
                elif (token.end_pos < size and _word_char(text[token.end_pos]) and token
                      and _word_char(token[-1])):
                    # a keyword run on into a letter, a digit or `_`: where the grammar takes no name, lark's
                    # lexer matched the keyword alone and went on (`horizon10;` was `horizon 10;`, `cap8;` and
                    # `capN;` `cap 8;` and `cap N;`, `cost0.01` `cost 0.01`, which serq fmt then spaced as the
                    # word `cost0` and `.01`, a program that no longer parsed): a word is read whole
                    raise reporter.error(Pos(file, token.line or 0, token.column or 0), _run_on(text, token, self))
                state.feed_token(token)
                if len(stack) > MAX_STACK:
                    from . import MAX_NESTING, _nesting_hint

                    raise reporter.error(Pos(file, token.line or 0, token.column or 0),
                                         f"the program nests more than {MAX_NESTING} deep here (expressions, "
                                         f"brackets and blocks inside one another); {_nesting_hint()}")
            end = Token.new_borrow_pos("$END", "", token) if token is not None else Token("$END", "", 0, 1, 1)
            return state.feed_token(end, True)
        except UnexpectedInput as e:
            raise syntax_error(e, text, file, reporter, self) from None

    def item_keywords(self) -> list[str]:
        """The words an item of a program begins with (this parser's grammar: its sugar and plugins' items
        included), for a syntax error's hint."""
        words = getattr(self, "_item_words", None)
        if words is None:
            words = []
            try:
                accepted = self.lark.parse_interactive("", start="start").accepts()
            except Exception:  # (a hint only: without it the message lists no words)
                accepted = ()
            for name in accepted:
                try:
                    pat = self.lark.get_terminal(name).pattern
                except KeyError:
                    continue
                if pat.type == "str" and pat.value.isalpha():
                    words.append(pat.value)
            words = self._item_words = sorted(set(words))
        return words

    def term_text(self, name: str) -> str | None:
        """The text of a terminal that is one string (a keyword, an operator), or None."""
        try:
            pat = self.lark.get_terminal(name).pattern
        except KeyError:
            return None
        return pat.value if pat.type == "str" else None

    def term_words(self, name: str) -> list[str]:
        """The words a terminal matches when it is one word or an alternation of words (a keyword;
        `horizon | warmup | seed | arrivals`), else none."""
        try:
            pat = self.lark.get_terminal(name).pattern
        except KeyError:
            return []
        if pat.type == "str":
            return [pat.value] if pat.value.isalpha() else []
        m = re.fullmatch(r"\(\?:((?:[A-Za-z_]+\|)*[A-Za-z_]+)\)", pat.value)
        return sorted(m.group(1).split("|")) if m else []

    def keywords(self) -> list[str]:
        """Every word of the grammar (its terminals that are one alphabetic string)."""
        words = getattr(self, "_keywords", None)
        if words is None:
            words = self._keywords = sorted({t.pattern.value for t in self.lark.terminals
                                             if t.pattern.type == "str" and t.pattern.value.isalpha()})
        return words


#: the terminals that are a name (whatever follows them is another token) or a literal: any other terminal that
#: is a word is a keyword, read whole (:meth:`Parser.parse`)
_WORDS = frozenset({"NAME", "EXT_NAME", "NUMBER", "STRING"})


def _run_on(text: str, token: Token, grammar: Parser) -> str:
    """The error of a keyword ``token`` the text runs on after, into a word: the whole word; run on into a
    number, the keyword and the number apart, else the closest of the grammar's words (`fifoo`, `capN`: a
    misspelt word, as the syntax error of a split word has it)."""
    end = token.end_pos
    while end < len(text) and _word_char(text[end]):
        end += 1
    word, rest = text[token.start_pos:end], text[token.end_pos:end]
    if not rest[0].isdigit():
        # the closest word, or else the keyword the word begins with (`capacity`: `cap`); that keyword among the
        # words offered (a run setting's `seed`, of a terminal of several words, is none of keywords(): `seeds`
        # was offered `serve`)
        return f"unexpected {_quoted(word)}" + (did_you_mean(word, sorted({*grammar.keywords(), str(token)}))
                                                or f" (did you mean `{token}`?)")
    return (f"unexpected {_quoted(word)}: the word `{token}` runs on into {_quoted(rest)}, and a word is read "
            f"whole (a space between them: {_quoted(f'{token} {rest}')})")


def long_name(name: str) -> str:
    """The error of a program's name longer than :data:`MAX_NAME` characters, in the words of an IR file's
    (serq_ir.validate.long_name), the name cut as every message cuts one."""
    from serq.errors import clipped

    return _long_name(f"`{clipped(name)}`", len(name))


#: the most entries the parser's stack may hold (:meth:`Parser.parse`): a program nested ``MAX_NESTING``
#: deep needs a few per level (and is refused at its deepest node after the parse); some 20 MB
MAX_STACK = 50_000

#: how every parser is built (the tables file's key includes them)
LARK_OPTIONS: dict[str, Any] = {"parser": "lalr", "lexer": "contextual", "propagate_positions": False,
                                "maybe_placeholders": True, "keep_all_tokens": True,
                                "start": ["start", "expr_start"]}
#: a terminal a grammar defines (``DUR: /[0-9]+ms/``, ``DUR.2: …``) at the start of a line
_TERMINAL_DEFINED = re.compile(r"^[ \t]*([A-Z_][A-Z_0-9]*)(?:\.-?[0-9]+)?[ \t]*:", re.M)
#: terminals a builder sees (anonymous keywords and punctuation are left out)
NAMED_TERMINALS = frozenset({"NAME", "NUMBER", "STRING", "REQUEUE", "ARRIVE", "ORDERED", "RUN_FIELD", "EXT_NAME"})
#: rules whose builder reads a keyword token itself
KEEP_TOKENS = frozenset({"rname", "mode", "serve_verb", "q_verb"})


def _pos_of(x: Any) -> Pos | None:
    p = getattr(x, "pos", None)
    if isinstance(p, Pos):
        return p
    if isinstance(x, tuple) and x:
        for y in x:
            if isinstance(y, Pos):
                return y
        return _pos_of(x[0]) if not isinstance(x[0], str) else None
    if isinstance(x, list) and x:
        return _pos_of(x[0])
    return None


#: the parsers built, by the ids of their layers, oldest first; an entry holds its layers (Parser.layers), so
#: no other layer takes one of their ids while it is kept, and at most MAX_PARSERS are kept. Keyed by ids
#: alone, with the layers not kept, a plugin that made its layer anew for each plugin manager could get a
#: freed layer's id, and its compile the parser of the other layer's grammar and builders.
_PARSERS: dict[tuple[int, ...], Parser] = {}
MAX_PARSERS = 8
_parsers_lock = threading.Lock()


def cached_parser(layers: Sequence[Any]) -> Parser | None:
    """The parser kept for exactly these layers (the same objects), or None."""
    p = _PARSERS.get(tuple(id(layer) for layer in layers))
    if p is None or len(p.layers) != len(layers) or any(a is not b for a, b in zip(p.layers, layers)):
        return None
    return p


def get_parser(layers: Sequence[Any], cache: str | None = None) -> Parser:
    """The parser for these layers, built on first use. ``cache``: a file where the grammar's LALR tables
    are kept between processes (:func:`load_tables`; rebuilt when the grammar, the options, lark's or
    Python's version change)."""
    p = cached_parser(layers)
    if p is None:
        p = Parser(layers, cache)
        with _parsers_lock:
            _PARSERS[tuple(id(layer) for layer in layers)] = p
            while len(_PARSERS) > MAX_PARSERS:
                del _PARSERS[next(iter(_PARSERS))]
    return p


# ---------------------------------------------------------------------------------------------------
# The LALR tables between processes
# ---------------------------------------------------------------------------------------------------

#: The layout of a tables file (bumped when it changes; part of its key).
TABLES_FORMAT = 1
_TABLES_MAGIC = b"serq-lalr-tables\n"
#: How a dict whose keys are not all strings is written in JSON: ``{"\u0000d": [[key, value], ...]}``.
_PAIRS = "\0d"


def _to_json(x: Any) -> Any:
    if isinstance(x, dict):
        if all(type(k) is str for k in x):
            return {k: _to_json(v) for k, v in x.items()}
        return {_PAIRS: [[k, _to_json(v)] for k, v in x.items()]}
    if isinstance(x, list | tuple):
        return [_to_json(v) for v in x]
    if x is None or type(x) in (str, int, bool, float):
        return x
    raise TypeError(f"cannot keep {type(x).__name__} in the tables file")


def _from_json(d: dict[str, Any]) -> Any:
    if len(d) == 1 and _PAIRS in d:
        return {k: v for k, v in d[_PAIRS]}
    return d


def tables_key(grammar: str, options: dict[str, Any]) -> str:
    """The key of the tables of ``grammar`` built with ``options``: it changes with the grammar, the
    options, lark's version, Python's and the file layout."""
    import hashlib
    import sys

    import lark

    text = "\0".join([str(TABLES_FORMAT), lark.__version__, repr(sys.version_info[:2]),
                      repr(sorted(options.items())), grammar])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


#: the largest tables file read (the kernel's and its sugar's tables are some 300 kB)
MAX_TABLES = 64 * 2**20


def load_tables(path: str, key: str, transformer: Any) -> Lark | None:
    """The parser kept in ``path`` for ``key``, or None when the file is missing, is not one this process
    may trust (:func:`serq_frontend.cache.read_trusted`), is corrupt, or is of another key. The file is
    JSON: reading it runs no code, whatever it holds."""
    import hashlib
    import json

    from .cache import read_trusted

    data = read_trusted(path, limit=MAX_TABLES)
    if data is None or not data.startswith(_TABLES_MAGIC):
        return None
    head, _, body = data[len(_TABLES_MAGIC):].partition(b"\n")
    file_key, _, digest = head.decode("ascii", "replace").partition(" ")
    if file_key != key or digest != hashlib.sha256(body).hexdigest():
        return None
    try:
        d = json.loads(body, object_hook=_from_json)
        return Lark._load_from_dict(d["data"], d["memo"], transformer=transformer)
    except Exception:  # noqa: BLE001 - a file that does not load is rebuilt, never an error
        return None


def save_tables(path: str, key: str, parser: Lark) -> None:
    """Keep ``parser``'s tables in ``path`` (JSON, written atomically, readable by this user alone); a
    folder that cannot be written is no error."""
    import hashlib
    import json

    from lark.grammar import Rule
    from lark.lark import _LOAD_ALLOWED_OPTIONS
    from lark.lexer import TerminalDef

    from .cache import write_trusted

    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k not in _LOAD_ALLOWED_OPTIONS}
    try:
        body = json.dumps(_to_json({"data": data, "memo": memo}), separators=(",", ":")).encode()
    except (TypeError, ValueError):  # pragma: no cover - a lark whose tables hold something else
        return
    head = f"{key} {hashlib.sha256(body).hexdigest()}\n".encode()
    write_trusted(path, _TABLES_MAGIC + head + body)


# ---------------------------------------------------------------------------------------------------
# Syntax errors
# ---------------------------------------------------------------------------------------------------

_TERMINAL_NAMES = {
    "SEMICOLON": "`;`", "LBRACE": "`{`", "RBRACE": "`}`", "LPAR": "`(`", "RPAR": "`)`",
    "LSQB": "`[`", "RSQB": "`]`", "COMMA": "`,`", "EQUAL": "`=`", "COLON": "`:`", "DOT": "`.`",
    "NAME": "a name", "EXT_NAME": "a plugin's name (@name)", "NUMBER": "a number", "STRING": "a string", "$END": "the end of the file",
}


def _describe_in(term: str, grammar: Any) -> str:
    """``_describe``, a terminal that is one string named by its text (an anonymous keyword's internal
    name is no word of the language)."""
    if term in _TERMINAL_NAMES or grammar is None:
        return _describe(term)
    text = grammar.term_text(term)
    if text is None:
        words = grammar.term_words(term)
        return ", ".join(words) if words else _describe(term)
    return text if text.isalpha() else f"`{text}`"


def _describe(term: str) -> str:
    if term in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[term]
    if term.startswith("__ANON") or term.isupper():
        return term.lower()
    return term


#: blanks, matched in the text reversed: the blanks that end a text, at C speed and without a copy each
_BLANKS = re.compile(r"\s*")


def _prev_token_end(text: str, offset: int) -> tuple[int, int] | None:
    """Line and column just after the last token before ``offset`` (comments and blanks skipped).

    Walks back a line at a time, copying only that line: it stripped and copied all of the text before
    ``offset`` for each comment line it passed, so a syntax error after 300 000 comment lines took 11 s
    to place its hint (a source of 16 MiB of them, an hour)."""
    reverse = text[:offset][::-1]
    end = offset
    while True:
        end = offset - _BLANKS.match(reverse, offset - end).end()  # the blanks before end skipped
        if end == 0:
            return None
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        k = line.find("//")
        while k >= 0 and line.count('"', 0, k) % 2:  # (a `//` inside a string: the next one)
            k = line.find("//", k + 2)
        if k >= 0:  # a comment ends the line: what is before it (after a string too, `use "a.sq";  // …`)
            end = start + k
            continue
        return _line_col(text, end)


def _token_text(tok: Token) -> str:
    if tok.type == "$END":
        return "the end of the file"
    return _quoted(str(tok))


def _quoted(text: str) -> str:
    """Source text a message quotes: between backquotes, unprintable characters as escapes, at most 40
    characters of it."""
    from serq.errors import printable

    text = printable(text)
    return f"`{text[:40]}...`" if len(text) > 40 else f"`{text}`"


#: characters a program copied from a document or a word processor has where it means an ASCII one
_LOOKALIKES = {
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2212": "-", "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-",
    "\u00d7": "*", "\u22c5": "*", "\u00b7": "*", "\u2217": "*", "\u00f7": "/", "\u2215": "/",
    "\u2264": "<=", "\u2265": ">=", "\u2260": "!=", "\u2227": "&&", "\u2228": "||", "\u00ac": "!",
    "\u2026": "...", "\u221e": "inf",
}


#: characters other than LF and CR that editors (and Python's ``str.splitlines``) may show as a line end; a
#: comment ends before one, so the text an editor shows on the lines after it is not silently a comment
_LINE_BREAKS = {"\u2028": "a line separator (U+2028)", "\u2029": "a paragraph separator (U+2029)",
                "\x85": "a next-line character (U+0085)"}


#: the bidirectional controls, embeddings, overrides and isolates (U+202A … U+202E, U+2066 … U+2069): an editor
#: shows the text after one, to its line's end, in another order than the characters are read, so a comment
#: or a string may seem to hold what it does not, or to end where it does not ("Trojan Source")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def _warn_bidi(text: str, file: str, reporter: Reporter) -> None:
    """A warning at each comment or string of ``text`` that holds a bidirectional control (:data:`_BIDI`), at
    its first one. Elsewhere one is no token's character: the parse refuses it (:func:`_unexpected_character`)."""
    import unicodedata

    line_end = -1
    for m in _BIDI.finditer(text):
        i = m.start()
        if i < line_end:  # (a comment or a string is one line: its first is told)
            continue
        start = text.rfind("\n", 0, i) + 1
        line_end = text.find("\n", i)
        line_end = len(text) if line_end < 0 else line_end
        where = _comment_or_string(text, start, i)
        if where is None:
            continue
        ch = text[i]
        line, col = _line_col(text, i)
        reporter.warn(Pos(file, line, col),
                      f"a bidirectional control character (U+{ord(ch):04X} {unicodedata.name(ch)}) in {where}: an "
                      "editor shows the text after it in another order than serQ reads it; delete it")


def _comment_or_string(text: str, start: int, i: int) -> str | None:
    """``a comment`` or ``a string`` when offset ``i`` of ``text`` is inside one on the line that begins at
    ``start`` (a string is ``"`` … ``"`` on one line, a comment ``//`` outside one to the line's end)."""
    inside = False
    j = start
    while j < i:
        c = text[j]
        if c == '"':
            inside = not inside
        elif not inside and c == "/" and text.startswith("//", j):
            return "a comment"
        j += 1
    return "a string" if inside else None


#: ASCII characters no token begins with that other languages give a meaning: what serQ writes instead
_OTHER_LANGUAGES = {"#": "a comment runs from `//` to the end of the line",
                    "&": "the logical and is `&&`", "|": "the logical or is `||`",
                    "^": "a power is `pow(x, y)`"}

#: a number's text runs on in these: `1_000`, `0x10`, `1e`, `1.5.3` are one malformed literal
_NUMBER_RUN = frozenset("0123456789._" "abcdefghijklmnopqrstuvwxyz" "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NUMBER_HELP = "a number is decimal digits, with an optional fraction and exponent (`1000`, `0.5`, `.5`, `1e3`, `2E-5`)"


#: a unit written after a number (`2 ms`, `100s`, `8 GB`): the seconds of a time's, or None for another kind
_UNITS = {"s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6,
          "ns": 1e-9, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0,
          "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0, "B": None, "KB": None, "MB": None, "GB": None,
          "TB": None, "KiB": None, "MiB": None, "GiB": None, "TiB": None, "k": None, "K": None, "M": None,
          "G": None, "tok": None, "tokens": None}


def _written(text: str, first: tuple[str, str, int, int], last: tuple[str, str, int, int]) -> str:
    """The source from the token ``first`` to the token ``last`` (:func:`_tokens_before`'s), as a message quotes
    it: the user's own text, its blanks and line ends each run one space (`5 %` stays `5 %`, where the tokens
    joined said `5%`)."""
    a = _offset(text, first[2], first[3])
    b = _offset(text, last[2], last[3]) + len(last[1])
    return _quoted(" ".join(text[a:b].split()))


def _unit_said(number: str, unit: str, written: str | None = None) -> str | None:
    """What a ``number`` followed by the unit ``unit`` is told (`2 ms`: a number takes no unit, and times are
    seconds, `0.002`), or None when ``unit`` is no unit a user writes. ``written``: the two as the source has
    them, quoted (:func:`_written`)."""
    if unit not in _UNITS:
        return None
    written = written or f"`{number} {unit}`"
    seconds = _UNITS[unit]
    if seconds is not None:
        try:
            value = f"`{float(number) * seconds:.6g}`"
        except ValueError:
            value = "in seconds"
        return (f"{written}: a number takes no unit; a time is a number of seconds (the program's clock), "
                f"{value} here")
    return (f"{written}: a number takes no unit; a pool's units are what its holds take (tokens, blocks, "
            "requests), a stage's work what its kind serves, and a multiple is written out (`8 * 1024`, `16e3`)")


def _malformed_number(text: str, k: int) -> tuple[int, str] | None:
    """The start and text of a malformed number the token at offset ``k`` continues without a blank (`1_000`,
    `0x10`, `1e`, `1.5.3`: the lexer read a number and then a name or another number), or None."""
    if k <= 0 or k >= len(text) or text[k - 1] not in _NUMBER_RUN or text[k] not in _NUMBER_RUN:
        return None

    def back(i: int) -> int:
        while i > 0 and text[i - 1] in _NUMBER_RUN:
            i -= 1
        return i

    def on(i: int) -> int:
        while i < len(text) and text[i] in _NUMBER_RUN:
            i += 1
        return i

    a, b = back(k), on(k)
    # an exponent's sign is part of the number's text: `1e+5e` is one malformed number, not `5e` after `1e+`
    if a >= 2 and text[a - 1] in "+-" and text[a - 2] in "eE" and _number_start(text, back(a - 1)):
        a = back(a - 1)
    if b < len(text) and text[b] in "+-" and text[b - 1] in "eE" and not text[b + 1:b + 2].isalpha() \
            and text[b + 1:b + 2] != "_":
        b = on(b + 1)  # `1e+` and `1e-;`: the sign the exponent lacks digits after
    word = text[a:b]
    if word[0].isdigit() or word[0] == "." and word[1:2].isdigit():
        return a, word
    return None


def _number_start(text: str, i: int) -> bool:
    """Whether a number's text begins at offset ``i`` (a digit, or ``.`` and a digit)."""
    return text[i:i + 1].isdigit() or text[i:i + 1] == "." and text[i + 1:i + 2].isdigit()


def _unexpected_character(ch: str, order: str = "LE") -> str:
    """The message for a character no token begins with. One that is not ASCII is named by its code point
    and Unicode name as well (a minus sign `−` and a hyphen `-` look alike), with the ASCII it stands for
    when it is a look-alike of one (a typographic quote, a minus sign, a full-width letter, a no-break
    space); a combining mark is written as an escape, since between backquotes it would sit on one. A
    ``"`` is a string left open on its line. A NUL names how to convert a file of UTF-16 in ``order`` (LE, BE)."""
    if ch == '"':
        return "a string is not closed: `\"` … `\"` on one line"
    if ch == "\r":
        return ("a carriage return not followed by a line feed: a line ends in LF or CRLF (an editor may show a "
                "line break here, which serQ does not read as one)")
    if ch in _LINE_BREAKS:
        return (f"{_LINE_BREAKS[ch]}: a line ends in LF or CRLF (an editor may show a line break here, which "
                "serQ does not read as one)")
    if ch in _OTHER_LANGUAGES:
        return f"unexpected character {_quoted(ch)}: {_OTHER_LANGUAGES[ch]}"
    if ch == "\x00":  # (a file of UTF-16 without a byte-order mark is UTF-8 to the byte, a NUL at every other one)
        return (f"unexpected character {_quoted(ch)} (a NUL byte): a program is text, and a file saved as UTF-16 "
                f"has a NUL byte beside each ASCII character (iconv -f UTF-16{order} -t UTF-8 converts one)")
    if not ch or ch.isascii():
        return f"unexpected character {_quoted(ch)}"
    import unicodedata

    from serq.errors import named_char

    shown, code = named_char(ch)
    out = f"unexpected character `{shown}` ({code}"
    ascii_ch = _LOOKALIKES.get(ch)
    if ascii_ch is None and unicodedata.category(ch) != "No":  # not ² for 2: x² is no x2
        folded = unicodedata.normalize("NFKC", ch)
        if folded.isascii() and folded.isprintable():
            ascii_ch = folded
    if ascii_ch == " ":
        return out + "; write a space)"
    if ascii_ch == "...":
        return out + "; write the expression out)"
    return out + (f"; write `{ascii_ch}`)" if ascii_ch else "): a program is ASCII outside its strings and comments")


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text`` (lines end at ``\\n``)."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _offset(text: str, line: int, col: int) -> int:
    """The offset in ``text`` of a 1-based line and column. The newlines before the line are counted a
    block of 64 KiB at a time, then found one by one in the last block (one by one from the start, a
    syntax error after 15 million blank lines took seconds for each line a hint placed)."""
    k, need = 0, line - 1
    while need > 0:
        n = text.count("\n", k, k + 65536)
        if n >= need or k + 65536 >= len(text):
            break
        need -= n
        k += 65536
    for _ in range(need):
        k = text.index("\n", k) + 1
    return k + col - 1


def _item_word(text: str, tok: Token, after: str = ";}") -> tuple[int, int, str] | None:
    """The word before ``tok`` (its line, column and text) when it stands where an item begins: first in
    the file or after one of the characters ``after`` (`;` or `}`; blanks and comments between). With
    ``after`` "{;}", where a statement begins (not first in the file then)."""
    offset = tok.start_pos if tok.type != "$END" and tok.start_pos is not None else len(text)
    end = _prev_token_end(text, offset)
    if end is None:
        return None
    before = text[:_offset(text, *end)]
    # the name that ends ``before``: its run of name characters, from its first letter or _ (a search for
    # ``[A-Za-z_][A-Za-z0-9_]*$`` matched every long name before it to its end and back: quadratic, 18 s
    # for a name of 80 000 characters earlier in the file)
    m = _NAME_START.search(before, len(before.rstrip(_NAME_CHARS)))
    if m is None:
        return None
    rest = text[:m.start()]
    prev = _prev_token_end(rest, len(rest))
    if prev is None and "{" in after or prev is not None and rest[_offset(rest, *prev) - 1] not in after:
        return None
    return *_line_col(text, m.start()), before[m.start():]


_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
_NAME_START = re.compile(r"[A-Za-z_]")


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_" if ch else False


def _statement_word(text: str, tok: Token) -> tuple[int, int, str] | None:
    """The first word of the statement ``tok`` stands in, when it is followed by `(` (a definition's call):
    its line, column and text. The statement begins after the last `;`, `{` or `}` before ``tok`` on its
    line or the lines before (a heuristic for a hint: None when it finds no such word)."""
    end = tok.start_pos if tok.start_pos is not None else len(text)
    k = max(text.rfind(c, 0, end) for c in ";{}") + 1
    m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(", text[k:end])
    if m is None:
        return None
    return *_line_col(text, k + m.start(1)), m.group(1)


_UNCLOSED = "a `}` is missing: this `{` is not closed before the end of the file"


#: the words an aggregate begins with (`max j in n (e)`)
_AGGREGATE_WORDS = frozenset({"max", "min", "sum"})
#: words that begin a statement and continue no statement before them (a line that begins with one
#: begins a statement)
_STATEMENT_WORDS = {"set", "observe", "hold", "run", "branch", "loop", "end", "turn", "drop", "record", "release",
                    "grow", "choose", "mark"}
#: words that begin an item (language.txt §2, item), but `run` and `share`, which a statement or a pull continues
_ITEM_WORDS = frozenset({"let", "def", "pool", "stage", "queue", "workload", "session", "server", "gauge", "use"})
#: every word that begins a statement: the words a word alone where a statement begins was meant to be
_BEGIN_WORDS = _STATEMENT_WORDS | {"load", "request", "prefill", "decode", "tool", "transfer"}


def _first_col(text: str, line: int) -> int:
    """The column of the first character of ``line`` that is no blank."""
    k = _offset(text, line, 1)
    j = k
    while j < len(text) and text[j] in " \t\f":
        j += 1
    return j - k + 1


def _open_braces(text: str, offset: int) -> tuple[list[tuple[int, int]], tuple[int, int] | None]:
    """The `{` still open at ``offset`` (line and column of each, the outermost first), and the first `{`
    whose `}` is less indented than the line the `{` stands on (that `}` closes an outer block: the `{`'s
    own `}` is the one missing), or None."""
    toks = _tokens_before(text, offset)
    first: dict[int, int] = {}  # a line's indentation: the column of its first token
    for _, _, line, col in toks:
        first.setdefault(line, col)
    stack: list[tuple[int, int]] = []
    misplaced = None
    for _, word, line, col in toks:
        if word == "{":
            stack.append((line, col))
        elif word == "}" and stack:
            opened = stack.pop()
            if misplaced is None and opened[0] < line and first[line] == col and col < first[opened[0]]:
                misplaced = opened
    return stack, misplaced


def _unclosed_brace(text: str) -> tuple[int, int] | None:
    """The `{` a file that ends inside a block most likely misses the `}` of (line, column): one whose `}`
    is less indented than its own line (the `}` of an outer block closed it), else the innermost `{` left
    open; None when every `{` is closed."""
    stack, misplaced = _open_braces(text, len(text))
    if not stack:
        return None
    return misplaced or stack[-1]


#: a word whose parenthesis holds one expression (language.txt §2: a statement's, a hold clause's, a stage kind's,
#: a spill's and a transfer's) -> what the expression is, where the parenthesis stands (after the word when
#: "") and how the whole is written (``{}``: the pool or stage as written), and what the form's arity adds.
#: One table of both errors: the parenthesis missing (:func:`_parenthesis_missing`, "`grow` takes its units in
#: parentheses after the pool, `grow kv (units);`") and another count in it (:func:`_one_expression`, "`grow`
#: takes one expression, its units, and found 2: `grow kv (units);`"); the arrival forms' are :data:`_ARRIVALS`
_PARENTHESISED = {
    "hold": ("its units", " after each pool", "hold {} (units) { … }",
             ", each pool with its own (`hold {} (units), Q (units) { … }`)"),
    "grow": ("its units", " after the pool", "grow {} (units);", ""),
    "load": ("its units", " after the pool", "load {} (units);", ""),
    "run": ("its work", " after the stage", "run {} (work);", ""),
    "lease": ("its time", " after the pool", "lease {} (time)", ""),
    "reserve": ("its units", "", "reserve (units)", ""),
    "reuse": ("its bound", "", "reuse (bound)", ""),
    "cache": ("the units it keeps", "", "cache (units)", ""),
    "branch": ("its test", "", "branch (test) { … }", ""),
    "ps": ("its capacity", "", "ps(capacity)", ""),
    "fifo": ("its number of servers", "", "fifo(2)", ", or nothing for one, `fifo`"),
    "with": ("its probability", "", "branch with (p) { … }", ""),
    "when": ("its test", "", "spill TIER via LINK (work) when (pred);", ""),
    "via": ("the work of its write", " after the link", "spill TIER via LINK (work) when (pred);", ""),
    "transfer": ("the link's work", "", "transfer (X) from P to Q (n);", ""),
    "to": ("the tokens that move", " after the pool", "transfer (X) from P to Q (n);", ""),
}


def _one_shape(word: str, ref: str = "") -> tuple[str, str]:
    """What the parenthesis after ``word`` (of :data:`_PARENTHESISED`) holds and how the form is written, as the
    error of another count in it says them: ``("its units", "`grow kv (units);`")`` (``ref`` the pool or stage
    as written, else ``S``)."""
    what, _, shape, more = _PARENTHESISED[word]
    return what, f"`{shape}`{more}".replace("{}", ref or "S")


#: the modes a run on a step stage may name (kernel.lark's `mode`, language.txt §2's `run STAGE [prefill | decode]`)
_RUN_MODES = ("prefill", "decode")


#: an arrival form's word -> what it takes in parentheses (language.txt §2's workload)
_ARRIVALS = {"poisson": ("its rate", "rate"), "renewal": ("its gap", "gap"),
             "closed": ("its number of sessions", "n"), "batch": ("its number of sessions", "n")}


def _statement_start(before: list[tuple[str, str, int, int]], end: int) -> int:
    """The index in ``before`` of the first token of the statement that ``before[:end]`` ends inside: the token
    after the last ``;``, ``{`` or ``}`` outside parentheses and brackets."""
    depth = 0
    i = end
    while i > 0:
        t = before[i - 1][1]
        if depth == 0 and t in (";", "{", "}"):
            break
        if t in (")", "]"):
            depth += 1
        elif t in ("(", "["):
            depth -= 1
        i -= 1
    return i


def _opener(before: list[tuple[str, str, int, int]], close: int, pair: str) -> int:
    """The index in ``before`` of the token that opens the bracket ``pair`` (``"{}"``, ``"[]"``) closed by
    ``before[close]``, or -1 when none does."""
    depth = 0
    for j in range(close, -1, -1):
        t = before[j][1]
        if t == pair[1]:
            depth += 1
        elif t == pair[0]:
            depth -= 1
            if depth == 0:
                return j
    return -1


def _block_of(before: list[tuple[str, str, int, int]], close: int) -> str:
    """The first word of the statement whose block the ``}`` at ``before[close]`` closes (`branch` for a
    branch's first block, `else` for its second), or "" when no `{` opens it."""
    j = _opener(before, close, "{}")
    if j < 0:
        return ""
    i = _statement_start(before, j)
    return before[i][1] if i < j else ""


def _block_of_hold(before: list[tuple[str, str, int, int]], close: int) -> bool:
    """Whether the ``}`` at ``before[close]`` closes the block of a hold (the statement its ``{`` ends the
    header of begins with ``hold``)."""
    j = _opener(before, close, "{}")
    if j < 0:
        return False
    i = _statement_start(before, j)
    return i < j and before[i][1] == "hold"


def _parenthesis_missing(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """Where and what to say when a statement that takes a parenthesised amount (``hold kv (n) { … }``,
    ``grow``, ``load``, ``run``, a hold's ``reserve``, ``reuse``, ``cache``, ``lease``, ``branch``'s test)
    was written without it (``hold kv { … }`` was only "unexpected `{`"): at the token found instead, the
    statement's word named and how it is written. None when the error is not that."""
    if "LPAR" not in expected or str(tok) == "(" or tok.type != "$END" and tok.start_pos is None:
        return None
    offset = tok.start_pos if tok.type != "$END" else len(text)
    before = _tokens_before(text, offset)
    if not before:
        return None
    found = "end of the file" if tok.type == "$END" else _token_text(tok)  # (`unexpected end of the file`)
    where = (tok.line, tok.column) if tok.type != "$END" else (_prev_token_end(text, len(text)) or (1, 1))
    last, prev = before[-1][1], (before[-2][1] if len(before) >= 2 else "")
    first = _statement_start(before, len(before))
    if (first < len(before) and before[first][1] == "spill" and any(t[1] == "via" for t in before[first:])
            and not any(t[1] == "(" for t in before[first:])):  # `spill cpu via pcie when (1);`
        return where, (f"unexpected {found}: `spill` takes the work of its write in parentheses after the link, "
                       "`spill TIER via LINK (work) when (pred);`")
    if prev == "arrive" and last in _ARRIVALS:  # `arrive poisson;`
        what, shape = _ARRIVALS[last]
        return where, f"unexpected {found}: `arrive {last}` takes {what} in parentheses, `arrive {last}({shape});`"
    if prev == ":" and last == "ps":  # `stage s : ps;`
        return where, f"unexpected {found}: `ps` takes its capacity in parentheses, `ps(capacity)`"
    if last == "by" and before[-1][0] == "name":  # `queue by waited;`, `choose c in n by c;`
        return where, f"unexpected {found}: `by` takes its keys in parentheses, `by (key, …)`"
    # the pool or stage the amount follows: names, `.`, `[…]` (and a run's `prefill` or `decode`) back from
    # the error, then the word before them
    k = len(before)
    depth = 0
    while k > 0:
        t = before[k - 1]
        if t[1] == "]":
            depth += 1
        elif t[1] == "[":
            depth -= 1
        elif depth == 0 and not (t[1] == "." or t[0] == "name" and t[1] not in _PARENTHESISED):
            break
        k -= 1
    ref = " ".join(t[1] for t in before[k:]).replace(" . ", ".").replace(" [ ", "[").replace(" ]", "]")
    if k == 0:
        return None
    word = before[k - 1][1]
    start = _statement_start(before, k - 1)
    first = before[start][1] if start < len(before) else ""
    if word == "," and first in ("hold", "run") and ref:
        word = first  # `hold kv (1), kv2 { … }`, `run s, t;`
    elif word in ("hold", "grow", "load", "run", "branch") and start == k - 1:
        pass
    elif word in ("reserve", "reuse") and first == "hold" and not ref:
        pass
    elif word in ("cache", "lease") and k >= 2 and before[k - 2][1] == "}" and _block_of_hold(before, k - 2):
        pass
    else:
        return None
    if word in ("reserve", "reuse", "cache", "branch") and ref:
        return None
    if word in ("hold", "grow", "load", "lease") and not ref:
        ref = "P"
    elif word == "run":
        ref = ref or "S"
    what, after, shape, _ = _PARENTHESISED[word]
    return where, f"unexpected {found}: `{word}` takes {what} in parentheses{after}, `{shape.replace('{}', ref)}`"


def _stage_kind_ended(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """A word or a number after the kind of a stage declaration (``stage t : fifo 2;``), a queue's ``serve``
    or its ``nic``, on the kind's line: what the declaration takes there. The error listed the grammar's
    tokens, and for a declaration of the kernel `latency` among them, which only a queue's serve takes (a
    link's wait). At the token; None when the error is not that."""
    if tok.type in ("$END", "SEMICOLON") or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    start = _statement_start(before, len(before))
    words = [t[1] for t in before[start:]]
    if not words or before[-1][2] != tok.line:
        return None
    if words[0] == "stage":
        k = words.index(":") + 1 if ":" in words else 0
        if k == 0 or words[1:2] and words[1] in ("(", ":"):
            return None
    elif words[0] in ("serve", "nic") and _open_braces(text, tok.start_pos)[0]:
        k = 1
    else:
        return None
    kind = words[k:]
    if kind[:1] == ["@"] and len(kind) >= 2:
        kind = ["@" + kind[1], *kind[2:]]
    if not kind or kind[0] not in ("fifo", "ps", "delay") and not kind[0].startswith("@"):
        return None
    rest = kind[1:]
    if rest and (rest[0] != "(" or rest[-1] != ")" or rest.count("(") != rest.count(")")):
        return None
    if words[0] == "serve" and str(tok) == "latency":
        return None
    if (tok.type != "NAME" and str(tok).isalpha() and str(tok) != "latency"
            or tok.type == "NAME" and words[0] != "stage"):
        return None  # the word that begins the next item, statement or entry: a `;` is missing
    found = _token_text(tok)
    k += start
    shape = " ".join(text[_offset(text, before[k][2], before[k][3]):tok.start_pos].split())
    head = " ".join(text[_offset(text, before[start][2], before[start][3]):
                         _offset(text, before[k - 1][2], before[k - 1][3]) + len(before[k - 1][1])].split())
    if kind[0] == "fifo" and not rest and tok.type in ("NUMBER", "NAME"):
        return (tok.line, tok.column), (f"unexpected {found}: `fifo` takes its number of servers in parentheses, "
                                        f"`{head} fifo({tok});` (`fifo` alone is one server)")
    decl = {"stage": "a stage declaration", "serve": "a queue's serve", "nic": "a queue's nic"}[words[0]]
    ends = "ends after its kind, or a link's wait, `latency x`" if words[0] == "serve" else "ends after its kind"
    said = f"unexpected {found}: {decl} {ends}: `{head} {shape};`"
    if str(tok) == "latency":
        said += "; the wait before a link's transfers is a queue's, `serve … latency x;` in a queue of the link role"
    return (tok.line, tok.column), said


def _depth0(before: list[tuple[str, str, int, int]], start: int) -> list[str]:
    """The words of ``before[start:]`` outside parentheses and brackets."""
    return _depth0_open(before, start)[0]


def _depth0_open(before: list[tuple[str, str, int, int]], start: int) -> tuple[list[str], int]:
    """The words of ``before[start:]`` outside parentheses and brackets (:func:`_depth0`), and how many of
    those are open at its end (0: none; less than 0: more closed than opened)."""
    out, depth = [], 0
    for t in before[start:]:
        if t[1] in ("(", "["):
            depth += 1
        elif t[1] in (")", "]"):
            depth -= 1
        elif depth == 0:
            out.append(t[1])
    return out, depth


#: a choose as §2 writes it
_CHOOSE = "`choose k in n by (key, …);`"
#: a hold's header in §2's order, for a clause written out of it
_HOLD_ORDER = "`hold P (units) reserve (r), Q (units) reuse (ρ) at admission (x = …) { … }`"


def _clause_out_of_order(tok: Token, text: str, grammar: Any) -> tuple[tuple[int, int], str] | None:
    """A clause §2 places in an order written out of it, or a form that stands where it does not (language.txt
    §2), where the error listed the grammar's tokens, offered a close word for a word that is right but
    misplaced, or said a `;` was missing: a pool's `reserve`, or a further pool, after the hold's `reuse` or
    `at admission`; an entry call's `from` after its `to`; a pull's `latency` after its `share`; a serving
    form with both an index and `on`; the empty parentheses of keys or of a `fifo`; a statement's word at the
    top level (`run s (1);` read as the run block, `end;`). At the token; None when the error is not one."""
    if tok.type == "$END" or tok.start_pos is None:
        return None
    at = (tok.line, tok.column)
    word = str(tok)
    before = _tokens_before(text, tok.start_pos)
    start = _statement_start(before, len(before))
    words = _depth0(before, start)
    first = words[0] if words else ""
    if (first == "hold" and tok.type == "NAME" and before[-1][1] == ")" and "at" not in words and "reuse" not in words
            and text[tok.end_pos:].lstrip().startswith("(") and _depth0_open(before, start)[1] == 0):
        # `hold reqs (1) kv (2) { … }`: a pool after another without the `,`; a clause's word misspelt
        # (`reserv (4)`): the word meant
        close = did_you_mean(word, ["reserve", "reuse"])
        if close:
            return at, f"unexpected `{word}`{close}: {_HOLD_ORDER}"
        return at, f"unexpected `{word}`: the pools of a hold are separated by `,`, `hold P (units), {word} (units) {{ … }}`"
    if (word == "=" and len(before) >= 3 and before[-1][1] == "=" and text[tok.start_pos - 1] == "="
            and before[-2][0] == "name" and before[-3][1] in ("(", ",")):
        opener = _open_brackets(before, start)
        j = before.index(opener[-1]) if opener else -1
        if j > 0 and before[j - 1][1] == "admission":  # `at admission (hit == …)`: a binding, written as a test
            return (before[-1][2], before[-1][3]), (f"unexpected `==`: a binding of `at admission` gives its name "
                                                    f"a value with `=`, `at admission ({before[-2][1]} = …)` (`==` "
                                                    "is a test of equality)")
    if first == "hold" and word == "reserve" and before[-1][1] == ")" and words[-1] == "reserve":
        # `hold m (1) reserve (2) reserve (3)`: the error listed the tokens and offered `reuse`
        return at, f"`reserve` is given twice for one pool: a pool's `reserve` follows its units once, {_HOLD_ORDER}"
    if first == "hold" and word in ("reserve", ",") and before[-1][1] == ")" and ("reuse" in words or "at" in words):
        clause = "`reuse`" if "reuse" in words else "`at admission`"
        what = "a pool's `reserve` follows its units" if word == "reserve" else "the pools come first"
        return at, f"unexpected {_token_text(tok)}: {what}, before {clause}: {_HOLD_ORDER}"
    if word == "from" and "." in words[:3] and "to" in words and before[-1][1] == ")":
        return at, ("unexpected `from`: an entry call's `from` comes before its `to`, "
                    "`Q.VERB (…) from S to P (n);`")
    if word == "latency" and len(words) >= 4 and words[1] == "pull" and "share" in words:
        return at, (f"unexpected `latency`: a pull's `latency` comes before its `share`, `{words[0]} pull {words[2]} "
                    f"latency x share {words[-1] if words[-1] != 'share' else 'maxmin'};`")
    if (first in ("prefill", "decode", "tool", "transfer") and len(words) >= 2 and words[1] == "on"
            and before[start + 1][1] == "[" and (tok.type != "LPAR" or before[-2][1] == "on")):
        # `prefill [0] on P 3;`: the index read as the form, `on P` as two names of its work (`… on P (1)`: as
        # an aggregate's start, which wanted `in` at the `(`)
        on = next(t for t in before[start + 1:] if t[1] == "on")
        return (on[2], on[3]), (f"unexpected `on`: a serving form names its stage by an index or by `on`, not both: "
                                f"`{first}[j] …;` serves the role's array, `{first} on S …;` the stage S")
    if first in _SERVING_VERBS and "growing" in words:
        # `prefill growing kv (w);`: the clause before the work (read as two names of the work, `growing kv`)
        g = next(k for k in range(start, len(before)) if before[k][1] == "growing")
        if "(" not in [t[1] for t in before[start:g]]:
            return (before[g][2], before[g][3]), (f"unexpected `growing`: `growing POOL` follows the work, `{first} "
                                                  "… (work) growing POOL;`")
    if first in ("release", "drop") and word == "(" and len(words) >= 2:
        # `release kv (3);`: an amount, which neither takes
        what = ("gives back the whole allocation of the hold around it on the pool (or ends a lease of it)"
                if first == "release" else "discards the session's whole cached prefix on the pool")
        ref = " ".join(text[_offset(text, before[start + 1][2], before[start + 1][3]):tok.start_pos].split())
        return at, f"unexpected `(`: `{first}` takes no amount: it {what}, `{first} {ref};`"
    if before and before[-1][1] == "share" and before[-1][0] == "name" and tok.type != "NAME" and (
            first == "share" or len(words) >= 3 and words[1] == "pull"):
        # `share;`, `D pull P share;`: the policy left out (the list said only "a name")
        return at, (f"unexpected {_token_text(tok)}: `share` names its policy, `share maxmin` or "
                    "`share bottleneck`")
    if len(words) == 6 and words[1] == "pull" and words[3:5] == ["latency", "share"] and before[-2][1] == "share":
        # `D pull P latency share maxmin;`: `share maxmin` read as the start of an aggregate, the wait's
        return (before[-2][2], before[-2][3]), (f"unexpected `share`: a pull's `latency` takes its wait, "
                                                f"`{words[0]} pull {words[2]} latency x share {words[5]};`")
    if (first == "run" and len(words) >= 2 and tok.type == "NAME" and before[-1][1] != ","
            and all(w == "," or w not in _PARENTHESISED and w not in _RUN_MODES and w[:1].isalpha()
                    for w in words[1:])
            and (did_you_mean(word, _RUN_MODES) or text[tok.end_pos:].lstrip().startswith("("))):
        # `run E decoding (1);`, `run E foo (1);`: a word between the stage and the work is the run's mode,
        # misspelt or none of the modes (it said that `run` takes its work in parentheses)
        a = _offset(text, before[start + 1][2], before[start + 1][3])
        stages = " ".join(text[a:_offset(text, before[-1][2], before[-1][3]) + len(before[-1][1])].split())
        return at, (f"unexpected `{word}`: a run's mode on a step stage is "
                    + " or ".join(f"`{m}`" for m in _RUN_MODES) + did_you_mean(word, _RUN_MODES)
                    + f"; `{word}` is not a run mode: `run {stages} decode (work);`, or without a mode "
                    f"`run {stages} (work);`")
    if first == "hidden" and len(words) >= 2 and words[-1] != "," and tok.type == "NAME" and before[-1][2] == tok.line:
        # `hidden o p;`: the names of a `hidden` are a list (it said a `;` was missing before `p`)
        return at, f"unexpected `{word}`: the names of a `hidden` are separated by `,`, `hidden {words[-1]}, {word};`"
    if first == "choose" and len(words) >= 2 and "by" not in words:
        if "in" not in words and len(words) == 2:  # `choose k 2 by (…)`
            return at, f"unexpected {_token_text(tok)}: `choose` takes `in` after its name, " + _CHOOSE
        if "in" in words and word == "(":  # `choose k in 2 (…)`
            return at, "unexpected `(`: `choose`'s keys follow `by`, " + _CHOOSE
    if word == ")" and len(before) >= 2 and before[-1][1] == "(" and before[-2][1] in ("by", "fifo"):
        if before[-2][1] == "by":
            return at, "unexpected `)`: `by` takes its keys, one at least, `by (key, …)`"
        return at, "unexpected `)`: `fifo` takes its number of servers, `fifo(2)`, or nothing for one, `fifo`"
    if (word != "(" and len(words) == 3 and words[1] == "." and before[-1][1] == words[2]
            and before[start][0] == "name" and _open_braces(text, tok.start_pos)[0]):
        # `q.prefill;`: an entry call without its parentheses (the list offered an entry's `{` and `from`)
        return at, (f"unexpected {_token_text(tok)}: an entry call takes its arguments in parentheses, "
                    f"`{''.join(t[1] for t in before[start:])} (…);`")
    if before and before[-1][0] == "string" and before[-1][1].endswith('\\"'):
        # `use "a\"b.sq";`: the `"` after the backslash ended the string, and the rest was read on
        return (before[-1][2], before[-1][3]), ("a string has no escapes: the `\"` after `\\` ends it, so "
                                                f"{_quoted(before[-1][1])} is the string here, and a path or a "
                                                "file name holds no `\"`")
    if word == ">" and tok.start_pos > 0 and text[tok.start_pos - 1] == "<":
        return (tok.line, tok.column - 1), "unexpected `<>`: a test of inequality is `!=`"
    if (word in ("and", "or") and tok.type == "NAME" and before and before[-1][2] == tok.line
            and (before[-1][0] in ("name", "number") or before[-1][1] in (")", "]"))):
        return at, f"unexpected `{word}`: the logical {word} is `{'&&' if word == 'and' else '||'}`"
    if grammar is not None and not _open_braces(text, tok.start_pos)[0]:
        if first == "run" and len(before) - start == 1 and str(tok).isidentifier():  # (`run in horizon 1;` too)
            return at, ("unexpected " + _token_text(tok) + ": `run` at the top level begins the run block, "
                        "`run { horizon …; }`; a statement `run S (…);` belongs in a block (a session, a server, "
                        "a definition's)")
        if tok.type != "NAME" and word in _BEGIN_WORDS and (not before or before[-1][1] in (";", "}")):
            words_ = grammar.item_keywords()
            listed = ", ".join(words_) + ", or `READER pull SOURCE`" if words_ else "`READER pull SOURCE`"
            return at, (f"`{word}` does not begin an item: it begins a statement, which belongs in a block (a "
                        f"session, a server, a definition's); an item begins with {listed}")
    return None


#: the bracket that closes each opener
_CLOSER = {"(": ")", "[": "]"}


def _open_brackets(before: list[tuple[str, str, int, int]], start: int) -> list[tuple[str, str, int, int]]:
    """The `(` and `[` of ``before[start:]`` left open, the outermost first."""
    stack: list[tuple[str, str, int, int]] = []
    for t in before[start:]:
        if t[1] in _CLOSER:
            stack.append(t)
        elif t[1] in (")", "]") and stack and _CLOSER[stack[-1][1]] == t[1]:
            stack.pop()
    return stack


def _unclosed_said(stack: list[tuple[str, str, int, int]], where: str = "") -> str:
    """What the brackets ``stack`` left open miss, and where each was opened, the first first: ``a `)` is
    missing, the `(` at 1:30 is not closed``, ``two `)` are missing, the `(` at 1:15 and the `(` at 1:20 are
    not closed``, ```)` and `]` are missing, …`` (``where``, ``" before it"``, after the missing). The one
    text of a `(` or `[` left open, wherever the error finds it: the error said one `)` missing where two
    were (``preempt by (max(prio, 1 requeue tail;``, ``cap (3 + (4;``)."""
    closers = [_CLOSER.get(t[1], "}") for t in reversed(stack)]
    n = len(closers)
    if len(set(closers)) == 1:
        count = {1: "a", 2: "two", 3: "three"}.get(n, str(n))
        missing = f"{count} `{closers[0]}` {'is' if n == 1 else 'are'} missing"
    else:
        missing = ", ".join(f"`{c}`" for c in closers[:-1]) + f" and `{closers[-1]}` are missing"
    opened = [f"the `{t[1]}` at {t[2]}:{t[3]}" for t in stack]
    if n > 4:  # (a deep nesting: the first, where the repair starts, and how many after it)
        opened = [opened[0], f"{n - 1} more"]
    listed = opened[0] if len(opened) == 1 else ", ".join(opened[:-1]) + " and " + opened[-1]
    return f"{missing}{where}, {listed} {'is' if n == 1 else 'are'} not closed"


#: the tokens an expression (an operand) begins with, as the syntax error's list names them
_OPERAND_STARTS = frozenset({"`!`", "`(`", "`-`", "`~`", "a name", "a number"})


def _end_unfinished(names: list[str], text: str) -> tuple[tuple[int, int], str] | None:
    """The file ends inside a statement or an item that wants more (``let Z =``, ``stage s :``, ``hold kv (4)``,
    ``tool (now -``): the error was "unexpected end of the file (expected `!`, `(`, `-`, `~`, a name, a
    number)", the grammar's list with no word of what was left unfinished. Said as the other syntax errors
    say a thing left open: the statement as written and where it begins, what was to follow its last token
    (an expression for the tokens an operand begins with), and each `(`, `[` and `{` left open with where it
    was opened (:func:`_unclosed_said`). At the end of the last token; None when the file ends between
    statements (a `}` missing is said at its `{`)."""
    before = _tokens_before(text, len(text))
    if not before:
        return None
    i, depth = len(before), 0
    while i > 0:  # (back to the `;`, `{` or `}` before the statement, past the brackets it left open)
        t = before[i - 1][1]
        if t in (")", "]"):
            depth += 1
        elif t in ("(", "["):
            depth -= 1
        elif t in (";", "{", "}") and depth <= 0:
            break
        i -= 1
    if i == len(before):
        return None
    first, last = before[i], before[-1]
    written = _written(text, first, last)
    if written.endswith("...`"):  # (a long statement: its first word, where it begins)
        written = f"`{first[1]}`"
    wanted = names
    if _OPERAND_STARTS <= set(names):
        wanted = ["an operand" if last[1] in _OPERATORS and last[1] != "=" else "an expression",
                  *(n for n in names if n not in _OPERAND_STARTS)]
    if "a name" in wanted:  # (the words a name may be there are names: `stage` wants the stage's)
        wanted = [w for w in wanted if not w.isalpha()]
    if not wanted:
        return None
    listed = wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + " or " + wanted[-1]
    said = (f"unexpected end of the file: {written} at {first[2]}:{first[3]} is not finished, {listed} was to "
            f"follow {_quoted(last[1])}")
    brackets = _open_brackets(before, i)
    if brackets:
        said += "; " + _unclosed_said(brackets)
    braces = [("op", "{", line, col) for line, col in _open_braces(text, len(text))[0]]
    if braces:
        said += "; " + _unclosed_said(braces)
    return _prev_token_end(text, len(text)) or (1, 1), said


def _bracket_unclosed(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """A `(` or `[` of the statement left open when a token that no expression continues with comes (``hold kv
    (1 { … }``, ``pool p[2 { … }``, ``hold kv[0 (1) { … }``, the end of the file, a `]` where a `)` closes):
    the error was the token alone, "unexpected `{`", or its list. At the token, naming every opener left open
    and its place (:func:`_unclosed_said`); None when the error is not that."""
    if tok.type not in ("LBRACE", "SEMICOLON", "RBRACE", "LPAR", "RPAR", "RSQB", "$END", "EQUAL", "COMMA"):
        return None
    offset = len(text) if tok.type == "$END" else tok.start_pos
    if offset is None:
        return None
    before = _tokens_before(text, offset)
    # (_statement_start goes back past an unclosed `(`, which it counts as a depth below 0)
    stack = _open_brackets(before, _statement_start(before, len(before)))
    if not stack:
        return None
    close = _CLOSER[stack[-1][1]]
    if ("RPAR" if close == ")" else "RSQB") not in expected or tok.type == "LPAR" and close == ")":
        return None
    if str(tok) == close:  # (the closer wanted: an error of what comes before it)
        return None
    if tok.type == "COMMA" and (close != "]" or expected != {"RSQB"}):  # (`kv[j, e[j]`: an index is one)
        return None
    k = next(i for i in range(len(before) - 1, -1, -1) if before[i] is stack[-1])
    if tok.type == "EQUAL" and not (k >= 2 and before[k - 2][1] == "def"):  # (`def f(x, y = …`; `(a = b)` is a test)
        return None
    if tok.type == "COMMA":  # (the `[` alone: the brackets around it are closed after the `,`)
        return (tok.line, tok.column), (f"unexpected `,`: {_unclosed_said(stack[-1:])} (an index is one "
                                        "expression, `kv[j]`)")
    if tok.type == "$END":
        return _prev_token_end(text, len(text)) or (1, 1), f"unexpected end of the file: {_unclosed_said(stack)}"
    return (tok.line, tok.column), f"unexpected {_token_text(tok)}: {_unclosed_said(stack)}"


#: the words that take a value without parentheses, which a parenthesis after them belongs to (a run block's
#: fields, a pool's and a step stage's, a link's latency)
_VALUE_WORDS_ONE = frozenset({"horizon", "warmup", "seed", "arrivals", "cap", "block", "budget", "cost", "chunk",
                              "latency"})


def _arguments_in(text: str, offset: int) -> int | None:
    """How many expressions, separated by `,` at its depth, the `(` at ``offset`` holds before its `)`; None
    when a `;`, `{` or `}` (or the end) comes first."""
    depth, n, empty = 0, 1, True
    for m in _scanner().finditer(text, offset + 1):
        kind, t = m.lastgroup, m.group()
        if kind == "blanks":
            continue
        if t in ("(", "["):
            depth += 1
        elif t in (")", "]"):
            if depth == 0:
                return 0 if empty else n
            depth -= 1
        elif t in (";", "{", "}"):
            return None
        elif t == "," and depth == 0:
            n += 1
        empty = False
    return None


def _one_expression(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """A parenthesis that holds one expression given none or several (``arrive poisson();``, ``arrive
    poisson(2, 3);``, ``hold kv (4, 5) { … }``, ``ps(1, 2)``, ``lease kv ()``): the error was the grammar's
    "unexpected `)`" with the tokens an expression begins with, or "unexpected `,` (expected `)`)". Said as
    the form's arity: what the one expression is, how the form is written and how many it found. And an
    arrival form that takes none given one (``arrive none(1);``). At the token; None when the error is not
    one."""
    if tok.type == "$END" or tok.start_pos is None or str(tok) not in (")", ",", "("):
        return None
    before = _tokens_before(text, tok.start_pos)
    at = (tok.line, tok.column)
    if str(tok) == "(":
        if len(before) >= 2 and before[-1][1] == "none" and before[-2][1] == "arrive":
            return at, "unexpected `(`: `arrive none` takes no argument, `arrive none;`"
        return None
    if str(tok) == ")":
        if not before or before[-1][1] != "(":
            return None
        k = len(before) - 1
    else:
        if expected != {"RPAR"}:
            return None
        stack = _open_brackets(before, _statement_start(before, len(before)))
        if not stack or stack[-1][1] != "(":
            return None
        k = next(i for i in range(len(before) - 1, -1, -1) if before[i] is stack[-1])
    n = _arguments_in(text, _offset(text, before[k][2], before[k][3]))
    found = "none" if n == 0 else "1" if n is None else str(n)
    if n is None:
        found = "more than one"
    prev = before[k - 1][1] if k >= 1 else ""
    prev2 = before[k - 2][1] if k >= 2 else ""
    what = shape = None
    if prev in _ARRIVALS and prev2 == "arrive":
        what, written = _ARRIVALS[prev]
        owner, shape = f"`arrive {prev}`", f"`arrive {prev}({written});`"
    elif prev == "ps" and prev2 in (":", "serve", "nic") or prev == "fifo" and str(tok) == ",":
        # (`fifo()`: _clause_out_of_order says it takes its count or nothing)
        owner = f"`{prev}`"
        what, shape = _one_shape(prev)
    elif prev in ("reserve", "reuse", "with", "when") or prev == "branch" and k >= 1 and before[k - 1][0] == "name":
        owner = "`branch with`" if prev == "with" else "a spill's `when`" if prev == "when" else f"`{prev}`"
        what, shape = _one_shape(prev)
    elif prev == "cache" and prev2 == "}":
        owner = "`cache`"
        what, shape = _one_shape(prev)
    else:
        # the pool or stage the parenthesis follows (names, `.`, `[…]`, a run's mode), then the word before it
        j, depth = k, 0
        while j > 0:
            t = before[j - 1]
            if t[1] == "]":
                depth += 1
            elif t[1] == "[":
                depth -= 1
            elif depth == 0 and not (t[1] == "." or t[0] == "name" and t[1] not in _PARENTHESISED
                                     and t[1] != "on"):
                break
            j -= 1
        ref = " ".join(text[_offset(text, before[j][2], before[j][3]):
                            _offset(text, before[k][2], before[k][3])].split()) if j < k else ""
        word = before[j - 1][1] if j >= 1 else ""
        start = _statement_start(before, k)
        first = before[start][1] if start < len(before) else ""
        if word == "," and first in ("hold", "run") and ref:
            if first == "run":  # `run s, t (1, 2);`: every stage of the run
                ref = " ".join(text[_offset(text, before[start + 1][2], before[start + 1][3]):
                                    _offset(text, before[k][2], before[k][3])].split())
            word = first
        if word in ("hold", "grow", "load", "run", "lease") and ref or word == "run" and j == k:
            what, shape = _one_shape(word, ref)
            owner = f"a hold's `{ref}`" if word == "hold" else f"`{word}`"
        elif word in ("to", "via") and first in ("transfer", "spill") and ref or prev == "transfer" and j == k:
            key = "transfer" if prev == "transfer" else word
            what, shape = _one_shape(key)
            owner = "a spill" if key == "via" else "a transfer"
        elif first in _SERVING_VERBS and first != "transfer" and not _open_brackets(before[:k], start):
            owner, what, shape = f"`{first}`", "its work", f"`{first} (work);`"
        elif str(tok) == "," and k >= 1 and (before[k - 1][0] not in ("name", "number", "string") and prev not in ")]"
                                             or prev in _VALUE_WORDS_ONE):
            # an expression's own parenthesis (`horizon (10, 20);`, `set x = (1, 2);`)
            return at, ("unexpected `,`: a parenthesis holds one expression; a `,` separates the arguments of a "
                        "call (`min(a, b)`) and the keys of a `by (…)`")
        else:
            return None
    if str(tok) == ")" and n != 0:
        return None
    return at, (f"unexpected {_token_text(tok)}: {owner} takes one expression, {what}, and found {found}: "
                f"{shape}")


def _hold_trailer_end(before: list[tuple[str, str, int, int]], k: int) -> tuple[str, int] | None:
    """``("lease" | "cache", start)`` when the `)` at ``before[k]`` ends a hold's ``lease P (time)`` or its
    ``cache (units)`` (the clauses after its block), ``start`` the index of the clause's word; else None."""
    j = _opener(before, k, "()")
    if j < 2:
        return None
    if before[j - 1][1] == "cache":
        return ("cache", j - 1) if before[j - 2][1] == "}" and _block_of_hold(before, j - 2) else None
    i = j - 1  # back over the pool: names, `.`, `[…]`
    while i >= 0:
        if before[i][1] == "]":
            i = _opener(before, i, "[]") - 1
        elif before[i][0] == "name" and before[i][1] != "lease":
            i -= 1
            if i >= 0 and before[i][1] == ".":
                i -= 1
            else:
                break
        else:
            return None
    if i < 1 or before[i][1] != "lease":
        return None
    end = before[i - 1][1]
    if end == "}" and _block_of_hold(before, i - 1):
        return "lease", i
    if end == ")" and (t := _hold_trailer_end(before, i - 1)) is not None and t[0] == "cache":
        return "lease", i
    return None


def _after_hold(tok: Token, text: str, grammar: Any) -> tuple[tuple[int, int], str] | None:
    """A stray word or token after a hold's ``lease P (time)`` or ``cache (units)``, the clauses that end it
    (language.txt §2: ``block [ cache ( expr ) ] [ lease POOL ( expr ) ] ;``): `} lease kv (2) foo;` was
    "unexpected `;` (expected `(`, `.`, `[`)", at the `;` after the word, read as a definition's call; `} lease
    kv (2) 5;` listed the tokens. Told at the word or the token, with what may follow the clause. None when
    the error is not one, or the word is one of the language's (or close to one, which other hints offer)."""
    if tok.type == "$END" or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    if len(before) >= 2 and before[-1][1] == ")":
        k, word = len(before) - 1, None
    elif len(before) >= 3 and before[-1][0] == "name" and before[-2][1] == ")":
        k, word = len(before) - 2, before[-1]
    else:
        return None
    end = _hold_trailer_end(before, k)
    if end is None:
        return None
    if word is None and tok.type == "NAME":
        return None  # (the next statement's word, or a definition's call)
    clause = " ".join(text[_offset(text, before[end[1]][2], before[end[1]][3]):
                           _offset(text, before[k][2], before[k][3]) + 1].split())
    follows = ("a hold ends with its `lease`, and a `;`, the next statement or the block's `}` follows"
               if end[0] == "lease" else "after a hold's `cache` comes its `lease P (time)`, a `;`, the next "
               "statement or the block's `}`")
    if word is not None:
        w = word[1]
        if grammar is not None and (w in grammar.keywords()
                                    or did_you_mean(w, sorted(_BEGIN_WORDS | {"lease", "cache"}))):
            return None
        return (word[2], word[3]), (f"{_quoted(w)} after the hold's `{clause}` begins no statement: {follows} "
                                    "(a statement begins with one of the language's words, or calls a "
                                    f"definition, `{w}(…);`)")
    more = " (a hold leases one pool)" if str(tok) == "," and end[0] == "lease" else ""
    return (tok.line, tok.column), f"unexpected {_token_text(tok)} after the hold's `{clause}`: {follows}{more}"


#: a statement's word that names a pool next -> what it does with it and how it is written
_NAMES_A_POOL = {
    "release": "`release` names the pool whose allocation it gives back (or whose lease it ends), `release P;`",
    "drop": "`drop` names the pool whose cached prefix it discards, `drop P;`",
    "growing": "`growing` names the pool the run grows, `run S (work) growing P;`",
    "hold": "`hold` names its pool, then the pool's units, `hold P (units) { … }`",
    "grow": "`grow` names its pool, then the units, `grow P (units);`",
    "load": "`load` names its pool, then the units, `load P (units);`",
}
#: a word that takes a block next -> how it is written
_TAKES_A_BLOCK = {"loop": "`loop { … }`", "session": "`session { … }`", "server": "`server { … }`",
                  "init": "`init { … }`", "turn": "`turn { … }` (the workload's block of each turn)",
                  "workload": "`workload { arrive …; … }`", "step": "`step { budget …; cost …; }`"}
#: an item's word that names what it declares next -> how it is written
_NAMES_AN_ITEM = {"pool": "`pool NAME { … }`", "stage": "`stage NAME : KIND;`", "let": "`let NAME = …;`",
                  "gauge": "`gauge NAME = …;`", "queue": "`queue NAME : ROLE { … }`", "def": "`def NAME(…) …`"}
#: a word followed by a name other than the one it takes -> what it takes
_NAMES_OTHER = {
    "memory": "`memory` names the pool whose KV the step stage's iterations count, `memory kv;`",
    "via": "`admit via` names the step stage whose scheduler admits the pool's queue, `admit via E;`",
    "hidden": "`hidden` names the attributes the scheduler may not read, `hidden a, b;`",
}
#: a statement's word that names what it sets next -> how it is written
_NAMES_A_VALUE = {
    "set": "`set` names the attribute it sets, `set NAME = …;`",
    "observe": "`observe` names the figure it samples, `observe NAME = …;`",
    "record": "`record` names its table, `record NAME { COL = …; … }`",
    "choose": "`choose` names the attribute it sets to the index chosen, `choose NAME in n by (key, …);`",
    "mark": "`mark` names the moment, `mark NAME;`",
}
#: a hold's clause word -> where it stands (a hold's header or after its block)
_CLAUSE_WORDS = {"lease": "after its block, `hold P (u) { … } lease P (time)`",
                 "cache": "after its block, `hold P (u) { … } cache (units)`",
                 "reuse": "before its block, `hold P (u) reuse (bound) { … }`",
                 "reserve": "after a pool's units, `hold P (u) reserve (r) { … }`"}
#: a clause word of a run or a pool's option, where a statement begins -> what it is and where it stands
_OTHER_CLAUSES = {"growing": "a run's clause, after its work, `run S (work) growing P;`",
                  "at": "a hold's clause, before its block, `hold P (u) at admission (x = e) { … }`",
                  "via": ("a pool's option's word, after `admit` (`admit via E;`) or a spill's tier (`spill TIER via "
                          "LINK (work) when (pred);`)")}
#: `admission (x = 1);` where a statement begins: the parser read a definition's call, the linker a call of no
#: definition; `at admission (…)` is a hold's clause
ADMISSION_ALONE = ("`admission` begins no statement: `at admission (x = e, …)` is a hold's clause, in its header "
                   "before its block, `hold P (u) at admission (x = e) { … }`")


def _admission_alone(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """A statement that begins `admission (`, where the parse stopped inside it (`admission (x = 1);`: it was told
    as an equality test, `=` for `==`, the parenthesis read as a definition's arguments): the binding of a
    hold's header, :data:`ADMISSION_ALONE`, at the word; None otherwise."""
    if tok.type == "$END" or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    start = len(before)  # (the statement's first token: after the last `;`, `{` or `}`, in parentheses or not)
    while start > 0 and before[start - 1][1] not in (";", "{", "}"):
        start -= 1
    if (start + 1 < len(before) and before[start][1] == "admission" and before[start + 1][1] == "("
            and _open_braces(text, tok.start_pos)[0]):
        return (before[start][2], before[start][3]), ADMISSION_ALONE
    return None


#: the serving roles' words, which name a stage after a statement's first word (`run tool (1)`)
_ROLE_WORDS = frozenset({"prefill", "decode", "tool", "transfer", "link"})
#: the operators between two operands (a `-` too: after a `)` it is the subtraction)
_BETWEEN_OPERANDS = frozenset({"+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "?"})


def _amount_ended(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """An operator right after the `)` of a statement's or a clause's parenthesis, which the place does not take
    (`run svc[j] (a) + b);`, `grow kv (1) * 2;`, `hold kv (n) + 1 { … }`, `arrive poisson(1) * 2;`): the
    parenthesis holds the whole amount, and it ended at that `)`; a `)` later in the statement that closes no
    `(` is named (the parentheses unbalanced). It was "unexpected `+` (expected `;`)". At the operator; None
    otherwise."""
    if (tok.type == "$END" or tok.start_pos is None or str(tok) not in _BETWEEN_OPERANDS | {","}
            or tok.type in expected):
        return None
    before = _tokens_before(text, tok.start_pos)
    if len(before) < 2 or before[-1][1] != ")":
        return None
    j = _opener(before, len(before) - 1, "()")
    if j <= 0:
        return None
    start = j  # (the statement's first token)
    while start > 0 and before[start - 1][1] not in (";", "{", "}"):
        start -= 1
    # (the clause's or the statement's word nearest the `(`; a serving role's word after the first names a stage)
    word = next((t[1] for k, t in reversed(list(enumerate(before[start:j], start)))
                 if t[0] == "name" and t[1] in KEYWORDS and (k == start or t[1] not in _ROLE_WORDS)), None)
    if word is None:
        return None
    a, b = _offset(text, *before[j][2:]), _offset(text, *before[-1][2:])
    prefix = text[_offset(text, *before[start][2:]):a]
    if "\n" in prefix or len(prefix) > 40:
        prefix = f"{word} … "
    inner = text[a + 1:b]
    inner = inner if len(inner) <= 20 and "\n" not in inner else "…"
    if str(tok) == ",":  # `run s (1), 2);`: the parenthesis closed before its `,`
        said = (f"unexpected `,`: the parenthesis of `{word}` at {before[j][2]}:{before[j][3]} ended at the `)` at "
                f"{before[-1][2]}:{before[-1][3]}, before it")
    else:
        said = (f"unexpected {_token_text(tok)}: the parenthesis of `{word}` ended at the `)` at {before[-1][2]}:"
                f"{before[-1][3]}; the whole amount goes inside it, `{prefix}(({inner}) {tok} …)`")
    # a `)` further on in the statement that closes no `(`: the parentheses are unbalanced
    depth = 0
    for t in _tokens_before(text, len(text))[len(before):]:
        if t[1] in (";", "{", "}"):
            break
        depth += (t[1] in "([") - (t[1] in ")]")
        if depth < 0:
            said += f"; the `{t[1]}` at {t[2]}:{t[3]} closes no `(`: the parentheses are unbalanced"
            break
    return (tok.line, tok.column), said


def keyword_begins_nothing(word: str, text: str = "", tok: Token | None = None) -> str:
    """The words for a keyword of another place where a statement begins (`from o = 1;`, `on (1);`): it begins
    no statement; with the `set` that gives a name its value where a name and `=` follow it. A clause's word
    (`via (1);`, `growing (1);`) is told whose clause it is."""
    if word in _OTHER_CLAUSES:
        return f"`{word}` begins no statement: it is {_OTHER_CLAUSES[word]}"
    if word in _CLAUSE_WORDS:
        return f"`{word}` begins no statement: it is a hold's clause, {_CLAUSE_WORDS[word]}"
    said = (f"`{word}` does not begin a statement: it is a word of another place, and a statement begins with its "
            "own (`run`, `hold`, `set`, `observe`, `branch`, …)")
    if tok is not None and tok.type == "NAME" and tok.end_pos is not None and text[tok.end_pos:].lstrip().startswith("=") \
            and not text[tok.end_pos:].lstrip().startswith("=="):
        said += f"; a name is given a value with `set {tok} = …;`"
    return said


def _word_in_parenthesis(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """A word right after an operand inside a `(` left open (`transfer ( (n) from P to Q (m);`, `max(1 from 2)`,
    `by (a growing b)`, `run s ((w) growing kv;`): the `(` not closed before it, and what may follow an operand
    there. It was "unexpected `from` (expected `)`)", or "missing `;` (found `foo` next)" for a name, a `;` that
    cannot end anything inside parentheses. At the word; None otherwise."""
    if (tok.type == "$END" or tok.start_pos is None or not str(tok).isidentifier() or expected == {"IN"}
            or not ("RPAR" in expected or "SEMICOLON" in expected)):
        return None
    before = _tokens_before(text, tok.start_pos)
    if not before or not (before[-1][0] in ("name", "number") or before[-1][1] in (")", "]")):
        return None
    stack: list[tuple[str, str, int, int]] = []
    for t in reversed(before):  # (the innermost bracket open before the word, within its statement)
        if t[1] in (";", "{", "}"):
            break
        if t[1] in (")", "]"):
            stack.append(t)
        elif t[1] in ("(", "["):
            if stack:
                stack.pop()
            else:
                if t[1] != "(":
                    return None
                comma = ", a `,` (between a call's arguments)" if "COMMA" in expected or "RPAR" not in expected else ""
                return (tok.line, tok.column), (f"unexpected {_token_text(tok)} inside the `(` at {t[2]}:{t[3]}: "
                                                f"after an operand comes an operator{comma} or the `)` that closes "
                                                "it")
    return None


def _no_block(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """A `{` where a statement that takes no block wants its `;` (`run s (1) { … }`, `grow kv (1) {`): it was
    "unexpected `{` (expected `;`, growing)". At the `{`; None otherwise."""
    if str(tok) != "{" or tok.start_pos is None or "SEMICOLON" not in expected or not expected <= {"SEMICOLON",
                                                                                                    "GROWING"}:
        return None
    before = _tokens_before(text, tok.start_pos)
    start = len(before)
    while start > 0 and before[start - 1][1] not in (";", "{", "}"):
        start -= 1
    if start == len(before) or before[start][1] not in _BEGIN_WORDS:
        return None
    word = before[start][1]
    return (tok.line, tok.column), (f"unexpected `{{`: `{word}` takes no block, it ends with `;`; the statements "
                                    "after it follow that `;` (a block is a hold's, a branch's or a loop's)")


#: a word that gives a name its value -> how it is written
_GIVES_A_VALUE = {"set": "set", "observe": "observe", "let": "let", "gauge": "gauge"}


def _block_begins(before: list[tuple[str, str, int, int]], brace: tuple[int, int]) -> tuple[str, str]:
    """What the block whose `{` is at ``brace`` holds, and what each of its items begins with: ``("pool", "a
    pool's option begins with its word (`cap`, …)")``; ``("", "a statement begins with …")`` for a block of
    statements. ``before`` the tokens before the place."""
    opener = [t for t in before if (t[2], t[3]) < brace]
    head = opener[_statement_start(opener, len(opener))][1] if opener else ""
    if _in_pool_block(opener):
        return "pool", ("a pool's option begins with its word (`cap`, `block`, `evict`, `preempt`, `queue`, "
                        "`reserve`, `cache`, `admit`, `spill`)")
    if len(opener) >= 2 and opener[-1][1] == "step" and opener[-2][1] in (":", "serve"):
        return "step", "a step stage's field begins with its word (`budget`, `cost`, `chunk`, `serve`, `memory`)"
    if head == "run" and opener[-1][1] == "run":
        return "run", "the run block's settings begin with their word (`horizon`, `warmup`, `seed`, `arrivals`)"
    if opener and opener[-1][1] == "workload":
        return "workload", ("a workload's item begins with its word (`arrive`, `trace`, `hidden`, `init`, `turn`, "
                            "`session`)")
    if head == "queue":
        return "queue", "a queue's item begins with its word (`pool`, `serve`, `nic`, or an entry's verb)"
    return "", ("a statement begins with one of the language's words (`run`, `hold`, `set`, …), or calls a "
                "definition, `NAME(…);`")


#: a block of :func:`_block_begins` -> what its item is called
_BLOCK_ITEM = {"pool": "a pool's option", "step": "a step stage's field", "run": "a setting of the run block",
               "workload": "a workload's item", "queue": "a queue's item"}
#: a word that begins a declaration's option, field or setting -> what it is and the block it stands in
_OPTION_WORDS = {
    **{w: ("a pool's option", "`pool NAME { " + w + " …; }`") for w in ("cap", "block", "evict", "preempt", "admit",
                                                                        "spill")},
    **{w: ("a step stage's field", "`stage E : step { " + w + " …; }`") for w in ("budget", "cost", "chunk",
                                                                                 "memory")},
    **{w: ("a setting of the run block", "`run { " + w + " …; }`") for w in ("horizon", "warmup", "seed",
                                                                            "arrivals")},
}
#: a word followed by a token other than the words it takes -> how it is written
_FOLLOWED_BY = {
    "evict": "`evict` names its order, `evict lru;` or `evict by (key, …);` (or a plugin's `@name`)",
    "preempt": ("`preempt` names what a failed growth does, `preempt lifo;`, `preempt none;` or `preempt by (key, "
                "…);` (or a plugin's `@name`)"),
    "requeue": "`requeue` names where a preempted request waits again, `requeue head;` or `requeue tail;`",
    ":": "a stage's kind follows `:`, `fifo`, `fifo(c)`, `ps(capacity)`, `delay` or `step { … }` (or a plugin's `@name`)",
    "queue": "a pool's `queue` names the order of its waiting requests, `queue fifo;` or `queue by (key, …);`",
    "serve": ("a queue's `serve` names its stage's kind, `serve fifo;`, `serve ps(capacity);`, `serve delay;` or "
              "`serve step { … }`; a step stage's `serve` its order, `serve admission;`, `serve by (key, …);`, "
              "`serve decode first;` or `serve exclusive prefill;`"),
}


#: keywords that may stand twice in a row: a stage named as a run's mode or a serving role (`run prefill prefill
#: (T);`, the step engines named `prefill`), and the aggregates' and choose's words
_TWICE_OK = frozenset({"prefill", "decode", "tool", "transfer", "link", "in", "by"})


def _clause_after_statement(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """A hold's `cache` or `lease` right after a statement that is no hold, where its `;` was wanted (`tool (1)
    cache (4);`): it was "missing `;` (found `cache` next)". At the word; None otherwise."""
    if tok.type == "$END" or tok.start_pos is None or str(tok) not in ("cache", "lease") or "SEMICOLON" not in expected:
        return None
    before = _tokens_before(text, tok.start_pos)
    if not before or before[-1][1] != ")" or before[-1][2] != tok.line:
        return None
    start = _statement_start(before, len(before))
    if start >= len(before) or before[start][1] in ("hold", "}", *_BEFORE_BLOCK):
        return None  # (a hold's clause after its block, `} reuse (1) cache (1);`: _hold_clause_placed says where it goes)
    shape = "cache (units)" if str(tok) == "cache" else "lease P (time)"
    return (tok.line, tok.column), (f"unexpected `{tok}`: a hold's `{tok}` follows the hold's block, `hold P (u) "
                                    f"{{ … }} {shape}`, and {_written(text, before[start], before[-1])} is no hold")


def _written_twice(tok: Token, text: str, expected: set[str] | frozenset[str] = frozenset()) -> tuple[tuple[int, int], str] | None:
    """A keyword written twice in a row where the parse stopped at the second or at the token after it (`load
    load kv (1);`, `evict evict lru;`, `set set x = 1;`): the error was at the token after, in words about
    the first (`set set = …;`). At the second; None otherwise. A word that may stand twice (:data:`_TWICE_OK`)
    is written twice where the parse stopped at the second, which the place does not take (``expected``, the
    terminals it takes): `serve decode decode first;`, `serve exclusive prefill prefill;`, `run s decode decode
    (w);`, where "(expected first)", a `;` missing or the run's work were told."""
    if tok.type == "$END" or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    if not before:
        return None
    pairs = [(len(before) - 1, ("", str(tok), tok.line, tok.column))]
    if len(before) >= 2:
        pairs.append((len(before) - 2, before[-1]))
    for i, b in pairs:
        a = before[i]
        # a name that begins an item or a statement is told as such (`oops oops;`: `oops` begins no item)
        first = i == 0 or before[i - 1][1] in (";", "{", "}")
        # (a keyword, a name, or one of the punctuation the language never writes twice; `((`, `]]` it does)
        # (the second a word of _TWICE_OK the place does not take: its stage's name or a mode cannot be meant)
        refused = i == len(before) - 1 and tok.type not in expected and bool(expected)
        if (a[1] == b[1] and (a[0] == "name" and (a[1] in KEYWORDS or not first) or a[1] in (":", ",", "."))
                and (a[1] not in _TWICE_OK or refused)):
            return (b[2], b[3]), f"`{b[1]}` is written twice (the first at {a[2]}:{a[3]})"
    return None


def _unexpected_in_place(tok: Token, names: list[str], text: str, grammar: Any) -> tuple[tuple[int, int], str] | None:
    """What the place wanted where the error listed words only: a name where a pool's option, a step stage's
    field, a run setting, a workload's or a queue's item begins that is none of them and close to none (``pool
    kv { cap 100; bs; }``, ``workload { closed(1); }``: "(expected `}`, admit, block, …)"); a word that names
    one of a few words followed by another token (``evict;``, ``stage s : ;``, ``requeue;``); a statement's
    word where a block's `{` was wanted (``hold kv (4) tool (1);``). At the token; None otherwise."""
    if tok.type == "$END" or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    if not before:
        return None
    at, found, last = (tok.line, tok.column), _token_text(tok), before[-1][1]
    word = str(tok)
    if word.isidentifier() and "`}`" in names and last in (";", "{", "}"):
        stack = _open_braces(text, tok.start_pos)[0]
        kind, what = _block_begins(before, stack[-1]) if stack else ("", "")
        words = [w for n in names for w in n.split(", ") if w.isalpha()]
        # (a word misspelt is offered the word, below; a keyword of another place is no misspelling: `cache` in a
        # workload was offered `trace`, `choose` in a step stage `cost`, `serve` in the run block `seed`)
        if kind and (not did_you_mean(word, words) or word in grammar.keywords() and word not in words):
            if word in _BEGIN_WORDS and word not in ("turn", "request") and kind != "queue":  # `pool kv { run …; }`
                where = ("the workload's `init`, `turn` or `session` block" if kind == "workload" else
                         "a session's block, a server's, a definition's or a queue's entry")
                return at, f"`{word}` begins a statement, which stands in {where}: {what}"
            if kind == "workload" and word == "ordered":  # (a trace's flag, after its file)
                return at, 'unexpected `ordered`: it follows a trace\'s file, `trace "file.csv" ordered;`'
            arrive = (f"; an arrival is `arrive {word}(…);`" if kind == "workload" and word in _ARRIVALS else
                      "; no arrivals is `arrive none;`" if kind == "workload" and word == "none" else "")
            return at, f"{_quoted(word)} does not begin {_BLOCK_ITEM[kind]}: {what}{arrive}"
    if (word in _ITEM_WORDS and last == ":" and before[-1][2] < tok.line and len(before) >= 3
            and "stage" in (before[-3][1], before[-6:-5][0][1] if len(before) >= 6 else "")):
        # `stage s :` and, on the next line, `workload { … }`: the kind left out (or moved away)
        return at, f"unexpected `{word}`: {_FOLLOWED_BY[':']}; `{word}` begins the next item, so the kind is missing"
    if (not word.isidentifier() and last in _FOLLOWED_BY and names and "`(`" not in names
            and all(w.isalpha() or n.startswith("a plugin") for n in names for w in n.split(", "))
            and (last != ":" or len(before) >= 3 and "stage" in (before[-3][1], before[-6:-5][0][1] if len(before) >= 6 else ""))):
        return at, f"unexpected {found}: {_FOLLOWED_BY[last]}"
    if word in ("cache", "lease") and last == "}" and not _block_of_hold(before, len(before) - 1):
        # `} cache (n);` after a `}` that closes no hold's block (a `}` too many before it, a line written twice)
        j = _opener(before, len(before) - 1, "{}")
        k = _statement_start(before, j) if j >= 0 else -1
        closes = (f", and the `}}` at {before[-1][2]}:{before[-1][3]} closes the `{before[k][1]}` at "
                  f"{before[k][2]}:{before[k][3]}" if 0 <= k < j else "")
        return at, f"unexpected `{word}`: a hold's `{word}` follows the hold's block{closes}, which is no hold"
    if word == "{" and names == ["`;`"]:
        k = _statement_start(before, len(before))
        if k < len(before) and before[k][1] == "with":  # `with (p) { … }`: its `branch` left out
            return (before[k][2], before[k][3]), ("`with` begins no statement: a draw is `branch with (p) { … }` "
                                                  "(and a test `branch (test) { … }`)")
    if last == "request" and before[-1][0] == "name" and not word.isidentifier() and word != ";":
        return at, (f"unexpected {found}: `request` runs the server block, `request;`, or a gateway's route, "
                    "`request GATEWAY;`")
    start = _statement_start(before, len(before))
    first = before[start][1] if start < len(before) else ""
    if first == "hold" and word == "(" and last in (",", ")") and not _open_brackets(before, start):
        if last == ",":  # `hold kv (1), (2) { … }`: the second pool's name left out
            return at, "unexpected `(`: a hold names each pool before its units, `hold P (units), Q (units) { … }`"
        # `hold kv (n) (r) { … }`: a second parenthesis, a `reserve` left out
        return at, ("unexpected `(`: a pool's units are one parenthesis; what the hold reserves is its `reserve` "
                    "after them, `hold P (units) reserve (r) { … }`")
    if {"`(`", "`.`", "`[`"} >= set(names) and last in _OPTION_WORDS and before[-1][0] == "name":
        stack = _open_braces(text, tok.start_pos)[0]
        kind = _block_begins(before, stack[-1])[0] if stack else ""
        if not kind and len(before) >= 2 and before[-2][1] in ("{", ";", "}"):  # `session { cap 1; }`
            what, shape = _OPTION_WORDS[last]
            return (before[-1][2], before[-1][3]), (f"`{last}` is {what}, not a statement: it stands in its "
                                                    f"block, {shape}")
    if word in _BEGIN_WORDS and "`{`" in names and last not in ("{", ";", "}"):
        start = _statement_start(before, len(before))
        if start < len(before):
            first = before[start]
            return at, (f"unexpected {_quoted(word)}: a `{{` is missing before it, the block of the `{first[1]}` at "
                        f"{first[2]}:{first[3]} (`{first[1]} … {{ {word} …; }}`)")
    return None


def _word_takes(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """A statement's or item's word followed by something other than what it takes, where the error listed the
    grammar's wants alone: `release;` and `drop;` ("(expected a name)"), `run s (1) growing;`, `hold (4) kv`,
    `set x 1;` and `observe y;` ("(expected `=`)"), `branch (x) run …;` and `loop run …;` ("(expected `{`)"),
    `stage t delay;` ("(expected `:`, `[`)"), `prefill;`, `choose in 2 by (…)` ("two names side by side").
    Told at the token with what the word takes and the form. None when the error is not one."""
    if tok.start_pos is None and tok.type != "$END":
        return None
    offset = tok.start_pos if tok.type != "$END" else len(text)
    before = _tokens_before(text, offset)
    at = (tok.line, tok.column) if tok.type != "$END" else (_prev_token_end(text, offset) or (1, 1))
    found = _token_text(tok) if tok.type != "$END" else "end of the file"
    if not before and str(tok) == "/" and not text.startswith("/*", tok.start_pos):
        return at, "unexpected `/`: a comment runs from `//` to the end of the line"
    if not before and tok.type not in ("NAME", "$END") and not str(tok).isidentifier() and str(tok) not in "{}(;:/[":
        return at, (f"unexpected {found}: an item begins with its word (`let`, `def`, `pool`, `stage`, `queue`, "
                    "`workload`, `session`, `server`, `run`, `share`, `gauge`, `use`), or is `READER pull SOURCE …;`")
    if not before:
        return None
    last = before[-1][1]
    start = _statement_start(before, len(before))
    first = before[start][1] if start < len(before) else ""
    if expected == {"NAME"} and last == "lease" and len(before) >= 2 and before[-2][1] in ("}", ")"):
        return at, f"unexpected {found}: `lease` names one of the hold's pools, then its time, `lease P (time)`"
    if expected == {"NAME"} and last in _NAMES_OTHER and (last != "via" or before[-2][1] == "admit"):
        return at, f"unexpected {found}: {_NAMES_OTHER[last]}"
    if expected == {"NAME"} and last in _NAMES_AN_ITEM and start == len(before) - 1:
        return at, f"unexpected {found}: `{last}` names what it declares, {_NAMES_AN_ITEM[last]}"
    if ("NAME" in expected and last in _NAMES_A_VALUE and start == len(before) - 1 and tok.type not in ("NAME", "$END")
            and _open_braces(text, offset)[0]):  # `set = 1;`, `record { … }`: the name left out
        return at, f"unexpected {found}: {_NAMES_A_VALUE[last]}"
    if expected == {"STRING"} and last in ("trace", "use") and start == len(before) - 1:
        shape = '`trace "file.csv";`' if last == "trace" else '`use "file.sq";`'
        return at, f"unexpected {found}: `{last}` takes its file's name in double quotes, {shape}"
    if expected == {"VIA"} and last == "admit":
        return at, f"unexpected {found}: `admit` is followed by `via` and the step stage, `admit via E;`"
    if last == "arrive" and start == len(before) - 1 and tok.type != "NAME" and str(tok) != ";":  # `arrive (3);`
        return at, (f"unexpected {found}: `arrive` names its form before the parenthesis, `arrive poisson(rate);`, "
                    "`arrive renewal(gap);`, `arrive closed(n);`, `arrive batch(n);` (or `arrive none;`)")
    if (tok.type != "NAME" and not str(tok).isidentifier() and str(tok) not in ("{", "}", "(", ";", ":", "/", "[")
            and (not before or last in (";", "}", "{"))):
        # a number or an operator where an item, a statement or a block's field begins (`5 NP = 2;`, `- set k =
        # 1;`, `%`): what begins one there
        stack = _open_braces(text, tok.start_pos)[0]
        if not stack:
            return at, (f"unexpected {found}: an item begins with its word (`let`, `def`, `pool`, `stage`, `queue`, "
                        "`workload`, `session`, `server`, `run`, `share`, `gauge`, `use`), or is `READER pull "
                        "SOURCE …;`")
        return at, f"unexpected {found}: {_block_begins(before, stack[-1])[1]}"
    if str(tok) == "(" and before and last in (";", "}") and not _open_braces(text, tok.start_pos)[0]:
        # `let a = 4; (mean s)`: a parenthesis where an item begins (a comment's `//` lost, say)
        return at, (f"unexpected {found}: an item begins with its word (`let`, `def`, `pool`, `stage`, `queue`, "
                    "`workload`, `session`, `server`, `run`, `share`, `gauge`, `use`), or is `READER pull "
                    "SOURCE …;`; a comment begins with `//`")
    if str(tok) == ":" and (not before or last in (";", "}")) and not _open_braces(text, tok.start_pos)[0]:
        return at, "unexpected `:`: an item begins with its word; a stage is `stage NAME : KIND;`, a queue `queue NAME : ROLE { … }`"
    if last == "turn" and str(tok) == "{" and expected == {"SEMICOLON"}:  # `turn { … }` in a session
        return at, ("unexpected `{`: a session's `turn;` takes no block (the next turn's attributes are the "
                    "workload's `turn { … }`, an item of `workload { … }`)")
    if {"LPAR", "NAME", "NUMBER", "MINUS"} <= expected and last == "(" and str(tok) in (";", "}", "{"):
        return at, f"unexpected {found}: an expression and its `)` are missing after the `(`"
    if expected == {"NAME"} and last == "~":  # `~ ~exp(1)`, `~(1)`
        return at, (f"unexpected {found}: a draw is `~` and its distribution's name, `~exp(mean)`, `~det(x)`, "
                    "`~uniform(lo, hi)`, `~erlang(k, mean)`, `~h2(mean, cv2)`, `~bernoulli(p)`")
    if (str(tok) == "(" and before and last in (";", "{", "}") and _open_braces(text, tok.start_pos)[0]
            and "LPAR" not in expected):
        # `(free(s) > 1) { … }`: a test without its `branch`
        return at, ("unexpected `(`: a statement begins with its word; a test is `branch (test) { … }`, a value "
                    "`set x = (…);`")
    stack = _open_braces(text, tok.start_pos)[0] if before else []
    if (str(tok).isidentifier() and before and last in _CLAUSE_WORDS and len(before) >= 2 and before[-2][1] in (";", "{")
            and start == len(before) - 1 and stack
            and not _in_pool_block([t for t in before if (t[2], t[3]) < stack[-1]])):
        # `lease set o = …;`, `cache x;`: a hold's clause where a statement begins
        return (before[-1][2], before[-1][3]), (f"`{last}` begins no statement: it is a hold's clause, "
                                                f"{_CLAUSE_WORDS[last]}")
    if (str(tok).isidentifier() and before and last in _OTHER_CLAUSES and len(before) >= 2
            and before[-2][1] in (";", "{") and start == len(before) - 1 and stack
            and not _block_begins(before, stack[-1])[0]):
        # `growing kv;`, `at admission (…);`, `via e;` where a statement begins
        return (before[-1][2], before[-1][3]), f"`{last}` begins no statement: it is {_OTHER_CLAUSES[last]}"
    if str(tok) == "/" and (not before or last in (";", "}", "{")) and not text.startswith("/*", tok.start_pos):
        return at, "unexpected `/`: a comment runs from `//` to the end of the line"
    if str(tok) == "{" and (not before or last in (";", "}", "{")) and "LBRACE" not in expected:
        # a block where an item or a statement begins: its word left out (`{ horizon 10; }`, `} {`)
        nxt = re.match(r"\s*([A-Za-z_]+)", text[tok.end_pos:])
        word = nxt.group(1) if nxt else ""
        if word in ("horizon", "warmup", "seed", "arrivals"):
            return at, "unexpected `{`: a block where an item begins, of the run's settings: `run { horizon …; }`"
        if word in _WORKLOAD_WORDS:
            return at, "unexpected `{`: a block where an item begins, of the workload's items: `workload { … }`"
        top = not _open_braces(text, tok.start_pos)[0]
        if top:
            return at, ("unexpected `{`: a block where an item begins; an item begins with its word (`session { … }`, "
                        "`workload { … }`, `run { … }`, `pool NAME { … }`)")
        return at, ("unexpected `{`: a block where a statement begins; a block follows its statement's header "
                    "(`branch (test) { … }`, `loop { … }`, `hold P (units) { … }`)")
    if str(tok) == "admission" and "AT" in expected and first == "hold":  # `hold kv (1) admission (…)`
        return at, "unexpected `admission`: it follows `at`, `at admission (x = e, …)`"
    if str(tok) == "hold" and first == "hold" and "COMMA" in expected and last == ")":  # `hold a (1) hold b (1)`
        return at, ("unexpected `hold`: a hold's pools are separated by `,`, `hold P (u), Q (u) { … }` (a hold "
                    "inside another stands in its block)")
    if expected == {"ADMISSION"} and last == "at" and tok.type != "NAME":  # (a misspelt one: the closest word)
        return at, f"unexpected {found}: `at` is followed by `admission` and the bindings, `at admission (x = e, …)`"
    if expected == {"LPAR"} and last == "admission" and len(before) >= 2 and before[-2][1] == "at":
        return at, f"unexpected {found}: `at admission` takes its bindings in parentheses, `at admission (x = e, …)`"
    if expected == {"EQUAL"} and before[-1][0] == "name" and len(before) >= 2 and before[-2][1] in ("(", ","):
        j = _opener(before + [("", ")", 0, 0)], len(before), "()")
        if j >= 2 and before[j - 1][1] == "admission":
            return at, f"unexpected {found}: a binding gives its name a value, `at admission ({last} = …)`"
    if expected == {"NAME"} and last in ("(", ","):
        j = _opener(before + [("", ")", 0, 0)], len(before), "()")
        if j >= 2 and before[j - 1][1] == "admission":
            return at, (f"unexpected {found}: `at admission` binds a name to a value, one at least, each after a `,`, "
                        "`at admission (x = e, …)`")
        if j >= 2 and before[j - 2][1] == "def":
            return at, f"unexpected {found}: a definition's parameters are names, `def {before[j - 1][1]}(a, b) …`"
    if expected <= {"NAME", "RPAR"} and "NAME" in expected and last == "(" and len(before) >= 3 \
            and before[-3][1] == "def":
        return at, f"unexpected {found}: a definition's parameters are names, `def {before[-2][1]}(a, b) …`"
    if expected == {"LPAR"} and len(before) >= 2 and before[-2][1] == "def":
        return at, (f"unexpected {found}: a definition's parameters are in parentheses after its name, "
                    f"`def {last}(a, …) …` (`def {last}() …` for none)")
    if expected == {"EQUAL", "LBRACE"} and last == ")":
        j = _opener(before, len(before) - 1, "()")
        if j >= 2 and before[j - 2][1] == "def":
            name = before[j - 1][1]
            return at, (f"unexpected {found}: a definition is `def {name}(…) = expression;` or `def {name}(…) "
                        "{ statements }`")
    if first == "queue" and start == len(before) - 2 and "COLON" in expected and tok.type != "COLON":
        return at, f"unexpected {found}: a queue's roles follow `:`, `queue {last} : ROLE {{ … }}`"
    if first == "queue" and expected == {"COMMA", "LBRACE"}:
        name = before[start + 1][1] if start + 1 < len(before) else "Q"
        return at, (f"unexpected {found}: a queue's items are in a block after its roles, `queue {name} : {last} {{ "
                    "pool …; serve …; VERB (…) { … } }`")
    if expected == {"LBRACE", "FROM"} and last == ")":
        j = _opener(before, len(before) - 1, "()")
        if j >= 1:
            verb = before[j - 1][1]
            return at, f"unexpected {found}: an entry's body is a block, `{verb} (…) {{ … }}` (or `{verb} (…) from Q {{ … }}`)"
    if expected == {"NAME"} and last == "from" and first != "transfer" and start + 1 < len(before) \
            and before[start + 1][1] in (".", "["):
        return at, (f"unexpected {found}: `from` names the queue member whose lease the entry reads, `D.decode (…) from "
                    "P[i];`")
    if expected == {"LSQB", "LBRACE"} and len(before) >= 2 and before[-2][1] == "pool" and start == len(before) - 2:
        return at, f"unexpected {found}: a pool's options are in a block, `pool {last} {{ cap …; … }}`"
    if (first == "pool" and last == "]" and "LBRACE" in expected and start + 1 < len(before)
            and before[start + 2][1] == "[" and _opener(before, len(before) - 1, "[]") == start + 2):
        # `pool reqs[N] cap …;`: a family's options, their block left out
        name = before[start + 1][1]
        return at, f"unexpected {found}: a pool's options are in a block, `pool {name}[N] {{ cap …; … }}`"
    if expected == {"LBRACE"} and len(before) >= 2 and before[-2][1] == "record" and start == len(before) - 2:
        # `record request sent = …;`: the columns' block left out
        return at, f"unexpected {found}: a record's columns are in a block, `record {last} {{ COL = …; … }}`"
    if expected == {"BY"} and first == "choose" and start + 3 < len(before) and before[start + 2][1] == "in" \
            and before[start + 3][1] == "by":
        # `choose j in by (…);`: the count left out, `by` read as it
        return (before[start + 3][2], before[start + 3][3]), ("unexpected `by`: `choose` takes its count after "
                                                              "`in`, `choose k in n by (key, …);`")
    if str(tok) == "(" and first == "run" and last == ")" and "SEMICOLON" in expected \
            and _opener(before, len(before) - 1, "()") > start:
        # `run svc (service)();`: a second parenthesis after the work
        return at, "unexpected `(`: a run's work is one parenthesis, `run S (work);`"
    if expected == {"NAME"} and last in _NAMES_A_POOL and (last == "growing" or start == len(before) - 1):
        said = _NAMES_A_POOL[last]
        if last == "growing" and first in ("prefill", "decode"):
            said = said.replace("`run S (work) growing P;`", f"`{first} (W) growing P;`")
        return at, f"unexpected {found}: {said}"
    if expected <= {"NAME", "PREFILL", "DECODE", "TRANSFER", "TOOL", "LINK"} and last == "hold" \
            and start == len(before) - 1:
        return at, f"unexpected {found}: {_NAMES_A_POOL['hold']}"
    if expected == {"EQUAL"} and start == len(before) - 2 and first in _GIVES_A_VALUE and before[-1][0] == "name":
        name = before[-1][1]
        what = "records a sample of a value" if first == "observe" else "gives a name its value"
        return at, f"unexpected {found}: `{first}` {what} with `=`, `{first} {name} = …;`"
    if {"COMMA", "LBRACE", "RESERVE", "REUSE"} <= expected and str(tok) == ";" and last == ")" and first == "hold":
        # `hold kv (1);`: a hold without its block
        return at, ("unexpected `;`: a hold takes its block after its pools, `hold P (u) { … }`; the units are "
                    "held while the block's statements run")
    if ({"LBRACE", "REUSE"} <= expected and str(tok).isidentifier() and last == ")"
            and first == "hold" and str(tok) in KEYWORDS and str(tok) not in _CLAUSE_WORDS
            and str(tok) not in _BEGIN_WORDS and str(tok) != "admission"):
        # `hold kv (1) cap (1) { … }`, `hold slots (1) let`: a word of another place after a pool's units
        return at, (f"unexpected {found}: a hold's header is its pools, `P (units), Q (units)`, each with its "
                    "`reserve (r)`, then its `reuse (bound)` and `at admission (x = e)`; its block follows, `hold P "
                    "(u) … { … }`")
    if expected == {"LBRACE"} and tok.type != "LBRACE":
        if last in _TAKES_A_BLOCK and (start == len(before) - 1 or last == "step" and before[-2][1] in (":", "serve",
                                                                                                     "nic")):
            return at, f"unexpected {found}: `{last}` takes a block, {_TAKES_A_BLOCK[last]}"
        if last == ")" and first == "branch" and _opener(before, len(before) - 1, "()") in (start + 1, start + 2):
            shape = "`branch with (p) { … }`" if before[start + 1][1] == "with" else "`branch (test) { … }`"
            return at, f"unexpected {found}: a branch takes a block after its parenthesis, {shape}"
    if (expected <= {"COLON", "LSQB"} and "COLON" in expected and len(before) >= 2 and before[-2][1] == "stage"
            and start == len(before) - 2):
        return at, f"unexpected {found}: a stage's kind follows `:`, `stage {last} : KIND;`"
    if (first == "stage" and last == "]" and "COLON" in expected and start + 2 < len(before)
            and before[start + 2][1] == "[" and _opener(before, len(before) - 1, "[]") == start + 2):
        # `stage engine[2] step { … }`: a family's `:` left out
        return at, f"unexpected {found}: a stage's kind follows `:`, `stage {before[start + 1][1]}[N] : KIND;`"
    if str(tok) == "{" and last == ":" and first == "queue":  # `queue gw : { … }`: its roles left out
        return at, ("unexpected `{`: a queue names its roles after `:`, `queue NAME : ROLE { … }` (gateway, prefill, "
                    "decode, link)")
    if (last in ("prefill", "decode", "tool") and start == len(before) - 1 and tok.type in ("SEMICOLON", "$END")):
        what = "its work (seconds, or tokens on a step engine)" if last != "tool" else "its work"
        return at, f"unexpected {found}: `{last}` takes {what}, `{last} (W);`"
    if last == "branch" and start == len(before) - 1 and tok.type == "NAME" and (c := did_you_mean(str(tok), ["with"])):
        return at, f"unexpected {found}{c}: `branch with (p) {{ … }}`"
    if (len(before) >= 3 and start == len(before) - 3 and before[-3][1] in _SERVING_VERBS
            and before[-2][0] == "name" and (c := did_you_mean(before[-2][1], ["on"]))):  # `tool onn link (1);`
        verb, word = before[-3][1], before[-2]
        return (word[2], word[3]), f"unexpected `{word[1]}`{c}: `{verb} on S (work);`"
    if expected == {"SEMICOLON"} and str(tok) == "(" and last in ("end", "turn", "request") and start == len(before) - 1:
        return at, f"unexpected `(`: `{last}` takes nothing, `{last};`"
    if last == "choose" and start == len(before) - 1 and str(tok) in ("in", "by", "(", ";"):
        return at, f"unexpected {found}: `choose` names its index first, `choose k in n by (key, …);`"
    if last == "in" and len(before) >= 2 and before[-2][1] == "choose" and start == len(before) - 2:
        return (before[-1][2], before[-1][3]), ("unexpected `in`: `choose` names its index first, `choose k in n "
                                                "by (key, …);`")
    return None


#: the operators an operand follows (kernel.lark's expressions), and what each is
_OPERATORS = {"+": "`+`", "-": "`-`", "*": "`*`", "/": "`/`", "%": "`%`", "==": "`==`", "!=": "`!=`", "<": "`<`",
              "<=": "`<=`", ">": "`>`", ">=": "`>=`", "&&": "`&&`", "||": "`||`", "?": "`?`", ":": "`:`",
              "!": "`!`", "=": "`=`"}
#: a draw's parameters (language.txt §2), for a draw written without its parentheses
_DRAW_SHAPES = {"exp": "~exp(mean)", "det": "~det(x)", "uniform": "~uniform(lo, hi)", "erlang": "~erlang(k, mean)",
                "h2": "~h2(mean, cv2)", "bernoulli": "~bernoulli(p)"}
_AGGREGATE = "`max j in n (e)` (or `min`, `sum`)"


def _expression_wants(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """Inside an expression, a part missing where the grammar listed the tokens an operand begins with or
    the one token it wanted: an operand after an operator (`now - )`, `!)`, `1 +* 2`), an index in empty
    brackets (`kv[)`), an expression begun with `[`, a member's name after `.` (`kv.)`), a conditional's
    `:` (`1 ? 2)`), a draw's parentheses (`~exp)`), an aggregate's `in` or body (`sum j 2 (j)`, `max j in 2)`).
    At the token; None when the error is not one."""
    if tok.type == "$END" or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    if not before:
        return None
    at, found, last = (tok.line, tok.column), _token_text(tok), before[-1][1]
    operand = {"LPAR", "NAME", "NUMBER", "MINUS"} <= expected
    if (operand and (last in _OPERATORS or last == ",") and tok.type not in ("NAME", "NUMBER", "LPAR")
            and not (str(tok) == "=" and last == "=")):  # (`set x == 1;`: told as such below)
        if str(tok) == "[":
            return at, "unexpected `[`: a `[` follows the name it indexes, `kv[j]`"
        if last == "=":
            return at, f"unexpected {found}: the value is missing after `=`"
        if last == ",":
            return at, (f"unexpected {found}: an expression is missing after `,` (a `,` separates arguments or keys, "
                        "each one expression)")
        return at, (f"unexpected {found}: an operand is missing after {_OPERATORS[last]} (a number, a name, a call "
                    "or a parenthesised expression)")
    if operand and last == "=" and str(tok) == "=" and text[tok.start_pos - 1] != "=":  # `let z = = 10;`
        return at, f"unexpected `=`: `=` is written twice (the first at {before[-1][2]}:{before[-1][3]})"
    if operand and last == "(" and str(tok) == ")":  # `cost ();`: an expression's own parenthesis, empty
        return at, "unexpected `)`: the parentheses hold no expression"
    if (operand and str(tok) in _OPERATORS and str(tok) not in ("-", "!", "=")
            and (last in ("(", ",", "[", "=")
                 or last in _VALUE_WORDS_ONE and before[-1][0] == "name" and str(tok) not in (":", "?"))):
        return at, (f"unexpected {found}: an operand is missing before it (a number, a name, a call or a "
                    "parenthesised expression; `-`, `!` and `~` are the operators an operand may begin with)")
    if operand and last == "(" and str(tok) == ",":  # `f(, a)`
        return at, "unexpected `,`: an expression is missing before it (a `,` separates arguments or keys, each one)"
    if operand and last == "[" and str(tok) in ("]", ")", ";", ","):
        if len(before) >= 3 and before[-3][1] in ("pool", "stage", "queue"):  # `pool kv[] { … }`
            word, name = before[-3][1], before[-2][1]
            shape = {"pool": f"`pool {name}[N] {{ … }}`", "stage": f"`stage {name}[N] : KIND;`",
                     "queue": f"`queue {name}[N] : ROLE {{ … }}`"}[word]
            return at, f"unexpected {found}: a family's size is a number in the brackets, {shape}"
        return at, f"unexpected {found}: an index is an expression in the brackets, `kv[j]`"
    if operand and str(tok) == "[" and last in ("(", ",", "=", "["):
        return at, "unexpected `[`: a `[` follows the name it indexes, `kv[j]`"
    if expected == {"NAME"} and last == ".":
        return at, f"unexpected {found}: a `.` is followed by a name, the member's (`D.kv`, `Q.first_token`)"
    if expected == {"COLON"}:
        opened = _open_brackets(before, _statement_start(before, len(before)))
        if any(t[1] == "?" for t in before[_statement_start(before, len(before)):]) or opened:
            return at, f"unexpected {found}: a conditional is `c ? a : b`, its `:` and the value if false after `a`"
    if expected == {"LPAR"} and len(before) >= 2 and before[-2][1] == "~" and before[-1][0] == "name":
        shape = _DRAW_SHAPES.get(last)
        how = f"`{shape}`" if shape else "`~exp(mean)`"
        return at, f"unexpected {found}: a draw takes its parameters in parentheses, {how}"
    if expected == {"LPAR"} and len(before) >= 4:
        k = len(before) - 1
        while k >= 3 and not (before[k - 3][1] in _AGGREGATE_WORDS and before[k - 1][1] == "in"
                              and before[k - 2][0] == "name"):
            k -= 1
            if before[k][1] in (";", "{", "}"):
                return None
        if k >= 3:
            return at, f"unexpected {found}: an aggregate takes its body in parentheses after its count, {_AGGREGATE}"
    if expected == {"IN"} and len(before) >= 2 and before[-2][1] in _AGGREGATE_WORDS and before[-1][0] == "name":
        return at, f"unexpected {found}: an aggregate names its index, then `in` and the count, {_AGGREGATE}"
    return None


def _comment_cut(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """`tool (1 // 2);`: a `//` inside a `(` or `[` the statement left open, read as a comment to the end of the
    line (another language's integer division), so the error came on a later line ("missing `;` (found `run`
    next)"). At the `//`; None when the error is not one."""
    if tok.type == "$END" or tok.start_pos is None:
        offset = len(text)
    else:
        offset = tok.start_pos
    before = _tokens_before(text, offset)
    if not before or not _open_brackets(before, _statement_start(before, len(before))):
        return None
    line, col = before[-1][2], before[-1][3]
    if (tok.type != "$END" and tok.line == line):
        return None
    start = _offset(text, line, col) + len(before[-1][1])
    end = text.find("\n", start)
    rest = text[start:end if end >= 0 else len(text)]
    k = rest.find("//")
    if k < 0 or rest[:k].strip():
        return None
    return _line_col(text, start + k), ("`//` begins a comment, to the end of the line, inside a `(` left open: a "
                                         "division is `/` (`floor(a / b)` for a whole quotient)")


def _closer_unopened(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """A `)` or `]` that closes nothing open in its statement (``let a = (1 + 2));``, ``let a = 1];``): one too
    many, said as a `}` of no `{` is (the error listed what it expected instead). None otherwise."""
    if tok.type not in ("RPAR", "RSQB") or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    if _open_brackets(before, _statement_start(before, len(before))):
        return None
    opener = "(" if str(tok) == ")" else "["
    return (tok.line, tok.column), f"unexpected `{tok}`: no `{opener}` is open here (one `{tok}` too many)"


#: a hold's clauses before its block and after it (language.txt §3: `hold P (u) [reserve (r)] … [reuse (ρ)]
#: [at admission (…)] { … } [cache (ℓ)] [lease P (t)]`)
_BEFORE_BLOCK = ("reserve", "reuse", "at")
_AFTER_BLOCK = ("cache", "lease")


def before_block(word: str) -> str:
    """That the hold's clause ``word`` (``reserve``, ``reuse``, ``at``) goes before its block."""
    clause = {"reserve": "reserve (units)", "reuse": "reuse (bound)", "at": "at admission (x = …)"}[word]
    return f"`{clause.split(' (')[0]}` goes before the hold's block: `hold P (units) {clause} {{ … }}`"


def _hold_clause_placed(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """Where and what to say when a hold's clause stands on the wrong side of its block: ``cache`` or
    ``lease`` before it, ``reserve``, ``reuse`` or ``at admission`` after it (a plain parse error). None
    otherwise."""
    if tok.type == "$END" or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    if str(tok) in _AFTER_BLOCK and "LBRACE" in expected and before:
        start = _statement_start(before, len(before))
        if start < len(before) and before[start][1] == "hold":
            return (tok.line, tok.column), (f"`{tok}` goes after the hold's block: `hold P (units) {{ … }} "
                                            f"{'cache (units)' if str(tok) == 'cache' else 'lease P (time)'}`")
    # the clause's word right after a hold's `}` (the error at it, or later in the clause)
    start = _statement_start(before, len(before))
    if start < len(before):
        word, at = before[start][1], (before[start][2], before[start][3])
    else:
        word, at = str(tok), (tok.line, tok.column)
    if word in _BEFORE_BLOCK and start >= 1 and before[start - 1][1] == "}" and _block_of_hold(before, start - 1):
        return at, before_block(word)
    if (word in _AFTER_BLOCK and len(before) - 1 > start and before[-1][1] == "lease" and before[start - 1][1] == "}"
            and any(t[1] == "lease" for t in before[start:-1]) and _block_of_hold(before, start - 1)):
        # `} lease p (1) lease q (1);`: the second read as a name, the error at what follows it
        return (before[-1][2], before[-1][3]), f"this hold has a `lease` already: {_CACHE_SHAPE}"
    return None


#: the words of a workload's items that are no statement's: where they belong
_WORKLOAD_WORDS = {"arrive", "trace", "hidden", "init"}


def _misplaced_word(tok: Token, text: str, grammar: Any) -> tuple[tuple[int, int], str] | None:
    """Where and what to say when the syntax error is right after the first word of a statement that
    is an item's word (`stage`, `run {`, `pool`, …) or a workload's (`arrive`) inside a block, or None.
    An item's word first on its line at column 1 is the next item of a block whose `}` is missing (the
    error is at that block's `{`); elsewhere it is an item written inside a block."""
    if grammar is None:
        return None
    offset = tok.start_pos if tok.type != "$END" and tok.start_pos is not None else len(text)
    before = _tokens_before(text, offset)
    if tok.type != "$END" and str(tok).isalpha() and before and before[-1][1] in (";", "{", "}"):
        word, line, col = str(tok), tok.line, tok.column  # the word itself cannot stand there
    elif len(before) >= 2 and before[-1][0] == "name" and before[-2][1] in (";", "{", "}"):
        _, word, line, col = before[-1]  # what follows the word cannot
    else:
        return None
    items = set(grammar.item_keywords())
    if word == "run" and (tok.type == "$END" or str(tok) != "{") and not (
            str(tok) == "run" and text[tok.end_pos:].lstrip().startswith("{")):
        return None  # (`run` begins a statement too: an item only as `run {`, the word itself where it cannot be)
    if word not in items and word not in _WORKLOAD_WORDS:
        return None
    stack, mis = _open_braces(text, _offset(text, line, col))
    if not stack:
        return None
    opener = [t for t in before if (t[2], t[3]) < stack[-1]]
    if opener and opener[-1][1] == "workload" and (word in _WORKLOAD_WORDS or word == "session" or col != 1):
        return None  # its own items (and `session { … }`): another error
    if word == "queue" and _in_pool_block(opener):  # a pool's `queue fifo;` or `queue by (…);`: another error
        return None
    if word in items and col == 1:
        where = mis or stack[-1]
        return where, (f"a `}}` is missing: this `{{` is not closed before `{word}` at {line}:{col}, which "
                       "begins an item")
    if word in _WORKLOAD_WORDS:
        return (line, col), f"`{word}` is a workload's item; it belongs in `workload {{ … }}`"
    return (line, col), f"`{word}` begins an item: write it at the top level, outside every block"


def _in_pool_block(opener: list[tuple[str, str, int, int]]) -> bool:
    """Whether the tokens ``opener``, those before a block's `{`, end with a pool's head, `pool NAME` or
    `pool NAME[N]`, whose options (`queue fifo;`) share words with the items."""
    words = [t[1] for t in opener[-6:]]
    return (len(words) >= 2 and words[-2] == "pool") or (len(words) >= 5 and words[-5] == "pool"
                                                        and words[-3] == "[" and words[-1] == "]")


def _requeue_misplaced(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """``requeue`` anywhere but after ``preempt by (…)`` (pool-reference.txt: ``preempt by (expr, …) [requeue
    head | tail]``): after ``preempt lifo`` (which is ``by (-admission) requeue head``), after ``preempt none``
    (no victim), after the pool's ``queue`` (the waiting order, not where a victim goes back), or as an option
    of its own. The errors were a `;` missing before it, and `did you mean `queue``. None otherwise."""
    if tok.type == "$END" or tok.start_pos is None or str(tok) != "requeue":
        return None
    before = _tokens_before(text, tok.start_pos)
    start = _statement_start(before, len(before))
    words = [t[1] for t in before[start:]]
    if words[:2] == ["preempt", "lifo"]:
        why = ("`preempt lifo` is `preempt by (-admission) requeue head`; a victim that goes back at the tail is "
               "`preempt by (-admission) requeue tail;`")
    elif words[:2] == ["preempt", "none"]:
        why = "`preempt none` preempts no one, so no victim goes back; `requeue` follows `preempt by (…)`"
    elif words[:1] == ["queue"]:
        why = ("where a preemption's victim goes back is said where the victim is chosen, `preempt by (…) "
               "requeue tail;`, not in the pool's waiting order")
    elif not words:
        why = "it follows `preempt by (…)`: `preempt by (key, …) requeue head;` or `… requeue tail;`"
    else:
        return None
    return (tok.line, tok.column), f"unexpected `requeue`: {why}"


#: a pool option that is also a hold's clause, and what to say when the pool's option is written wrong
_POOL_OPTION_WORDS = {
    "reserve": ("a pool's option is `reserve held;` (each live hold's unallocated reservation counts against later "
                "admissions); the units a hold reserves are its clause, `hold P (u) reserve (r) { … }`"),
    "cache": ("a pool's option is `cache computed;` (the default) or `cache scheduled;` (a hold preempted while a "
              "step stage plans caches the tokens that planning gave it too); what a hold caches is its clause, "
              "`hold P (u) { … } cache (n)`"),
}


def _pool_option_slipped(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """Two slips of pool-reference.txt's pool options: ``preempt by (k requeue tail;``, the keys' `)` missing
    before ``requeue`` (the error was "two names side by side, `k requeue`; an operator or a `,` is missing",
    or the word the expression wanted; ``queue by (k requeue tail;`` too, where ``requeue`` does not belong
    either), and ``reserve (n);`` in a pool, the hold's clause written as the
    pool's option ``reserve held;`` (the error was `(expected held)`), as is ``reserve;`` or any other word
    than ``held`` after it (``reserve all;``); ``cache (n);``, ``cache;`` or another word after a pool's
    ``cache`` likewise (its words are ``computed`` and ``scheduled``). At ``requeue``, or at the token after
    ``reserve`` or ``cache``; None otherwise."""
    if tok.type == "$END" or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    if before and before[-1][1] in _POOL_OPTION_WORDS and len(before) >= 2 and before[-2][1] in ("{", ";"):
        stack, _ = _open_braces(text, tok.start_pos)
        if stack and _in_pool_block([t for t in before if (t[2], t[3]) < stack[-1]]):
            return (tok.line, tok.column), f"unexpected `{tok}`: {_POOL_OPTION_WORDS[before[-1][1]]}"
        return None
    if str(tok) == "requeue":
        at = (tok.line, tok.column)
    elif before and before[-1][1] == "requeue":
        at = (before[-1][2], before[-1][3])
        before = before[:-1]
    else:
        return None
    depth = 0
    for i in range(len(before) - 1, 1, -1):  # the parentheses left open before it, innermost first
        depth += {")": 1, "(": -1}.get(before[i][1], 0)
        if depth < 0:
            option = [t[1] for t in before[i - 2:i]]
            if option in (["preempt", "by"], ["queue", "by"]) and _statement_start(before, i - 1) == i - 2:
                break
            depth = 0
    else:
        return None
    said = _unclosed_said(_open_brackets(before, i - 2), " before it")  # (every `(` open: the keys' and inner ones)
    if option[0] == "queue":
        return at, (f"unexpected `requeue`: {said}, and where a preemption's victim goes back is said where the "
                    "victim is chosen, `preempt by (…) requeue tail;`, not in the pool's waiting order")
    return at, f"unexpected `requeue`: {said}; `preempt by (key, …) requeue head;` or `… requeue tail;`"


#: the fields of a block that take one value, by the block: a pool's, a step stage's, the run block's
_VALUE_FIELDS = {"pool": ("cap", "block"), "step": ("budget", "cost", "chunk"),
                 "run": ("horizon", "warmup", "seed", "arrivals")}


def _value_missing(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """``cap;``, ``cost;``, ``horizon;``: a field of a pool, a step stage or the run block written without its
    value. The error was the expression's first tokens expected (`cost;` even said `cost` is not part of this
    language, taking it for the pool reference's `cost(…)`). None when the error is not a `;` or `}` right
    after such a field's word at the start of one of those blocks' fields."""
    if tok.type == "$END" or tok.start_pos is None or str(tok) not in (";", "}", ",", ")"):
        return None  # (`warmup ,180;`, `cap );`: a token no value begins with, as the `;`)
    before = _tokens_before(text, tok.start_pos)
    if len(before) < 2 or before[-2][1] not in ("{", ";"):
        return None
    word = before[-1][1]
    if not any(word in fields for fields in _VALUE_FIELDS.values()):
        return None
    stack, _ = _open_braces(text, tok.start_pos)
    if not stack:
        return None
    opener = [t[1] for t in before if (t[2], t[3]) < stack[-1]]
    if _in_pool_block([t for t in before if (t[2], t[3]) < stack[-1]]):
        block = "pool"
    elif opener[-1:] == ["step"]:
        block = "step"
    elif opener[-1:] == ["run"] and (len(opener) == 1 or opener[-2] in (";", "}")):
        block = "run"
    else:
        return None
    if word not in _VALUE_FIELDS[block]:
        return None
    return (tok.line, tok.column), f"unexpected {_token_text(tok)}: `{word}` takes a value, `{word} …;`"


def _share_missing(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """``D pull P latency x0;``: a pull relation without its ``share`` (language.txt §2, Queues: the policy "is
    the program's share and is written here, not left to a default"); the error was `(expected share)`. None
    when the error is not right after a pull's source or its latency."""
    if tok.type == "$END" or tok.start_pos is None or str(tok) == "share":
        return None
    before = _tokens_before(text, tok.start_pos)
    start = _statement_start(before, len(before))
    words = [t[1] for t in before[start:]]
    if len(words) < 3 or words[1] != "pull" or (len(words) > 3 and words[3] != "latency"):
        return None
    if len(words) == 4 or (len(words) > 4 and "share" in words):
        return None  # `latency` without its value, or an error after `share`: the grammar's words
    if before[-1][1] != ")" and before[-1][0] not in ("name", "number"):
        return None  # inside the latency's expression (`latency 0.5 +;`): the expression's error
    r, src = words[0], words[2]
    return (tok.line, tok.column), (f"unexpected {_token_text(tok)}: `{r} pull {src}` names how concurrent reads "
                                    f"divide the NICs, the program's share: `{r} pull {src} [latency x] share "
                                    "maxmin;` or `… share bottleneck;` (there is no default)")


def _keyword_defined(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """Where a definition named like a keyword is, when the syntax error is in a statement that begins with
    that keyword and a `(` (`def hold(a) { … }` and `hold(1);`: the use begins a hold, so the parse stops in
    it before the linker refuses the definition's name), or None."""
    offset = tok.start_pos if tok.type != "$END" and tok.start_pos is not None else len(text)
    before = _tokens_before(text, offset)
    start = _statement_start(before, len(before))
    words = [t[1] for t in before[start:start + 2]] + ([str(tok)] if tok.type != "$END" else [])
    if len(words) < 2 or words[0] not in KEYWORDS or words[1] != "(":
        return None
    word = words[0]
    named = _definition_named(text, word)
    return (named, word) if named is not None else None


def _requeue_missing(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """``preempt by (keys) tail;``: where the victim goes back is said after ``requeue`` (pool-reference.txt,
    ``preempt by (expr, …) [requeue head | tail]``); the error was a `;` missing before the word. None when the
    error is not a ``head`` or ``tail`` right after a pool's ``preempt by (…)``."""
    word = str(tok)
    if tok.type == "$END" or tok.start_pos is None or word not in ("head", "tail"):
        return None
    before = _tokens_before(text, tok.start_pos)
    start = _statement_start(before, len(before))
    words = [t[1] for t in before[start:start + 3]]
    if words != ["preempt", "by", "("] or before[-1][1] != ")":
        return None
    return (tok.line, tok.column), f"unexpected `{word}`: it follows `requeue`, `preempt by (…) requeue {word};`"


def _transfer_unfinished(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """``transfer (X);``, ``transfer (X) from P;``, ``transfer (X) to Q (n);``: a transfer says where the KV
    moves, and language.txt §2 makes one without ``from P to Q (n)`` a parse error, a link that stores and
    forwards being the kernel's ``run``; the error was the word the grammar wanted next (`(expected from)`), or
    a `;` missing before a ``to``. None when the error is inside a parenthesis or after the form's amount."""
    if tok.type == "$END" or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    start = _statement_start(before, len(before))
    if start >= len(before) or before[start][1] != "transfer":
        return None
    j, depth = start - 1, 0
    while j >= 0 and not (before[j][1] == "{" and depth == 0):
        depth += {"}": 1, "{": -1}.get(before[j][1], 0)
        j -= 1
    if j >= 0 and before[_statement_start(before, j)][1] == "queue":
        return None  # a link queue's entry, `transfer (n) { … }`
    words, depth = _depth0_open(before, start)
    if depth != 0 or ("to" in words and before[-1][1] == ")"):
        return None
    if words[1:2] == ["on"] and before[start + 1][1] == "[":
        return None  # `transfer [0] on L (X) …`: an index and `on` both, which _clause_out_of_order says
    at, found = (tok.line, tok.column), _token_text(tok)
    # the tokens outside parentheses and brackets after `transfer`, past the stages of its `on`
    top, depth = [], 0
    for t in before[start + 1:]:
        if t[1] in ("(", "["):
            if depth == 0 and t[1] == "(":
                top.append(("group", "(…)", t[2], t[3]))  # (a parenthesis: the work's, or the tokens')
            depth += 1
        elif t[1] in (")", "]"):
            depth -= 1
        elif depth == 0:
            top.append(t)
    top_words = [t[1] for t in top]
    i = 0
    if top_words[:1] == ["on"]:
        i = 1
        while i < len(top_words) and (top[i][0] == "name" or top_words[i] in (".", ",")):
            i += 1
            if i < len(top_words) and top[i - 1][0] == "name" and top_words[i] not in (".", ","):
                break
    rest, rest_tokens = top_words[i:], top[i:]
    # (the work is an expression: a parenthesis, a name, a number; none when `from` or the end comes first)
    if tok.type == "NAME" and rest and (close := did_you_mean(str(tok), ["from", "to"])):  # `frm`, `tp`
        return at, f"unexpected {found}{close}: `transfer (X) from P to Q (n);`"
    if not rest and str(tok) != "from":
        return at, (f"unexpected {found}: a transfer takes its work and says where the KV moves, `transfer (X) "
                    "from P to Q (n);` (X the link's work, n the tokens that move from the lease or hold on P to "
                    "the hold on Q)")
    if rest[:1] == ["from"] or not rest:
        where = (rest_tokens[0][2], rest_tokens[0][3]) if rest[:1] == ["from"] else at
        return where, ("unexpected `from`: the transfer's work is missing before it, `transfer (X) from P to Q "
                       "(n);` (X the link's work: the time the KV takes over the link)")
    if rest[-2:] == ["from", "to"] and tok.type == "NAME":  # `from to Q`: `to` read as the pool's name
        return (rest_tokens[-1][2], rest_tokens[-1][3]), (
            "unexpected `to`: `from` takes the pool the KV leaves (the session's lease or hold on it) before "
            "`to`, `transfer (X) from P to Q (n);`")
    if "from" not in rest:
        if str(tok) == "to":
            return at, ("unexpected `to`: `from P` is missing before it, the pool the KV leaves (the session's "
                        "lease or hold on it), `transfer (X) from P to Q (n);`")
        if str(tok) == "on":  # `transfer (1) on L from …`
            return at, ("unexpected `on`: a transfer names its stages before its work, `transfer on L (X) from P "
                        "to Q (n);`")
        return at, (f"unexpected {found}: a transfer says where the KV moves, `transfer (X) from P to Q (n);` (X "
                    "the link's work, n the tokens that move from the lease or hold on P to the hold on Q); a link "
                    "that stores and forwards is the kernel's `run link (X);`")
    if rest[-1] == "from":
        return at, (f"unexpected {found}: `from` takes the pool the KV leaves (the session's lease or hold on "
                    "it), `transfer (X) from P to Q (n);`")
    if "to" not in rest:
        if tok.type == "NAME":
            return at, (f"unexpected {found}: `to` is missing before it, `transfer (X) from P to Q (n);` (Q the "
                        "pool the KV moves to)")
        return at, (f"unexpected {found}: `to Q (n)` is missing, the pool the KV moves to and the tokens that "
                    "move, `transfer (X) from P to Q (n);`")
    if rest[-1] == "to":
        return at, (f"unexpected {found}: `to` takes the pool the KV moves to (the session's hold on it), "
                    "`transfer (X) from P to Q (n);`")
    return at, (f"unexpected {found}: the tokens that move are missing after `to {rest[-1]}`, in parentheses, "
                "`transfer (X) from P to Q (n);`")


def _on_stage_missing(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """A serving form's ``on`` (or a ``,`` of its stages) followed by no stage (language.txt §2: ``VERB [ on
    STAGE [, STAGE]* ] expr …``): ``transfer on (1) from p to q (1);``, ``prefill on 3;``, ``transfer on a,
    (1) …``. A transfer's was "a transfer says where the KV moves", of a transfer whose ``from … to`` was
    there, and a prefill's "(expected a name)". At the token; None when the error is not one."""
    if tok.type == "$END" or tok.start_pos is None:
        return None
    before = _tokens_before(text, tok.start_pos)
    start = _statement_start(before, len(before))
    if len(before) - start < 2 or before[start][1] not in _SERVING_VERBS or before[start + 1][1] != "on":
        return None
    if before[-1][1] not in ("on", ",") or _depth0_open(before, start)[1] != 0:
        return None
    verb = before[start][1]
    form = ("`transfer on L (X) from P to Q (n);`, several stages separated by `,` (`transfer on L, M (X) …`)"
            if verb == "transfer" else f"`{verb} on S (W);`")
    if before[-1][1] == "on":
        return (tok.line, tok.column), (f"unexpected {_token_text(tok)}: `on` is followed by the name of the stage "
                                        f"the form runs on, {form}")
    return (tok.line, tok.column), (f"unexpected {_token_text(tok)}: a `,` after a stage of `on` is followed by "
                                    f"another stage, and the work by no `,`: {form}")


def _queue_item_word(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """A word where a queue's item begins that is none of its items (language.txt §2, qitem: `pool`, `serve`,
    `nic`, an entry `VERB [ ( NAME, … ) ] [ from NAME ] block`), read as an entry's verb: `nics ps(1);`,
    `decode prompt from s { … }`. It was the token after it, "unexpected `ps` (expected `(`, `{`, from)", and
    a closest word of those (`prompt`: `from`). At the word; None when the error is not one."""
    if tok.type == "$END" or tok.start_pos is None or str(tok) in ("(", "{", "from"):
        return None
    before = _tokens_before(text, tok.start_pos)
    start = _statement_start(before, len(before))
    if len(before) - start != 1 or before[start][0] != "name" or start == 0 or before[start - 1][1] not in ";{}":
        return None
    j, depth = start - 1, 0
    while j >= 0 and not (before[j][1] == "{" and depth == 0):
        depth += {"}": 1, "{": -1}.get(before[j][1], 0)
        j -= 1
    if j < 0 or before[_statement_start(before, j)][1] != "queue":
        return None
    word, at = before[start][1], (before[start][2], before[start][3])
    verbs = ("route", "prefill", "decode", "transfer")
    if word in verbs and tok.type == "NAME":
        return (tok.line, tok.column), (f"unexpected {_token_text(tok)}: an entry's parameters are in "
                                        f"parentheses, `{word} ({tok}, …) {{ … }}`")
    close = did_you_mean(word, ["pool", "serve", "nic", *verbs])
    return at, (f"`{word}` begins no item of a queue{close}: a queue holds `pool NAME {{ … }}`, `serve KIND;`, "
                "`nic KIND;` and its roles' entries, `VERB (params) { … }`")


#: the serving forms' words (language.txt §2, serving)
_SERVING_VERBS = ("prefill", "decode", "tool", "transfer")


#: a pool's spill as language.txt §2 writes it, and what its predicate is
_SPILL = ("`spill TIER via LINK (work) when (pred);` (pred, read at the Evict moment, decides whether the "
          "evicted prefix is written: `when (1)` writes every one)")


def _spill_unfinished(tok: Token, text: str) -> tuple[tuple[int, int], str] | None:
    """``spill cpu via pcie (w);``, ``… when 1;``, ``spill cpu (w) when (p);``: a spill written without a part
    of its form (language.txt §2: ``spill POOL via STAGE ( expr ) when ( expr ) ;``, the predicate required);
    the error was the grammar's next word alone (`(expected when)`). At the token (as a spill without its work
    is told, :func:`_parenthesis_missing`), the part named and the whole form; None when the error is inside a parenthesis, or where the form is complete (a `;` missing after it),
    or a spill without its work's parentheses (:func:`_parenthesis_missing` says that)."""
    if tok.start_pos is None and tok.type != "$END":
        return None
    offset = tok.start_pos if tok.type != "$END" else len(text)
    before = _tokens_before(text, offset)
    start = _statement_start(before, len(before))
    if start >= len(before) or before[start][1] != "spill":
        return None
    words, depth = _depth0_open(before, start)
    if depth != 0 or before[-1][1] in ("[", "."):
        return None
    if "via" not in words:
        if len(words) < 2:
            return None  # `spill;`, `spill (…)`: no tier named yet, the grammar's words
        part = "a spill names the link its writes go over after the tier, `via LINK`"
    elif before[-1][1] == "via":
        part = "`via` takes the link's name"
    elif "when" not in words:
        if not any(t[1] == "(" for t in before[start:]):
            return None
        part = "a spill says which evicted prefixes it writes, `when (pred)` after its work"
    elif before[-1][1] == "when":
        part = "`when` takes its test in parentheses"
    else:
        return None
    if tok.type == "$END":
        return _prev_token_end(text, offset) or (1, 1), f"unexpected end of the file: {part}: {_SPILL}"
    return (tok.line, tok.column), f"unexpected {_token_text(tok)}: {part}: {_SPILL}"


#: the refusal of a definition named like a keyword (the linker's words, ``sugar.defs``)
_KEYWORD_NAMED = "`{word}` is a keyword; a definition needs another name"


def _definition_named(text: str, word: str) -> tuple[int, int] | None:
    """The line and column of the name of the first definition of ``word`` in ``text`` (``def word(``), or
    None."""
    every = _tokens_before(text, len(text))
    for i in range(len(every) - 2):
        if every[i][1] == "def" and every[i + 1][1] == word and every[i + 2][1] == "(":
            return every[i + 1][2], every[i + 1][3]
    return None


def syntax_error(e: UnexpectedInput, text: str, file: str, reporter: Reporter, grammar: Any = None) -> CompileError:
    """The error of a program that does not parse. ``grammar`` (the :class:`Parser`, when there is one)
    names the terminals by their text and gives the words an item begins with and the grammar's words, for
    the hints: the closest word to a misspelt one.

    The hints read the tokens before the error again and again (:func:`_tokens_before`, seven times for a
    plain unexpected token): within one call each offset's tokens are read once. A syntax error at the end
    of a source of 15 MiB (700 000 lets) took 101 s and 1.3 GB, its parse 56 s and 0.6 GB."""
    json_object = _json_object_at(e, text)
    if json_object is not None:
        return reporter.error(Pos(file, e.line, e.column), json_object)
    _SCANNED.text, _SCANNED.tokens = text, {}
    try:
        return _syntax_error(e, text, file, reporter, grammar)
    finally:
        _SCANNED.text = _SCANNED.tokens = None


def _json_object_at(e: UnexpectedInput, text: str) -> str | None:
    """The error of a source whose text is a JSON object (an IR file, as ``serq ir`` writes one, given a
    ``.sq`` name), at its ``{``, the first thing of the file: the parser's ``unexpected `{` (expected a
    name)`` did not say what the file is. ``None`` for any other error."""
    start = len(text) - len(text.lstrip())
    if not isinstance(e, UnexpectedToken) or e.pos_in_stream != start or not text[start:start + 1] == "{":
        return None
    import json

    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    what = "IR, as `serq ir` writes it" if "version" in value else "a JSON object"
    return (f"the file is {what}, not serQ source: an IR file is read by a name ending in `.ir.json` "
            "(serq_ir.load in Python)")


def _syntax_error(e: UnexpectedInput, text: str, file: str, reporter: Reporter, grammar: Any) -> CompileError:
    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        # (a NUL: a file of UTF-16BE begins with one, before its first ASCII character, one of UTF-16LE after it)
        return reporter.error(Pos(file, e.line, e.column),
                              _unexpected_character(ch, "BE" if text.startswith("\x00") else "LE"))
    if isinstance(e, UnexpectedEOF):
        unclosed = _unclosed_brace(text)
        if unclosed is not None:
            return reporter.error(Pos(file, *unclosed), _UNCLOSED)
        end = _prev_token_end(text, len(text)) or (1, 1)
        return reporter.error(Pos(file, *end), "unexpected end of the file")
    assert isinstance(e, UnexpectedToken)
    tok = e.token
    expected = set(e.expected)
    missing = _value_missing(tok, text)
    if missing is not None:
        return reporter.error(Pos(file, *missing[0]), missing[1])
    dialect = _dialect(tok, expected, text)
    if dialect is not None:
        return reporter.error(Pos(file, *dialect[0]), dialect[1])
    named = _keyword_defined(tok, text)
    if named is not None:
        return reporter.error(Pos(file, *named[0]), _KEYWORD_NAMED.format(word=named[1]))
    if tok.type != "$END" and tok.start_pos is not None:  # (0 too: `/*` may begin the file)
        # a number's text that runs on (`1_000`, `0x10`, `1e`, `1.5.3`): the lexer read a number and then a
        # name or a number after it, and the error was a `;` missing before the rest
        bad = _malformed_number(text, tok.start_pos)
        if bad is not None:
            m = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([A-Za-zµ]+)", bad[1])
            unit = _unit_said(m.group(1), m.group(2)) if m is not None else None
            if unit is not None:  # `100s`, `2ms`: a number with its unit
                return reporter.error(Pos(file, *_line_col(text, bad[0])), f"{_quoted(bad[1])} is not a number: "
                                      + unit.split(": ", 1)[1])
            return reporter.error(Pos(file, *_line_col(text, bad[0])), f"{_quoted(bad[1])} is not a number: "
                                  + _NUMBER_HELP)
        # `2 ms`, `cap 8 GB;`: a unit after a number, where an operator or the end was wanted (it said a `;` was
        # missing before the unit, inside parentheses too)
        if tok.type == "NAME":
            before = _tokens_before(text, tok.start_pos)
            if before and before[-1][0] == "number" and before[-1][2] == tok.line:
                unit = _unit_said(before[-1][1], str(tok),
                                  _written(text, before[-1], ("name", str(tok), tok.line, tok.column)))
                if unit is not None:
                    return reporter.error(Pos(file, before[-1][2], before[-1][3]), unit)
        if str(tok) in ("/", "*") and text.startswith("/*", max(tok.start_pos - (str(tok) == "*"), 0)):
            # `/* … */`, a comment of other languages: `/` where a statement begins, or `*` after `1 /`
            at = tok.start_pos - (str(tok) == "*")
            return reporter.error(Pos(file, *_line_col(text, at)), "`/*` begins no comment: a comment runs from "
                                  "`//` to the end of the line")
        # `2 ** 3`, a power of other languages
        if str(tok) == "*" and tok.start_pos > 0 and text[tok.start_pos - 1] == "*":
            return reporter.error(Pos(file, tok.line, tok.column - 1), "unexpected `**`: a power is `pow(x, y)`")
        # `branch with (50%)`, `cap 90%;`: a percentage, `%` read as the remainder with its right side missing
        if str(tok) in (")", ";", ",", "]") and tok.start_pos > 0:
            before = _tokens_before(text, tok.start_pos)
            if len(before) >= 2 and before[-1][1] == "%" and before[-2][0] == "number":
                n = before[-2][1]
                try:
                    frac = f"`{float(n) / 100:g}`"
                except ValueError:  # pragma: no cover - the scanner's numbers are Python's
                    frac = "a fraction"
                return reporter.error(Pos(file, before[-2][2], before[-2][3]), f"{_written(text, before[-2], before[-1])} is no number: a "
                                      f"percentage is written as its fraction, {frac} (`%` is the remainder, "
                                      "`a % b`)")
        # `2 |||| 3`, `&&&&`: a run of the operator's character read as `||` twice, said as `&&&` is (its third
        # `&` an unexpected character): the operator is written once
        if str(tok) in ("||", "&&") and tok.start_pos > 0 and text[tok.start_pos - 1] == str(tok)[0]:
            return reporter.error(Pos(file, tok.line, tok.column), f"unexpected `{tok}`: "
                                  + _OTHER_LANGUAGES[str(tok)[0]])
    if grammar is not None and tok.type != "$END" and tok.start_pos:
        # a word the lexer split where it wanted a keyword (`fifoo` read as `fifo` then `o`): the whole word
        k = tok.start_pos
        if _word_char(text[k - 1]) and _word_char(str(tok)[:1]):
            a = k - 1
            while a > 0 and _word_char(text[a - 1]):
                a -= 1
            b = k
            while b < len(text) and _word_char(text[b]):
                b += 1
            word = text[a:b]
            if not word[0].isdigit():
                return reporter.error(Pos(file, *_line_col(text, a)), f"unexpected {_quoted(word)}"
                                      + did_you_mean(word, grammar.keywords()))
    if tok.type == "$END":
        prev = _prev_token_end(text, len(text)) or (1, 1)
        pos = Pos(file, *prev)
    else:
        pos = Pos(file, tok.line, tok.column)
    if tok.type == "$END" and "RBRACE" in expected:
        # the file ends inside a block: the `{` left open, where it is, rather than the end of the file
        unclosed = _unclosed_brace(text)
        if unclosed is not None:
            return reporter.error(Pos(file, *unclosed), _UNCLOSED)
    if tok.type == "RBRACE" and tok.start_pos is not None and not _open_braces(text, tok.start_pos)[0]:
        return reporter.error(pos, "unexpected `}`: no `{` is open here (one `}` too many)")
    if tok.type != "$END" and tok.start_pos is not None:
        # `else` where a statement begins: a second `else`, or one after a statement that is no branch (it was
        # read as a name, and the error was at the `{` after it, or a closest word `release` offered)
        before = _tokens_before(text, tok.start_pos)
        if str(tok) == "else" and before and before[-1][1] in (";", "{", "}"):
            at = (tok.line, tok.column)
        elif (len(before) >= 2 and before[-1][1] == "else" and before[-2][1] in (";", "{", "}")
              and not (before[-2][1] == "}" and _block_of(before, len(before) - 2) == "branch")):
            at = (before[-1][2], before[-1][3])
        else:
            at = None
        if at is not None:
            return reporter.error(Pos(file, *at), "`else` stands right after a branch's block, once: `branch (test) "
                                  "{ … } else { … }`")
    misplaced = _misplaced_word(tok, text, grammar)
    if misplaced is not None:
        return reporter.error(Pos(file, *misplaced[0]), misplaced[1])
    said = (_written_twice(tok, text, expected) or _admission_alone(tok, text) or _clause_after_statement(tok, expected, text) or _comment_cut(tok, text) or _one_expression(tok, expected, text) or _after_hold(tok, text, grammar) or _word_takes(tok, expected, text)
            or _pool_option_slipped(tok, text) or _hold_clause_placed(tok, expected, text)
            or _requeue_missing(tok, text) or _on_stage_missing(tok, text)
            or _queue_item_word(tok, text) or _transfer_unfinished(tok, text) or _requeue_misplaced(tok, text)
            or _share_missing(tok, text) or _clause_out_of_order(tok, text, grammar)
            or _parenthesis_missing(tok, expected, text) or _spill_unfinished(tok, text)
            or _stage_kind_ended(tok, text)
            or _bracket_unclosed(tok, expected, text) or _closer_unopened(tok, text)
            or _expression_wants(tok, expected, text) or _amount_ended(tok, expected, text)
            or _word_in_parenthesis(tok, expected, text) or _no_block(tok, expected, text))
    if said is not None:
        return reporter.error(Pos(file, *said[0]), said[1])
    if "SEMICOLON" in expected and tok.type != "SEMICOLON":
        offset = tok.start_pos if tok.start_pos is not None and tok.type != "$END" else len(text)
        prev = _prev_token_end(text, offset)
        # a statement that ends where a new one starts: the next line, a `}`, or a keyword or name
        starts = tok.type in ("$END", "RBRACE", "NAME") or (tok.type.isupper() and str(tok).isalpha())
        # no statement or item that ends in `}` wants a `;` after it (`};` is refused as such, below)
        closed = prev is not None and text[_offset(text, *prev) - 1] == "}"
        # a word on the statement's line close to a word the grammar takes there (`prefill (w) grwoing kv;`): the
        # word misspelt, not a `;` missing before it
        near = ""
        if (grammar is not None and tok.type == "NAME" and (len(str(tok)) == 2 or len(str(tok)) >= 4)
                and prev is not None and prev[0] == tok.line):
            words = [w for w in sorted({w for t in expected for w in grammar.term_words(t)} - {";"}) if w.isalpha()]
            # (a word of two letters one letter off one the grammar takes there, `by` as `yb`, and no other:
            # difflib offers nothing for it, and a longer word it offered for one would be a guess)
            near = (did_you_mean(str(tok), words) if len(str(tok)) > 2
                    else did_you_mean(str(tok), [w for w in words if len(w) == 2]) if one_edit(str(tok), words)
                    else "")
        if near:
            return reporter.error(pos, f"unexpected {_token_text(tok)}{near}")
        if prev is not None and (starts or prev[0] < tok.line) and not closed:
            return reporter.error(Pos(file, *prev), f"missing `;` (found {_token_text(tok)} next)")
    if grammar is not None and tok.type != "$END" and tok.start_pos is not None:
        # `set t = now` and, on the next line, `hold kv (1) {`: the keyword that begins the line was read
        # on as a name of the expression (`now hold kv` an aggregate's start) and the error came at the
        # word after it; the `;` missing is at the end of the line before
        before = _tokens_before(text, tok.start_pos)
        if (len(before) >= 2 and before[-1][2] == tok.line and before[-2][2] < tok.line
                and before[-1][1] in _STATEMENT_WORDS and before[-1][3] == _first_col(text, tok.line)
                and (before[-2][0] in ("name", "number", "string") or before[-2][1] in (")", "]"))):
            prev = _prev_token_end(text, _offset(text, before[-1][2], before[-1][3]))
            if prev is not None:
                return reporter.error(Pos(file, *prev), f"missing `;` (found `{before[-1][1]}` next)")
    if tok.type == "$END" and "RBRACE" in expected:
        return reporter.error(pos, "unexpected end of the file: a `}` is missing")
    if expected == {"IN"} and tok.type != "$END" and tok.start_pos is not None:
        # `min(a b, 2)`: two names side by side read as the start of an aggregate (`NAME NAME in …`), which
        # wants `in` next; unless the first is an aggregate's word, an operator or a `,` is what is missing
        before = _tokens_before(text, tok.start_pos)
        if (len(before) >= 2 and before[-1][0] == "name" and before[-2][0] == "name"
                and before[-2][1] not in _AGGREGATE_WORDS):
            # `set t = now hold kv (1) { … }`: a statement begins there; `let x = a` and, first on the next line,
            # `def f(…) …`: an item does
            if before[-1][1] in _STATEMENT_WORDS or (before[-1][1] in _ITEM_WORDS and before[-2][2] < before[-1][2]
                                                     and before[-1][3] == _first_col(text, before[-1][2])):
                prev = _prev_token_end(text, _offset(text, before[-1][2], before[-1][3]))
                if prev is not None:
                    return reporter.error(Pos(file, *prev), f"missing `;` (found `{before[-1][1]}` next)")
            return reporter.error(Pos(file, before[-1][2], before[-1][3]), f"unexpected `{before[-1][1]}`: two "
                                  f"names side by side, {_written(text, before[-2], before[-1])}; an operator or a `,` is "
                                  "missing between them (an aggregate is `max j in n (e)`)")
    names = sorted({_describe_in(t, grammar) for t in expected})
    if "`{`" in names and tok.type != "$END" and tok.start_pos is not None and str(tok) != "{":
        before = _tokens_before(text, tok.start_pos)
        if before and before[-1][1] == "else":  # `else branch (…) { … }`, `else if (…)`, `else run …;`
            return reporter.error(pos, f"unexpected {_token_text(tok)}: `else` takes a block, `else {{ … }}` "
                                  "(a test in it: `else { branch (…) { … } }`)")
    if str(tok) == ":" and tok.start_pos is not None and grammar is not None and "a number" in names:
        # `cap: 100;`, `budget: B;`, `horizon: 100;`: a field written as a mapping's key, as `cap = 100;` is
        before = _tokens_before(text, tok.start_pos)
        last = before[-1][1] if before else ""
        if (len(before) >= 2 and (last in grammar.keywords() or last in grammar.term_words("RUN_FIELD"))
                and before[-2][1] in ("{", ";")):
            return reporter.error(pos, f"unexpected `:`: `{last}` takes its value without one, `{last} …;`")
    if str(tok) in ("=", ";") and tok.start_pos is not None:
        before = _tokens_before(text, tok.start_pos)
        last = before[-1][1] if before else ""
        if str(tok) == ";" and last in ("", ";", "{"):  # `let x = 1;;`, `{ ; … }`, `;` first in the file
            return reporter.error(pos, "unexpected `;`: a stray `;`, an empty statement, which the language does "
                                  "not have (one `;` ends each statement or item): remove it")
        if (str(tok) == "=" and last == "=" and text[tok.start_pos - 1] == "=" and len(before) >= 3
                and before[-2][0] == "name" and before[-3][1] in _VALUE_WORDS):  # `set x == 1;`
            word, name = before[-3][1], before[-2][1]
            return reporter.error(Pos(file, before[-1][2], before[-1][3]), f"unexpected `==`: `{word}` gives "
                                  f"a name its value with `=`, `{word} {name} = …;` (`==` is a test of "
                                  "equality)")
        if str(tok) == ";" and last == "}":  # `branch (x) { … };`: C's habit
            return reporter.error(pos, "unexpected `;` after a block: a statement or item that ends in `}` takes "
                                  "no `;`")
        if (str(tok) == "=" and len(before) >= 3 and before[-1][0] == "name" and before[-2][1] in _BEGIN_WORDS
                and before[-2][1] not in _GIVES_A_VALUE and before[-3][1] in (";", "{", "}")
                and _open_braces(text, tok.start_pos)[0]):
            # `release prio = 1;`, `drop x = 1;`: a statement's word where `set` was meant (it was "unexpected `=`")
            return reporter.error(pos, f"unexpected `=`: `{before[-2][1]}` does not give a name a value; a name is "
                                  f"given one with `set {last} = …;`")
        if str(tok) == "=" and len(before) >= 2 and before[-2][1] == "stage":  # `stage t = fifo;`
            return reporter.error(pos, f"unexpected `=`: a stage's kind follows `:`, `stage {last} : fifo;`")
        if (str(tok) == "=" and grammar is not None and "a number" in names
                and (last in grammar.keywords() or last in grammar.term_words("RUN_FIELD"))
                and before[-2][1] in ("{", ";")):  # `cap = 100;`, `horizon = 100;`
            return reporter.error(pos, f"unexpected `=`: `{last}` takes its value without one, `{last} …;`")
        if (str(tok) == "=" and len(before) >= 2 and before[-1][0] == "name" and before[-2][1] in ("{", ";", "}")
                and "`(`" in names and _open_braces(text, tok.start_pos)[0]):  # `x = 1;` in a session
            return reporter.error(pos, f"unexpected `=`: a statement that gives a name a value begins with `set`, "
                                  f"`set {last} = …;` (or `observe {last} = …;`)")
    if str(tok) == "=" and "`==`" in names:  # `branch (x = 1)`: a comparison, written as C's assignment
        return reporter.error(pos, "unexpected `=` in an expression: a test of equality is `==`")
    if "pull" in names and grammar is not None:
        # a word where an item begins that is none of the items' words: the parser took it for the reader
        # of `READER pull SOURCE` and expected `pull` after it; say what the word is not, where it is
        word = _item_word(text, tok)
        if word is not None:
            words = grammar.item_keywords()
            if word[2] not in words:
                listed = ", ".join(words) + ", or `READER pull SOURCE`" if words else "`READER pull SOURCE`"
                # (`B = 2048;`, its `let` left out: how a constant is written)
                let = f" (a constant is `let {word[2]} = …;`)" if str(tok) == "=" and word[2].isidentifier() else ""
                return reporter.error(Pos(file, word[0], word[1]), f"{_quoted(word[2])} does not begin an item"
                                      f"{did_you_mean(word[2], words)}: an item begins with {listed}{let}")
    if names == ["`.`"] and tok.type != "$END" and tok.start_pos is not None:
        # `E[j] (x);`, `kv[1];`: a statement that begins with a member of a family is a queue member's entry
        # call, `D[j].decode (…)`, and the `.` was wanted; say so, and how a stage's or a pool's member is used
        ref = _member_statement(text, tok.start_pos)
        if ref is not None:
            return reporter.error(pos, f"unexpected {_token_text(tok)} after {_quoted(ref)}: a statement that "
                                  f"begins with a family's member calls an entry of a queue's member, "
                                  f"`{_quoted(ref)[1:-1]}.ENTRY (…);`; a stage's member runs with `run "
                                  f"{_quoted(ref)[1:-1]} (…);`, a pool's is held with `hold {_quoted(ref)[1:-1]} "
                                  "(…) { … }`")
    if grammar is not None:
        # a word where a statement begins that is no statement's word, read as a definition's call: it
        # wanted `(` after the word (`rn s(1);`), or a block statement's `{` came after the call
        # (`brnch (x) { … }`); that word, where it stands, when it is close to one of the grammar's words
        word = None
        if tok.type == "NAME" and "`(`" in names:
            word = _item_word(text, tok, "{;}")
        elif tok.type == "LBRACE" and "`;`" in names:
            word = _statement_word(text, tok)
            if (word is not None and word[2] in grammar.keywords() and word[2] not in _BEGIN_WORDS
                    and word[2] not in _OPTION_WORDS and word[2] not in ("with", "else")):  # (told below)
                # `in (test) { … }`, a branch's word replaced by a keyword of another place: read as a call of a
                # definition, with a block after it (it was "unexpected `{` (expected `;`)")
                return reporter.error(Pos(file, word[0], word[1]), keyword_begins_nothing(word[2]))
        if word is not None and word[2] not in grammar.keywords():
            close = did_you_mean(word[2], grammar.keywords())
            if close:
                return reporter.error(Pos(file, word[0], word[1]), f"{_quoted(word[2])} does not begin a statement"
                                      f"{close}: a name there calls a definition, `{word[2]}(…);`")
        if (tok.type not in ("SEMICOLON", "RBRACE", "$END") and names
                and set(names) <= {"`(`", "`.`", "`[`"}):
            # a word alone where a statement begins, then neither the `(` of a definition's call nor the `.` or
            # `[` of an entry's: a statement's word misspelt before the rest of the statement (`brnch with (p)
            # { … }`, `} els { … }`, `retrun x;`), where the list offered `(`, `.`, `[`
            word = _item_word(text, tok, "{;}")
            meant = _BEGIN_WORDS | {"else"}
            if word is None and tok.start_pos is not None:
                # after a hold's `cache (…)`, which may end the hold (`} cache (n) leese kv (t);`): its `lease`
                before = _tokens_before(text, tok.start_pos)
                if len(before) >= 3 and before[-1][0] == "name" and before[-2][1] == ")":
                    j = _opener(before, len(before) - 2, "()")
                    if j > 0 and before[j - 1][1] == "cache":
                        word, meant = (before[-1][2], before[-1][3], before[-1][1]), meant | {"lease"}
            if word is not None and word[2] in _OPTION_WORDS and word[2] not in grammar.keywords():
                # `warmup 1;` in a session: a run setting's word (no keyword), where a statement begins
                what, shape = _OPTION_WORDS[word[2]]
                return reporter.error(Pos(file, word[0], word[1]), f"`{word[2]}` is {what}, not a statement: it "
                                      f"stands in its block, {shape}")
            if word is not None and word[2] in grammar.keywords() and word[2] not in meant | set(_OPTION_WORDS):
                # `from o = 1;`, `in x = 1;`: a word of another place where a statement begins (the lexer read it
                # as a name, a definition's call, and wanted its `(`)
                return reporter.error(Pos(file, word[0], word[1]), keyword_begins_nothing(word[2], text, tok))
            if word is not None and word[2] not in grammar.keywords():
                close = did_you_mean(word[2], sorted(meant))
                return reporter.error(Pos(file, word[0], word[1]), f"{_quoted(word[2])} does not begin a statement"
                                      f"{close}: a statement begins with one of the language's words (`run`, "
                                      f"`hold`, `set`, …), or calls a definition, `{word[2]}(…);`")
        if tok.type in ("SEMICOLON", "RBRACE") and "`(`" in names:
            # a word alone where a statement begins (`rn;`, or a stray `foo` on a line before a `}`): the
            # parser wanted the `(` of a definition's call after it, and the token it met may be on the
            # next line; name the word where it stands
            word = _item_word(text, tok, "{;}")
            if word is not None and word[2] == "admission":  # `admission;`: a hold's `at admission (…)`
                return reporter.error(Pos(file, word[0], word[1]), ADMISSION_ALONE)
            if word is not None and word[2] in grammar.keywords() and word[2] not in _OPTION_WORDS:  # `from;`
                return reporter.error(Pos(file, word[0], word[1]), keyword_begins_nothing(word[2]))
            if word is not None and word[2] not in grammar.keywords() and _definition_named(text, word[2]):
                # `g;` of a `def g(p) { … }` the text has: its use without its arguments
                return reporter.error(Pos(file, word[0], word[1]), f"{_quoted(word[2])} is a definition: its use "
                                      f"gives its arguments in parentheses, `{word[2]}(…);`")
            if word is not None and word[2] not in grammar.keywords():
                return reporter.error(Pos(file, word[0], word[1]), f"{_quoted(word[2])} does not begin a statement"
                                      f"{did_you_mean(word[2], sorted(_BEGIN_WORDS))}: a statement begins with "
                                      f"one of the language's words (`run`, `hold`, `set`, …), or calls a "
                                      f"definition, `{word[2]}(…);`")
    after = _after_expression(tok, names, text)
    if after is not None:
        return reporter.error(pos, after)
    if tok.type == "$END":
        end = _end_unfinished(names, text)
        if end is not None:
            return reporter.error(Pos(file, *end[0]), end[1])
    elif grammar is not None:
        placed = _unexpected_in_place(tok, names, text, grammar)
        if placed is not None:
            return reporter.error(Pos(file, *placed[0]), placed[1])
    listed = len(names) <= 12 and all(n == "`}`" or n.isalpha() for n in names)
    if len(names) > 8 and not listed:
        # (a long list of tokens says little; the words of a block's fields or options, a pool's nine, do, when
        # no word close to the one written is offered instead, below)
        hint = ""
    else:
        hint = " (expected " + ", ".join(names) + ")"
    close = ""
    if grammar is not None and tok.type not in ("$END",) and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", str(tok)):
        # a misspelt word where the grammar wants one of its words: the closest of them
        wanted = sorted({w for t in expected for w in grammar.term_words(t)})
        close = did_you_mean(str(tok), wanted)
        if close and len(names) > 8:
            hint = ""
        hint += close
    point = _plugin_point(tok, expected, names)
    if point is not None and not close:
        # a bare name where a plugin's (`@name`) may stand (`stage s : acme;`): how a plugin's is named and how
        # one is added, as the linker says of an `@acme` no plugin registers (it listed the built-in words alone)
        from serq.extensions import how_added

        hint += f": a plugin's {point} is named with an `@`, {_quoted('@' + str(tok))}; {how_added(point)}"
    what = "end of the file" if tok.type == "$END" else _token_text(tok)
    return reporter.error(pos, f"unexpected {what}{hint}")


#: a word the parser wants beside a plugin's name (`@name`), and the extension point of that place
_PLUGIN_PLACES = (("fifo", "stage kind"), ("lru", "eviction order"), ("lifo", "preemption policy"))


def _plugin_point(tok: Token, expected: set[str], names: list[str]) -> str | None:
    """The extension point (serq.extensions) of the place of ``tok``, a bare name where a plugin's name
    (``@name``) or a built-in word was wanted: a stage's kind (a queue's ``serve`` and ``nic`` too), a pool's
    eviction order or preemption policy; None elsewhere."""
    if tok.type != "NAME" or "EXT_NAME" not in expected:
        return None
    return next((point for word, point in _PLUGIN_PLACES if word in names), None)


#: the words of a statement or item that gives a name a value with `=`
_VALUE_WORDS = ("set", "let", "observe", "gauge")
#: binary operators: the parser wants one of these (or what ends the expression) after a whole expression
_BINARY = ("`+`", "`-`", "`*`", "`/`", "`%`", "`==`", "`!=`", "`<`", "`<=`", "`>`", "`>=`", "`&&`", "`||`", "`?`")


def _after_expression(tok: Token, names: list[str], text: str) -> str | None:
    """What was wanted after a whole expression that a token which neither continues nor ends it follows
    (`let x = 3 !;`, where the error was the token alone, its list of expected tokens being too long to
    show): an operator, or what ends the expression where it stands, the `;` of its statement or the `)` or
    `]` of the innermost bracket open; None where the parser did not want an operator."""
    if tok.type == "$END" or tok.start_pos is None or "`+`" not in names or "`*`" not in names:
        return None
    if f"`{tok}`" in _BINARY or str(tok) in (";", ")", "]", ",", ":"):
        return None
    before = _tokens_before(text, tok.start_pos)
    if not before or not (before[-1][0] in ("name", "number") or before[-1][1] in (")", "]")):
        return None
    depth = 0
    opener = None
    for j in range(len(before) - 1, -1, -1):
        t = before[j][1]
        if t in (")", "]", "}"):
            depth += 1
        elif t in ("(", "[", "{"):
            if depth == 0:
                opener = before[j]
                break
            depth -= 1
        elif t == ";" and depth == 0:
            break
    if opener is None or opener[1] == "{":
        ends = "the `;` that ends the statement"
    else:
        ends = f"the `{')' if opener[1] == '(' else ']'}` of the `{opener[1]}` at {opener[2]}:{opener[3]}"
    said = f"unexpected {_token_text(tok)} after an expression: expected an operator (`+`, `==`, `&&`, …) or {ends}"
    # `if (c) a else b` in an expression: read as a call of `if` and the value after it
    k = len(before) - 1
    if before[k][1] == ")":
        k = _opener(before, k, "()") - 1
    if k >= 0 and before[k][1] == "if" and (k == 0 or before[k - 1][0] != "name"):
        said += "; a value chosen by a test is `test ? a : b` (`if (test) a else b` is not an expression)"
    if str(tok) == "!":
        said += " (`!` negates the value after it, `!x`; a test of inequality is `!=`)"
    return said


# ---------------------------------------------------------------------------------------------------
# Constructs of other serQ dialects
# ---------------------------------------------------------------------------------------------------

_SERVE_ONLY = ("`serve only` is not part of this language; a step stage serves `admission`, `by (…)`, "
               "`decode first` or `exclusive prefill`")
_POOL_ON = ("`pool … on …` is not part of this language; a pool a step stage admits says "
            "`admit via STAGE;` among its options")


def _member_statement(text: str, offset: int) -> str | None:
    """The member reference ``NAME[…]`` that ends just before ``offset`` when it begins a statement (after
    `{`, `;` or `}`), as written; else None."""
    before = _tokens_before(text, offset)
    if not before or before[-1][1] != "]":
        return None
    k = _opener(before, len(before) - 1, "[]")
    if k < 1 or before[k - 1][0] != "name" or (k >= 2 and before[k - 2][1] not in ("{", ";", "}")):
        return None
    start = _offset(text, before[k - 1][2], before[k - 1][3])
    end = _offset(text, before[-1][2], before[-1][3]) + 1
    return " ".join(text[start:end].split())


#: the tokens :func:`_tokens_before` read of the text :func:`syntax_error` is placing an error in (``text``),
#: by offset (``tokens``), for the duration of that call (each thread its own)
_SCANNED = threading.local()


def _tokens_before(text: str, offset: int) -> list[tuple[str, str, int, int]]:
    """The tokens of ``text[:offset]`` (comments and blanks left out): kind, text, line, column. Within a
    :func:`syntax_error` of ``text`` the same list for the same offset (which no caller changes)."""
    memo = getattr(_SCANNED, "tokens", None)
    if memo is None or _SCANNED.text is not text:
        return _scan_tokens(text, offset)
    found = memo.get(offset)
    if found is None:
        found = memo[offset] = _scan_tokens(text, offset)
    return found


def _scan_tokens(text: str, offset: int) -> list[tuple[str, str, int, int]]:
    out: list[tuple[str, str, int, int]] = []
    line, start = 1, 0
    for m in _scanner().finditer(text, 0, offset):
        kind = m.lastgroup or "other"
        if kind == "blanks":
            blanks = m.group()
            n = blanks.count("\n")
            if n:
                line, start = line + n, m.start() + blanks.rindex("\n") + 1
        else:
            out.append((kind, m.group(), line, m.start() - start + 1))
    return out


@functools.cache
def _scanner() -> re.Pattern[str]:
    """serq fmt's tokens (:data:`serq_frontend.fmt._TOKEN`) with each run of blanks, line ends and comments
    one match (a match for each line and each blank cost :func:`_tokens_before` 1 µs a blank line)."""
    from .fmt import _TOKEN

    return re.compile(r"(?P<blanks>(?:[ \t\r\f\v\n]+|//[^\n]*)+)|" + _TOKEN.pattern, _TOKEN.flags)


def _dialect(tok: Token, expected: set[str], text: str) -> tuple[tuple[int, int], str] | None:
    """Where and how to say that the construct a syntax error stops in belongs to another dialect, or
    None when it does not look like one.

    Three shapes: the error is at the word itself where no name may stand (``step { iteration { … } }``);
    the word starts an item or a statement and what follows it cannot follow a name there (``claim kv
    (1) { … }``, ``fn main() { … }``, ``state { … }``, ``join;``), or only its parenthesis does and a
    block follows (``while (c) { … }``). A name at the start of a statement may be a definition's use
    (``f(x);``), a queue's call (``Q.prefill(x);``) or, as an item, a pull (``D pull P …``), so only an
    error right after the word, or a block right after its parenthesis, is taken for the other dialect.
    """
    value = str(tok)
    here = (tok.line, tok.column)
    if tok.type == "NAME" and "NAME" not in expected and value in DIALECT:
        return here, not_in_language(value)
    offset = tok.start_pos if tok.type != "$END" and tok.start_pos is not None else len(text)
    before = _tokens_before(text, offset)
    if not before:
        return None
    if value == "only" and before[-1][1] == "serve":
        return before[-1][2:], _SERVE_ONLY
    i = _statement_start(before, len(before))  # the start of the statement or item the error is in
    if i >= len(before) or before[i][0] != "name":
        return None
    if before[i][1] == "pool" and value == "on":  # `pool kv on E {`, `pool kv[N] on E {`
        return before[i][2:], _POOL_ON
    if before[i][1] not in DIALECT:
        return None
    word = before[i]
    if i == len(before) - 1:
        return word[2:], not_in_language(word[1])
    if before[i + 1][1] == "(" and before[-1][1] == ")" and value == "{":
        depth = 0
        for j in range(i + 1, len(before)):
            depth += {"(": 1, ")": -1}.get(before[j][1], 0)
            if depth == 0:
                if j == len(before) - 1:
                    return word[2:], not_in_language(word[1])
                break
    return None
