"""What the rewrites and the linker share for one compile: the reporter, the constants, the parser."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from serq.errors import clipped, knob_hint
from serq.files import MAX_SOURCE, name_not_text, read_input, shown_name
from serq.numbers import truth_hint
from serq_ir.rules import MAX_MEMBERS, show_number

from . import ast as A
from .consts import BadConstant, NotConstant, fold
from .diagnostics import CompileError, Pos, Reporter, Sources, decode_source, did_you_mean
from .names import DIALECT, FUNCTION_ALIASES, FUNCTIONS, KEYWORDS, OBSERVABLES, function_hint, takes


def describe(e: Any) -> str:
    if isinstance(e, A.Var):
        return f"`{e.dotted}`"
    if isinstance(e, A.Call):
        return f"`{e.name}(…)`"
    if isinstance(e, A.Draw):
        return f"the draw `~{e.dist}(…)`"
    return "this"


class Context:
    def __init__(self, *, reporter: Reporter, sources: Sources, parser: Any, base_dir: Path | None,
                 library_paths: Any, sets: dict[str, float], defs: dict[str, str], option_name: Any,
                 pm: Any = None):
        self.reporter = reporter
        #: the places a warning was given at, with its words (:meth:`warn_once`: a definition's body is linked once
        #: a use, and a constant folded more than once)
        self._warned: set = set()
        #: how a message names an override from outside the program, ``--set NAME`` or ``--def NAME`` for a
        #: command, ``sets['NAME']`` or ``defs['NAME']`` for the Python API (serq.loading: option_given,
        #: argument_given; ``option_name("set", NAME)``; serq_frontend._setup chooses it)
        self.option_name = option_name
        self.sources = sources
        self.parser = parser
        self.base_dir = base_dir
        self._library_paths = library_paths
        self.sets = dict(sets)
        self.defs = dict(defs)
        from serq.extensions import Extensions

        #: the stage kinds and policies the plugins of the compile's manager register (serq.extensions)
        self.extensions = Extensions(pm)
        self.module: A.Module | None = None
        #: the declarations a plugin's sugar layer added to the program, ``(name, line, col)`` -> ``the sugar
        #: layer 'L' of plugin 'P'`` (serq_frontend._desugar): a name declared twice says whose each is
        self.layer_declared: dict[tuple[str, int, int], str] = {}
        #: the stage kinds, pool options and workload items the kernel does not have that a plugin's sugar layer
        #: left, ``("stage", name, kind)``, ``("pool", name, kind)`` or ``("workload", "", kind)`` -> ``(the layer's
        #: name, "builder" or "rewrite")``
        #: (serq_frontend._desugar): the linker's refusal names the layer
        self.kinds_left: dict[tuple[str, str, Any], tuple[str, str]] = {}
        #: the plugins' sugar layers whose rewrite ran, in order (None where an expression belongs, which no
        #: builder built, is told as theirs: serq_frontend._missing_expression)
        self.rewritten_by: list[str] = []
        self._lets: dict[str, float] | None = None
        self.let_pos: dict[str, Pos] = {}
        #: where each let's name is written (for a message refusing the name)
        self.let_name_pos: dict[str, Pos] = {}
        #: the ``--set`` names each ``let`` takes its value from (itself, or through the lets it reads)
        self.let_sets: dict[str, tuple[str, ...]] = {}
        self.libraries_read: set[str] = set()
        #: each library read, by its file's device and inode: its resolved path (another name of one file,
        #: a hard link, is that library, as a symbolic link to it is)
        self.library_files: dict[tuple[int, int], str] = {}
        #: what layers leave for the linker (e.g. the queues' generated names)
        self.notes: dict[str, Any] = {}
        #: the compile cache's record of the files a compile looked for and read (``cache.Recorder``)
        self.recorder: Any = None
        #: the nodes writing out definitions and aggregates has made so far (:meth:`write_out`)
        self.written = 0
        #: the ``let`` being computed (:meth:`_compute_lets`) and the ``blocksize(P)`` calls being folded, outer
        #: first (:meth:`block_of`): where a constant reads itself
        self._let_now: A.Let | None = None
        self._blocks_now: list[tuple[str, Any]] = []
        #: the lets computed so far while :meth:`_compute_lets` runs (the blocks read these, no aggregate's index)
        self._lets_now: dict[str, float] | None = None
        #: each pool's block as folded (:meth:`block_of`), once a module: a block read by many constants, or
        #: read twice by another block, is folded once (a chain of blocks each reading the next twice was
        #: folded 2**n times)
        self._block_values: dict[str, float] = {}
        #: the pool table of :meth:`_pool_table`, with the module's items it was read from
        self._pools: tuple[Any, dict[str, Any], dict[str, Any]] | None = None
        #: the families whose size is being folded to check a member ``blocksize`` names (:meth:`_check_member`)
        self._sizes_now: set[str] = set()

    # -- errors ------------------------------------------------------------------------------------

    def error(self, pos: Pos | None, message: str) -> CompileError:
        return self.reporter.error(pos, message)

    def write_out(self, n: int, pos: Pos, what: str) -> None:
        """Count ``n`` more nodes written out for ``what`` at ``pos`` (a use of a definition, an aggregate):
        an error there when the program's written-out definitions and aggregates pass
        :data:`~serq_frontend.consts.MAX_WRITTEN` nodes in all (checked before they are made)."""
        from .consts import MAX_WRITTEN

        self.written += n
        if self.written > MAX_WRITTEN:
            raise self.error(pos, f"{what} writes out {n} nodes, and the program's definitions, aggregates, "
                             f"queue calls and requests of its server written out make more than {MAX_WRITTEN} "
                             "nodes (expressions and statements) in all; compute a part once with `set`")

    # -- constants ---------------------------------------------------------------------------------

    def declared_twice(self, name: str, first: Pos, second: Pos) -> str:
        """``NAME is declared twice (first at L:C)``, with the sugar layer and its plugin that declared either,
        when a plugin's layer did (:attr:`layer_declared`): it named neither, and the place of a layer's
        declaration is the layer's statement, which declares nothing the user wrote."""
        by_first = self.layer_declared.get((name, first.line, first.col))
        by_second = self.layer_declared.get((name, second.line, second.col))
        out = f"`{name}` is declared twice (first at {first.line}:{first.col}"
        if by_first is not None:
            out += f", by {by_first} for its statement there"
        out += ")"
        if by_second is not None:
            out += f"; here by {by_second} for its statement"
        return out

    def set_module(self, module: A.Module) -> None:
        self.module = module
        self._lets = None
        self._block_values = {}
        self._pools = None

    def _later_let(self, node: Any, item: A.Let) -> A.Let | None:
        """The ``let`` after ``item`` that the name ``node`` gives, or None."""
        assert self.module is not None
        name = getattr(node, "dotted", None)
        seen = False
        for other in self.module.items:
            if other is item:
                seen = True
            elif seen and isinstance(other, A.Let) and other.name == name:
                return other
        return None

    def _a_definition(self, name: str) -> str:
        """``; `rate` is an expression definition: give its body with --def rate`` when ``name``, given to
        ``--set``, names an expression definition of the program (or of a library it uses) rather than a let
        (a definition's body is replaced by ``--def``, a let's value by ``--set``), else nothing."""
        if name not in self.notes.get("expression_defs", ()):
            return ""
        return f"; `{name}` is an expression definition: give its body with {self.option_name('def', clipped(name))}"

    def _not_a_let(self, name: str) -> str:
        """``; `kv` is a pool, not a `let`: …`` when ``name``, given to ``--set``, names a pool, a stage, a queue
        or a gauge the program declares (a let's value is what --set gives; such a declaration's settings read
        lets), else nothing. It was the hint of a name close to it (``--set svc`` of a stage svc: "did you mean
        `service`, an expression definition"), or no word of what the name is."""
        assert self.module is not None
        examples = {A.PoolItem: ("pool", "`let blocks = 100;` and `cap blocks;`"),
                    A.StageItem: ("stage", "`let c = 2;` and `fifo(c)`"),
                    A.QueueItem: ("queue", "`let n = 2;` and `queue q[n]`")}
        for item in self.module.items:
            if getattr(item, "name", None) != name:
                continue
            if isinstance(item, A.GaugeItem):
                return f"; `{clipped(name)}` is a gauge, not a `let`, whose value alone is given so: a gauge is measured"
            if type(item) in examples:
                kind, example = examples[type(item)]
                return (f"; `{clipped(name)}` is a {kind}, not a `let`, whose value alone is given so: a {kind}'s "
                        f"setting is given through a let it reads ({example})")
        return ""

    def lets(self) -> dict[str, float]:
        """The value of every ``let`` (``--set`` applied), in declaration order."""
        if self._lets is None:
            self._lets = self._compute_lets()
        return self._lets

    def _compute_lets(self) -> dict[str, float]:
        out: dict[str, float] = {}
        self._lets_now = out
        try:
            return self._fold_lets(out)
        finally:
            self._lets_now = None

    def _fold_lets(self, out: dict[str, float]) -> dict[str, float]:
        assert self.module is not None
        self.let_pos = {}
        self.let_name_pos = {}
        self.let_sets = {}
        names = [item.name for item in self.module.items if isinstance(item, A.Let)]
        for name in self.sets:  # (before any is put in a let's place: this error notes none)
            if name not in names:
                raise self.error(None, f"{self.option_name('set', clipped(name))}: the program has no `let {name}`"
                                 + (self._a_definition(name) or self._not_a_let(name)
                                    or knob_hint(name, names, self.notes.get("expression_defs", ()), "let",
                                              self.option_name)))
        for item in self.module.items:
            if not isinstance(item, A.Let):
                continue
            if item.name in out:
                raise self.error(A.name_at(item), self.declared_twice(item.name, self.let_pos[item.name], item.pos))
            self.let_pos[item.name] = item.pos
            self.let_name_pos[item.name] = A.name_at(item)
            if item.name in self.sets:
                out[item.name] = self.sets[item.name]
                self.let_sets[item.name] = (item.name,)
                continue
            self.let_sets[item.name] = self._sets_read(item.value)
            self._let_now = item
            try:
                v = fold(item.value, out, self.block_of)
            except NotConstant as e:
                if e.node is None:  # (what a plugin's builder built: named, at its place)
                    from . import _missing_expression

                    raise _missing_expression(self, item) from None
                later = self._later_let(e.node, item)
                if later is not None:
                    raise self.error(e.node.pos, f"`let {item.name}` reads `{later.name}`, declared after it (at "
                                     f"{later.pos.line}:{later.pos.col}); a `let` reads only the ones before "
                                     "it: declare it first") from None
                unknown = self.unknown_function(e.node)
                if unknown is not None:
                    raise self.error(e.node.pos, unknown) from None
                raise self.error(e.node.pos, f"`let {item.name}` is not a constant: it reads {describe(e.node)}"
                                 f"{truth_hint(getattr(e.node, 'dotted', None)) or _close_let(e.node, out)}") from None
            except BadConstant as e:
                raise self.error(e.node.pos, e.message) from None
            finally:
                self._let_now = None
            if math.isnan(v):
                raise self.error(item.value.pos, f"`let {item.name}` evaluates to NaN")
            out[item.name] = v
        return out

    def _sets_read(self, e: Any) -> tuple[str, ...]:
        """The ``--set`` names whose values the constant expression ``e`` reads, through the lets it names."""
        names: list[str] = []
        for x in A.walk_expr(e):
            if isinstance(x, A.Var) and x.simple is not None:
                names += [n for n in self.let_sets.get(x.simple, ()) if n not in names]
        return tuple(names)

    def given(self, e: Any) -> str:
        """`` (`lam` is 0, given in place of its `let` at 8:1)`` for each let overridden from outside the
        program (``--set``, a sweep's point) that the constant expression ``e`` reads, or ``""``: a value a
        refusal names that the source does not show says where it came from."""
        if self._lets_now is None:  # not while the lets are computed: the ones ``e`` reads are there already
            self.lets()
        said = [f"`{n}` is {fmt_num(self.sets[n])}, given in place of its `let` at "
                f"{self.let_pos[n].line}:{self.let_pos[n].col}" for n in self._sets_read(e)]
        return f" ({'; '.join(said)})" if said else ""

    def sets_noted(self, e: CompileError) -> CompileError:
        """``e`` with a note at the ``let`` of each ``--set`` put in its place before ``e`` was raised
        (``FILE:LINE:COL: note: `lam` is 0, given by --set lam``, the let's line and a caret): an error a
        value from outside the program caused, at a line that does not read it (a run over a ps stage whose
        rate a ``--set`` made 0), named the source's value alone. One that :meth:`given` has said already,
        in the message, is not noted again; nor is any before the lets are folded (a parse error, an unknown
        ``--set``)."""
        from serq.loading import set_note

        for name, value in self.sets.items():
            pos = self.let_name_pos.get(name)
            if pos is None or f"`{name}` is {fmt_num(value)}, given in place of its `let`" in e.message:
                continue
            e = self.reporter.noted(e, pos, set_note(name, value, self.option_name))
        return e

    def warn_once(self, pos: Any, message: str) -> None:
        """A warning at ``pos``, once however often the place is linked or folded."""
        key = (getattr(pos, "file", None), getattr(pos, "line", None), getattr(pos, "col", None), message)
        if key not in self._warned:
            self._warned.add(key)
            self.reporter.warn(pos, message)

    def const(self, e: Any, what: str) -> float:
        """The value of a constant position; an error naming ``what`` when it is not a constant."""
        try:
            v = fold(e, self.lets(), self.block_of)
        except NotConstant as x:
            unknown = self.unknown_function(x.node)
            if unknown is not None:
                raise self.error(x.node.pos, unknown) from None
            raise self.error(x.node.pos, f"{what} must be a constant (numbers and `let`s): it reads "
                             f"{describe(x.node)}{_close_let(x.node, self.lets())}") from None
        except BadConstant as x:
            raise self.error(x.node.pos, x.message) from None
        if math.isnan(v):
            raise self.error(e.pos, f"{what} evaluates to NaN{self.given(e)}")
        return v

    def block_of(self, e: A.Call, lets: dict[str, float]) -> float:
        """``blocksize(P)`` as a constant: the block of pool ``P`` (1 without ``block``), its declaration's
        ``block`` folded over ``lets``. language.txt §2 folds it at link time, so a ``let`` may read it, and
        so may every constant position (a cap, another pool's block, the run block), as the linker's
        expressions do (``Linker.call``). A block that comes back to itself, through a ``let`` or another
        pool's ``blocksize``, is a cycle, refused at the name that closes it; a ``let`` reading a block that
        reads a ``let`` declared after it is refused as a ``let`` reading that ``let`` would be."""
        if len(e.args) != 1:
            raise BadConstant(e, takes("blocksize", len(e.args)))
        target = e.args[0]
        if not isinstance(target, A.Var):
            raise BadConstant(e, "`blocksize(…)` reads a pool: its first argument names one")
        assert self.module is not None
        name = target.dotted
        # the program's lets: a pool's block reads no aggregate's index that `lets` holds around the call
        base = self._lets if self._lets is not None else (self._lets_now if self._lets_now is not None else lets)
        self._check_member(target, lets)
        if name in self._block_values:
            return self._block_values[name]
        pools, _ = self._pool_table()
        item = pools.get(name)
        if item is None:
            if any(isinstance(x, A.StageItem) and x.name == name for x in self.module.items):
                raise BadConstant(target, f"`{name}` is a stage, and a pool is wanted here")
            queue = any(isinstance(x, A.QueueItem) and x.name == name for x in self.module.items)
            raise BadConstant(target, no_pool(target, pools, queue))
        opts = [o for o in item.opts if o.kind == "block"]
        if not opts:
            return 1.0
        block = opts[-1].args[0]
        chain = self._blocks_now
        if any(n == name for n, _ in chain):
            raise BadConstant(e, self._cycle(chain[[n for n, _ in chain].index(name):], e, pools))
        chain.append((name, e))
        try:
            value = fold(block, base, self.block_of)
        except NotConstant as x:
            let = self._let_now
            read = getattr(x.node, "simple", None)
            if let is not None and read is not None and read not in base:
                if read == let.name:
                    steps = [f"`let {let.name}` reads `blocksize({chain[0][0]})`"]
                    raise BadConstant(x.node, self._cycle(chain, x.node, pools, steps)) from None
                later = self._later_let(x.node, let)
                if later is not None:
                    raise BadConstant(x.node, f"`let {let.name}` reads `blocksize({chain[0][0]})`, and the block of "
                                      f"pool `{name}` reads `{later.name}`, declared after `let {let.name}` (at "
                                      f"{later.pos.line}:{later.pos.col}); a `let` reads only the ones before it: "
                                      "declare it first") from None
            raise
        finally:
            chain.pop()
        if not (value > 0 and math.isfinite(value)):
            # the pool's own refusal, at its block: a `let` reading it would say only that it is NaN
            said = "evaluates to NaN" if math.isnan(value) else \
                f"must be a positive, finite number of units, not {fmt_num(value)}"
            raise BadConstant(block, f"the block of pool `{name}` {said}{self.given(block)}")
        self._block_values[name] = value
        return value

    def _pool_table(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The program's pools by name, a queue's as ``Q.kv`` (the lets are folded before the queues are
        written out as pools), and the size of the family each belongs to (its expression, or None)."""
        assert self.module is not None
        key = (id(self.module.items), len(self.module.items))
        if self._pools is not None and self._pools[0] == key:
            return self._pools[1], self._pools[2]
        pools: dict[str, Any] = {}
        sizes: dict[str, Any] = {}
        for x in self.module.items:
            if isinstance(x, A.PoolItem):
                pools[x.name], sizes[x.name] = x, x.size
        for q in self.module.items:
            if isinstance(q, A.QueueItem):
                for x in q.pools:
                    pools[f"{q.name}.{x.name}"], sizes[f"{q.name}.{x.name}"] = x, q.size
        self._pools = (key, pools, sizes)
        return pools, sizes

    def _check_member(self, target: A.Var, lets: dict[str, float]) -> None:
        """The member ``blocksize`` names, as a reference to a pool names it (``Linker.ref``): one index at
        most, a whole number below the family's size. An index that is not a constant is no constant's."""
        idx = target.indexes()
        if not idx:
            return
        if len(idx) > 1:
            raise BadConstant(target, f"`{target.dotted}` is indexed twice")
        k = fold(idx[0], lets, self.block_of)
        _, sizes = self._pool_table()
        if target.dotted not in sizes or target.dotted in self._sizes_now:
            # the unknown pool is told by the caller; a member named in its own family's size
            # (`pool m[blocksize(m[1])]`) is checked against the size that size folds to, once it has
            return
        if sizes[target.dotted] is None:  # one pool, not a family of one (as a reference is told)
            head = target.dotted.split(".")[0]
            queue = head if "." in target.dotted and any(
                isinstance(x, A.QueueItem) and x.name == head for x in (self.module.items if self.module else ())) else None
            if k == 0:  # the one pool, as Linker._no_family reads `kv[0]`: told as a warning
                self.warn_once(idx[0].pos, not_a_family(target.dotted, "pool", queue, zero=True))
                return
            raise BadConstant(idx[0], not_a_family(target.dotted, "pool", queue))
        size = 1.0
        if sizes[target.dotted] is not None:
            self._sizes_now.add(target.dotted)
            try:
                size = fold(sizes[target.dotted], lets, self.block_of)
            except (NotConstant, BadConstant):
                return  # the size is refused where the family is declared
            finally:
                self._sizes_now.discard(target.dotted)
        if not (1 <= size <= MAX_MEMBERS and size == int(size)):
            return  # no family's size (0, 1.5, inf, NaN, 2**40): refused where the family is declared
        if not 0 <= k < size or k != int(k):  # range first: int(inf) and int(nan) raise
            raise BadConstant(idx[0], f"`{target.dotted}[{fmt_num(k)}]`: `{target.dotted}` has members 0 … "
                              f"{fmt_num(size - 1)}")

    @staticmethod
    def _cycle(chain: list[tuple[str, Any]], last: Any, pools: dict[str, Any], steps: list[str] | None = None) -> str:
        """The words of a cycle of constants: each pool's block of ``chain`` reads the next ``blocksize``, the
        last one reads ``last`` (a ``blocksize`` call, or the name of the ``let`` the cycle began at)."""
        steps = list(steps or [])
        for k, (name, _) in enumerate(chain):
            nxt = chain[k + 1][1] if k + 1 < len(chain) else last
            what = f"`blocksize({nxt.args[0].dotted})`" if isinstance(nxt, A.Call) else f"`{nxt.dotted}`"
            at = pools[name].pos
            steps.append(f"the block of pool `{name}` (declared at {at.line}:{at.col}) reads {what}")
        if len(steps) > 2 * _CYCLE_ENDS:
            # a long cycle is told by its two ends: its message stays a few lines long
            steps = (steps[:_CYCLE_ENDS] + [f"{len(steps) - 2 * _CYCLE_ENDS} more blocks each reading the next"]
                     + steps[-_CYCLE_ENDS:])
        return ("a cycle of constants: " + ", and ".join(steps)
                + "; a constant cannot be computed from itself: give one of them a number or a `let` of its own")

    def const_positive(self, e: Any, what: str, unit: str) -> float:
        """A constant that must be above 0 and finite (a pool's ``block``, ``arrive poisson``'s rate): one
        that is not is refused saying what is wanted, ``a positive, finite number of UNIT``, and what it is
        (``inf`` is positive: "must be a positive number" of ``block inf`` was not what was wrong)."""
        v = self.const(e, what)
        if not (v > 0 and math.isfinite(v)):
            raise self.error(e.pos, f"{what} must be a positive, finite number of {unit}, not {fmt_num(v)}"
                             f"{self.given(e)}")
        return v

    def const_int(self, e: Any, what: str, *, minimum: int = 1) -> int:
        v = self.const(e, what)
        if not math.isfinite(v) or v != int(v) or v < minimum:
            raise self.error(e.pos, f"{what} must be an integer of at least {minimum}, not {fmt_num(v)}"
                             f"{self.given(e)}")
        return int(v)

    # -- files -------------------------------------------------------------------------------------

    def library_paths(self) -> list[Path]:
        if callable(self._library_paths):
            self._library_paths = list(self._library_paths())
        return list(self._library_paths or [])

    def unknown_function(self, e: Any) -> str | None:
        """The message for ``e`` when it is a call of a name that is no function, observable or expression
        definition (`log(2)`, a definition's name misspelt), else None: the linker's words wherever the call
        stands, a constant's too (a `let` reading `log(2)` was "not a constant: it reads `log(…)`")."""
        if not isinstance(e, A.Call):
            return None
        name = e.name
        defs = self.notes.get("expression_defs", ())
        if name in FUNCTIONS or name in OBSERVABLES or name in ("member", "blocksize") or name in defs:
            return None
        if name in DIALECT:
            return f"`{name}(…)` is not part of this language" + (f"; {DIALECT[name]}" if DIALECT[name] else "")
        if name in KEYWORDS and name not in FUNCTION_ALIASES:  # (`cap(kv)` is told what to write instead)
            # `set x = tool(1);`, `run s (run (1));`: a word of the language where an expression stands, read as a
            # name (it was "unknown function `tool`", as though a definition of that name were missing)
            return (f"`{name}` is one of the language's words, not a function: a statement, a clause or an item "
                    f"begins with it, and no definition may take its name")
        return f"unknown function `{name}`" + (self.library_hint(name)
                                                or function_hint(name, [*FUNCTIONS, *OBSERVABLES, "member", *defs]))

    def library_hint(self, name: str) -> str:
        """For an unknown definition ``name``: the words naming the library on the library path that
        defines it (``; the library `vllm.sq` defines it: …``), or nothing."""
        pattern = re.compile(rf"^[ \t]*def[ \t]+{re.escape(name)}[ \t]*\(", re.M)
        try:
            folders = self.library_paths()
        except (Exception, SystemExit):  # noqa: BLE001 - the folders a plugin fails to give: no hint
            # (the user's error is the message: a plugin's serq_frontend_library_paths that raises was told in
            # its place, for a program that uses no library, where a hint was all the folders were asked for;
            # a `use` asks again, and is the plugin's message)
            return ""
        for folder in folders:
            try:
                files = sorted(Path(folder).glob("*.sq"))
            except OSError:
                continue
            for f in files:
                try:  # a regular file only: a FIFO named x.sq in the folder blocked every such error for ever
                    text = read_input(f, limit=MAX_SOURCE).decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if pattern.search(text):
                    return (f"; the library `{f.name}` defines it ({f}): write `use \"{f.name}\";` before "
                            "its first use")
        return ""

    def parse_file(self, path: Path, name: str, at: Pos | None = None) -> A.Module:
        """The library at ``path``, parsed; a file that cannot be read, or whose name is no text the IR can
        hold (:func:`serq.files.name_not_text`: a library folder named in another encoding), is an error at
        ``at`` (its `use`)."""
        try:
            data = read_input(path, limit=MAX_SOURCE, what="a serQ source")
        except OSError as e:
            raise self.error(at, f"{name}: cannot read: {e.strerror or e}") from None
        problem = name_not_text(name)
        if problem is not None:
            raise self.error(at, f"{shown_name(name)}: {problem}, and a program's IR names the files of its "
                             "libraries as text; rename it or its folder")
        text = decode_source(data, name)
        if self.recorder is not None:
            self.recorder.read(path, text)
        self.sources.add(name, text)
        items = self.parser.parse(text, name, self.reporter)
        return self._within_nesting(A.Module(items, name))

    def parse_expr(self, text: str, name: str) -> Any:
        """A ``--def`` body, ``name`` the option that gave it (``--def f``). One that does not parse and has a
        `,` outside parentheses (``--def order=0,prompt``, a list written as ``--set`` takes one) is told at that
        `,` as such: a body is one expression, and a sweep's bodies are given one ``--def`` each (the parser
        said ``unexpected `,` (expected the end of the file)``)."""
        self.sources.add(name, text)
        try:
            return self._within_nesting(self.parser.parse(text, name, self.reporter, start="expr_start"))
        except CompileError:
            comma = _top_level_comma(text)
            if comma is None:
                raise
            each = f"{name}=A {name}=B" if name.startswith("--") else "a list of bodies"
            raise self.error(Pos(name, *comma), "a definition's body is one expression, and this `,` is outside "
                             f"any parentheses: several bodies are several values of a sweep, each given on its "
                             f"own ({each})") from None

    def _within_nesting(self, tree: Any) -> Any:
        """``tree`` (a library or a ``--def`` body) held to the nesting limit the program's own text is
        held to, at its deepest node: one nested past the recursion limit of the passes after parsing was
        the unlocated "the program nests too deeply to compile", naming the program."""
        from . import _check_nesting

        _check_nesting(tree, self)
        return tree


def _top_level_comma(text: str) -> tuple[int, int] | None:
    """The line and column of the first `,` of ``text`` outside every parenthesis and bracket, None when
    there is none (a comment's are not counted)."""
    depth, line, col, i = 0, 1, 1, 0
    while i < len(text):
        c = text[i]
        if text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0:
            return line, col
        if c == "\n":
            line, col = line + 1, 1
        else:
            col += 1
        i += 1
    return None


#: the steps told at each end of a long cycle of constants (:meth:`Context._cycle`)
_CYCLE_ENDS = 3


def not_a_family(name: str, kind: str, queue: str | None = None, zero: bool = False) -> str:
    """The error of an index on ``name``, a pool or stage (``kind``) declared without a size: one, not a family
    of one (``Linker.ref``; ``blocksize(kv[0])``); ``queue``, the queue whose pool or stage it is, if any.
    ``zero``: the warning of the index 0, read as that one pool or stage."""
    if queue is not None:
        how = f"declare the queue a family, `queue {queue}[N] …`"
    elif kind == "pool":
        how = f"declare a family, `pool {name}[N] {{ … }}`"
    else:
        how = f"declare a family, `stage {name}[N] : …;`"
    if zero:
        return (f"`{name}[0]`: `{name}` is one {kind}, not a family (declared without a size): the index is read "
                f"as `{name}` itself; name it `{name}`, or {how}")
    return (f"`{name}[…]`: `{name}` is one {kind}, not a family (declared without a size), and takes no index; "
            f"name it `{name}`, or {how}")


def no_pool(target: A.Var, pools: Any, queue: bool) -> str:
    """The refusal of a pool reference ``target`` that names no pool of ``pools`` (the program's, a queue's as
    ``Q.kv``), where ``queue`` says whether a queue has its name: a queue offers its first pool, as a near
    name is offered (``blocksize(Q)`` meant ``blocksize(Q.kv)``, ``used(Q[1])`` ``used(Q[…].kv)``), another
    name the closest pool."""
    name = target.dotted
    if queue:
        own = [p[len(name):] for p in pools if isinstance(p, str) and p.startswith(f"{name}.")]
        head = f"{name}[…]" if target.indexes() else name
        return f"`{name}` is a queue, and a pool is wanted here" + (f" (did you mean `{head}{own[0]}`?)"
                                                                     if own else "")
    return f"unknown pool `{name}`" + did_you_mean(name, pools)


def fmt_num(v: float) -> str:
    """A constant as the linker's messages show it: every digit of it (serq_ir.rules.show_number, exact)."""
    return show_number(v, exact=True)


def _close_let(node: Any, lets: Any) -> str:
    """For a constant that reads a name no `let` gives: the closest `let`'s name, if one is close."""
    name = getattr(node, "dotted", None)
    return did_you_mean(name, lets) if isinstance(name, str) and name not in lets else ""
