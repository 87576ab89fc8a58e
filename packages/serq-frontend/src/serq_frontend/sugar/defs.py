"""Definitions and libraries: ``def``, ``use``, and their expansion where they are used.

A use is replaced by the body, each parameter by its argument; every node of the expansion keeps its
place in the body and remembers the use (a diagnostic in it ends with a note naming the use).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from serq.errors import knob_hint

from .. import ast as A
from ..diagnostics import CompileError, Pos, did_you_mean
from ..names import (
    DIALECT,
    FUNCTIONS,
    KEYWORDS,
    LIVE_OBSERVABLES,
    TRACE_ATTRIBUTES,
    declared_not_defined,
    not_in_language,
    takes,
    word_kind,
)
from ..parser import (
    _BEGIN_WORDS,
    _CLAUSE_WORDS,
    ADMISSION_ALONE,
    before_block,
    grammar_text,
    keyword_begins_nothing,
)
from . import SugarLayer
from .aggregates import own_index


def _def_item(b: Any, p: Pos, c: list[Any], expr: Any, body: list[Any] | None) -> A.DefItem:
    """A definition: its place is its `def`; where its name and each parameter are written is kept for a
    message about one of them (the caret under the offending name)."""
    params = c[1] or []
    return A.DefItem(str(c[0]), [n for n, _ in params], expr, body, p, Pos(b.file, c[0].line, c[0].column),
                     [at for _, at in params])


BUILDERS = {
    "def_expr": lambda b, p, c: _def_item(b, p, c, c[2], None),
    "def_block": lambda b, p, c: _def_item(b, p, c, None, c[2]),
    "use_item": lambda b, p, c: A.UseItem(str(c[0])[1:-1], p),
    "s_defcall": lambda b, p, c: A.SDefCall(str(c[0]), c[1] or [], p),
    "params": lambda b, p, c: [(str(x), Pos(b.file, x.line, x.column)) for x in c],
}


def _not_folders(candidates: list[Path]) -> str:
    """``; /lib/mm.sq is a file, not a folder`` when a folder searched is something else that is there (a
    plugin's ``serq_frontend_library_paths`` or ``SERQ_PATH`` naming a library file rather than its folder:
    ``no such library (looked in /lib/mm.sq)`` alone read as if the file were missing)."""
    import os

    odd: list[str] = []
    for c in candidates:
        folder = c.parent
        try:
            if os.path.exists(folder) and not os.path.isdir(folder) and str(folder) not in odd:
                odd.append(str(folder))
        except (OSError, ValueError):  # (a name the system refuses to look up)
            continue
    if not odd:
        return ""
    more = f" (and {len(odd) - 1} more of the folders)" if len(odd) > 1 else ""
    return f"; {_folders([Path(odd[0])])} is a file, not a folder{more}"


def _shown(text: str) -> str:
    """``text`` as a message quotes it (:func:`serq.errors.clipped`: a file name of megabytes is not repeated
    whole), where it is quoted outside backquotes too."""
    from serq.errors import clipped

    return clipped(text)


def names_read(e: Any) -> set[str]:
    out = set()
    for x in A.walk_expr(e):
        if type(x) is A.Var:
            out.add(x.parts[0][0])
            if len(x.parts) > 1:
                out.add(x.dotted)
    return out


def reads_live(e: Any) -> A.Var | A.Call | None:
    for x in A.walk_expr(e):
        if type(x) is A.Var and x.simple == "now":
            return x
        if type(x) is A.Call and x.name in LIVE_OBSERVABLES:
            return x
    return None


def body_exprs(d: A.DefItem) -> list[Any]:
    """The expressions of the body of ``d``, every statement's included."""
    roots: list[Any] = [d.expr] if d.expr is not None else []
    for s in A.walk_stmts(d.body or []):
        roots.extend(A.stmt_exprs(s))
    return roots


def param_reads(d: A.DefItem, terms: Callable[[A.Agg], int] = lambda a: 2) -> dict[str, int]:
    """How often the body of ``d`` reads each of its parameters (as a name, a request's gateway or a
    queue call's queue). A read in the body of an aggregate is one per term it writes out (``terms``: how
    many an aggregate writes). A name that came from a definition the body uses is not a parameter's
    (:func:`own_name`)."""
    counts = {p: 0 for p in d.params}
    for s in A.walk_stmts(d.body or []):
        if isinstance(s, A.SRequest) and s.gateway in counts and own_name(s):
            counts[s.gateway] += 1
        if isinstance(s, A.SQCall) and s.queue in counts and own_name(s):
            counts[s.queue] += 1

    def count(e: Any, times: int) -> None:
        if type(e) is A.Agg:
            count(e.n, times)
            count(e.body, times * terms(e))
            return
        if type(e) is A.Var and e.parts[0][0] in counts and own_name(e):
            counts[e.parts[0][0]] += times
        for c in A.expr_children(e):
            count(c, times)

    for r in body_exprs(d):
        count(r, 1)
    return counts


def expr_depth(e: Any) -> int:
    """How deep the expression ``e`` nests (1: a leaf), walked without recursion."""
    return _depths([(e, 1)], [], ())[0]


def block_depth(stmts: list[Any]) -> int:
    """How deep the block ``stmts`` nests (each statement a level inside its block, each expression node one
    inside its statement; 0: empty), walked without recursion."""
    return _depths([], [(s, 1) for s in stmts], ())[0]


def shared_size(e: Any) -> tuple[int, int]:
    """The nodes and depth of the expression ``e`` as a tree, walking each node once: a value substituted into
    another is shared, not copied (a parameter's argument, a binding's value), so a tree of 2**40 nodes may be
    a few hundred objects, which a walk of the tree never ends on."""
    memo: dict[int, tuple[int, int]] = {}
    todo = [(e, False)]
    while todo:
        x, ready = todo.pop()
        if id(x) in memo:
            continue
        kids = A.expr_children(x)
        if ready:
            n, d = 1, 1
            for c in kids:
                cn, cd = memo[id(c)]
                n, d = n + cn, max(d, cd + 1)
            memo[id(x)] = (n, d)
        else:
            todo.append((x, True))
            todo.extend((c, False) for c in kids if id(c) not in memo)
    return memo[id(e)]


def param_depths(d: A.DefItem) -> tuple[int, dict[str, int]]:
    """How deep the body of ``d`` (as stored: the definitions it uses written out) nests, each statement a level
    inside the block it is in and each expression node a level inside its statement (an expression
    definition's body is at level 1), and the level of the deepest read of each of its parameters (0: no read),
    so that the depth a use writes out is known from its arguments' before it is made (:meth:`Expander.write_out`)."""
    if d.body is None:
        return _depths([(d.expr, 1)], [], d.params)
    return _depths([], [(s, 1) for s in d.body], d.params)


def _depths(exprs: list[tuple[Any, int]], stmts: list[tuple[Any, int]], params: Any) -> tuple[int, dict[str, int]]:
    at = {p: 0 for p in params}
    deepest = 0
    while stmts:
        s, k = stmts.pop()
        deepest = max(deepest, k)
        exprs.extend((e, k + 1) for e in A.stmt_exprs(s))
        for b in A.blocks_of(s):
            stmts.extend((x, k + 1) for x in b)
    while exprs:
        e, k = exprs.pop()
        deepest = max(deepest, k)
        if at and type(e) is A.Var and e.parts[0][0] in at and own_name(e):
            at[e.parts[0][0]] = max(at[e.parts[0][0]], k)
        exprs.extend((c, k + 1) for c in A.expr_children(e))
    return deepest, at


def own_name(x: Any) -> bool:
    """Whether the name ``x`` reads (a :class:`~serq_frontend.ast.Var`'s head, a request's gateway, a queue
    call's queue) is of the text of the body it stands in, where a parameter of that body replaces it: a
    name that came into the body from a definition the body uses has the place of that use in its
    ``uses``, and is that definition's, the program's (program-reference.txt, def: "Only the parameters are
    the definition's own"). A gateway or queue a parameter of the used definition was given is the
    argument's, and has the argument's place (:func:`serq_frontend.ast.name_place`)."""
    return A.own_text(A.name_place(x) if isinstance(x, (A.SRequest, A.SQCall)) else x.pos)


#: how deep definitions may expand inside one another (a definition whose body uses one that uses one …)
MAX_DEF_DEPTH = 64

#: how deep libraries may use one another (a library that uses one that uses one …): a chain of 9 000 was a
#: RecursionError, said as the unlocated "the program nests too deeply to compile"
MAX_USE_DEPTH = 1000

#: how deep what a use of a definition writes out may nest, with the blocks the use is in: as deep as the
#: parsed program may (serq_frontend.MAX_NESTING), which the passes after this one walk by recursion. A body
#: that uses a definition on what another use of it gives (``def f1(x) = f0(f0(x));`` … ``f15``) doubles the
#: depth at each step, far below the limit on the nodes written out; 2**15 deep was a RecursionError, said as
#: the unlocated "the program nests too deeply to compile"; so were six statement definitions, each using the
#: one before inside 900 branches. (The linker refuses an expression past serq_ir.rules.MAX_EXPR_DEPTH and
#: blocks past MAX_BLOCK_DEPTH where the program uses them.)
MAX_EXPANDED_DEPTH = 1000

#: what nests inside what, as a refusal of a depth past :data:`MAX_EXPANDED_DEPTH` says it: in an expression, and
#: in a block (its statements and their expressions)
IN_EXPRESSIONS = "operators, calls and conditionals inside one another"
IN_BLOCKS = "blocks, statements and expressions inside one another"


def too_deep(ctx: Any, pos: Any, head: str, deep: int, inside: str, after: str = "") -> Exception:
    """The refusal at ``pos`` of what writes out something that nests ``deep``, past :data:`MAX_EXPANDED_DEPTH` (one
    rule for a definition's use, a queue entry's call and its arguments, and an ``at admission`` binding):
    ``HEAD DEEP deep, more than 1000 (INSIDE)AFTER; `` and the hint of the parser's own nesting limit."""
    from .. import _nesting_hint

    return ctx.error(pos, f"{head} {deep} deep, more than {MAX_EXPANDED_DEPTH} ({inside}){after}; {_nesting_hint()}")


def first_sets(stmts: list[Any]) -> dict[str, Pos]:
    """The attributes a statement definition's body (as stored: the definitions it uses written out) sets
    before anything in it reads them, each with the place of that first setting: a value the caller gave
    such an attribute before the use is overwritten unread (lib/vllm.sq's ``vllm_request`` sets ``runs``
    to 0 at its top). Counted are a ``set`` and a hold's admission binding where the body surely comes to
    them: its own statements and, once the hold is admitted, a hold's block; a ``set`` in a branch or a
    loop may not run, and one that reads the attribute (``set n = n + 1``) takes the caller's value."""
    out: dict[str, Pos] = {}
    read: set[str] = set()

    def wrote(name: str, value: Any, pos: Pos) -> None:
        read.update(names_read(value))
        if name not in read and name not in out:
            out[name] = pos
        read.add(name)  # (later ones overwrite the body's own value)

    def scan(block: list[Any]) -> None:
        for s in block:
            if isinstance(s, A.SSet):
                wrote(s.name, s.value, s.pos)
            elif isinstance(s, A.SHold):
                for b in s.bindings:  # bound at the admission, before the amounts are taken
                    wrote(b.name, b.value, b.pos)
                for x in A.stmt_exprs(s):  # (its pools' amounts included)
                    read.update(names_read(x))
                scan(s.body)
            else:
                for x in A.walk_stmts([s]):
                    for e in A.stmt_exprs(x):
                        read.update(names_read(e))

    scan(stmts)
    return out


class Expander:
    def __init__(self, module: A.Module, ctx: Any):
        self.ctx = ctx
        self.module = module
        self.defs: dict[str, A.DefItem] = {}
        self.all_defs: dict[str, Pos] = {}
        self.taken = A.declared_names(module)
        for item in module.items:
            if isinstance(item, A.DefItem):
                self.all_defs.setdefault(item.name, item.pos)
        self.overridden: set[str] = set()
        #: how deep each definition's expansion nests definitions (1: its body uses none), and the deepest
        #: use in the body being expanded
        self.depth: dict[str, int] = {}
        self._deepest, self._defining = 0, False
        #: the definition whose body is being expanded
        self._current: str | None = None
        #: each definition's body as stored (expanded): its nodes, and how often it reads each parameter
        self.size: dict[str, int] = {}
        self.reads: dict[str, dict[str, int]] = {}
        #: how deep its expressions nest, and how deep the deepest read of each parameter sits (0: none)
        self.nesting: dict[str, tuple[int, dict[str, int]]] = {}
        #: each statement definition's attributes its body sets before reading them (:func:`first_sets`)
        self.first_sets: dict[str, dict[str, Pos]] = {}
        #: the attributes the text being expanded (a workload block, a definition's body) has set so far,
        #: each at its first own `set` since the last use that overwrote it; and how deep blocks nest
        self._set_so_far: dict[str, Pos] = {}
        self._nest = 0
        #: the libraries being read (resolved path, the name their `use` gave), outermost first: a `use` of one
        #: of them closes a cycle of uses (:meth:`use`)
        self._reading: list[tuple[str, str]] = []

    # -- definitions -------------------------------------------------------------------------------

    def define(self, d: A.DefItem) -> None:
        ctx = self.ctx
        name = d.name
        # a message about the name or a parameter is at that name (the caret under it), not at `def`
        at = d.name_pos or d.pos
        kind = word_kind(name)
        if kind == "keyword":
            raise ctx.error(at, f"`{name}` is a keyword; a definition needs another name")
        if kind == "function":
            raise ctx.error(at, f"`{name}` is a function of the language; a definition needs another name")
        if name in self.taken:
            declared = next((getattr(i, "name_pos", None) or i.pos for i in self.module.items
                             if getattr(i, "name", None) == name and not isinstance(i, A.DefItem)), None)
            if declared is not None and declared.file != at.file:
                # a library's definition the program's own name shadows: said at the library's line, it asked
                # for another name there, which the library's user cannot give; the program's declaration is
                # the one to rename
                raise ctx.error(at, f"`{name}` is {self.taken[name]} of the program (at {declared.at()}), and "
                                "this library defines it too: a definition needs a name of its own, so give the "
                                f"program's {self.taken[name].split()[-1].strip('`')} another name")
            raise ctx.error(at, f"`{name}` is {self.taken[name]}; a definition needs another name")
        if kind == "name":
            raise ctx.error(at, f"`{name}` is a name of the language; a definition needs another name")
        if name in self.defs:
            first = self.defs[name].pos
            raise ctx.error(at, f"`{name}` is defined twice (first at {first.at()})")
        seen = set()
        for i, p in enumerate(d.params):
            if p in KEYWORDS or p in FUNCTIONS:
                raise ctx.error(d.at_param(i), f"`{p}` cannot be a parameter of `{name}`: it is a "
                                f"{'keyword' if p in KEYWORDS else 'function'}")
            if p in seen:
                raise ctx.error(d.at_param(i), f"`{name}` has two parameters named `{p}`")
            seen.add(p)
        if d.body is not None:
            assigned = A.assigned_in(d.body)
            for i, p in enumerate(d.params):
                if p in assigned:
                    raise ctx.error(d.at_param(i), f"`{p}` is a parameter of `{name}` and its body assigns "
                                    "it; a parameter is substituted, so give the attribute another name")
        if name in ctx.defs:
            if d.body is not None:
                raise ctx.error(at, f"{ctx.option_name('def', _shown(name))}: `{name}` is a statement "
                                f"definition; {ctx.option_name('def')} gives an expression definition's body")
            expr = ctx.parse_expr(ctx.defs[name], ctx.option_name("def", _shown(name)))
            d = A.DefItem(name, d.params, expr, None, d.pos, d.name_pos, d.param_pos)
            self.overridden.add(name)
        # the body uses only the definitions before it
        self._deepest, self._defining, self._current = 0, True, name
        try:
            if d.body is not None:
                d = A.DefItem(name, d.params, None, self.block(d.body), d.pos, d.name_pos, d.param_pos)
            else:
                d = A.DefItem(name, d.params, self.expr(d.expr), None, d.pos, d.name_pos, d.param_pos)
        finally:
            self._current = None
        for r in body_exprs(d):  # with the definitions it uses written out
            for x in A.walk_expr(r):
                if type(x) is A.Agg and x.var in d.params and own_name(x):
                    raise ctx.error(x.var_at, f"`{x.op} {x.var} in …`: `{x.var}` is a parameter of `{name}`; a "
                                    "parameter is substituted, so " + own_index(x.op, x.var, d.params))
        self.defs[name] = d
        # a definition's name is a name the program has, which an aggregate's index may not take
        ctx.notes.setdefault("definitions", []).append(name)
        if d.body is None:  # for the linker's hint at an unknown function: the names of the expression definitions
            ctx.notes.setdefault("expression_defs", []).append(name)
        self.depth[name] = self._deepest + 1
        self._defining = False
        self.size[name] = A.expr_size(d.expr) if d.body is None else A.block_size(d.body)
        self.nesting[name] = param_depths(d)  # (before param_reads, which recurses over the body)
        self.reads[name] = param_reads(d, self._terms)
        if d.body is not None:
            self.first_sets[name] = {k: v for k, v in first_sets(d.body).items() if k not in d.params}

    def _terms(self, a: A.Agg) -> int:
        """The terms the aggregate ``a`` writes out, when its count is a number or a constant the lets
        give now; else 2 (at least two, for the rule on arguments that draw)."""
        from ..consts import BadConstant, NotConstant, fold

        try:
            v = fold(a.n, self.ctx.lets())
        except (NotConstant, BadConstant, CompileError):
            return 2
        return int(v) if v == v and 1 <= v <= 10_000 and v == int(v) else 2

    def used(self, name: str, pos: Pos) -> None:
        """A use of the definition ``name`` at ``pos``: refused where definitions would expand more than
        :data:`MAX_DEF_DEPTH` deep inside one another (each expansion copies the ones inside it)."""
        depth = self.depth.get(name, 1)
        if self._defining and depth >= MAX_DEF_DEPTH:
            raise self.ctx.error(pos, f"definitions expand more than {MAX_DEF_DEPTH} deep inside one another "
                                 f"here (`{name}` is {depth} deep already); use `set` for a part")
        self._deepest = max(self._deepest, depth)

    def use(self, u: A.UseItem, base: Path | None) -> None:
        from serq.files import inside, path_resolved, unnamable

        ctx = self.ctx
        if not u.path.endswith(".sq"):
            raise ctx.error(u.pos, f"`use \"{u.path}\"`: a library is a `.sq` file")
        if why := unnamable(u.path):  # (looked up as no file: 'no such library', the file there offered)
            raise ctx.error(u.pos, f"`use \"{_shown(u.path)}\"`: {why}")
        libs = ctx.library_paths()
        roots = ([base] if base is not None else []) + libs
        candidates = [root / u.path for root in roots]
        here = Path(u.pos.file).resolve() if u.pos.file != "<source>" else None
        # A file never uses itself, and `use` wants a library (a file of defs and uses): a program of
        # the same name in the using file's folder (examples/multi-turn/vllm.sq next to vllm_chat.sq)
        # is passed over for the library further along the path.
        files = []
        itself = False  # a candidate was the file the use is in
        odd = None  # the first candidate that exists and is no regular file (a folder, a FIFO, a device)
        # the first candidate the system would not look up (a name too long, a folder this user may not
        # search): passed over as a missing folder is, as a shell's PATH search passes over a folder it
        # cannot search, so a library in a later folder is found; said only when no folder has the library
        unsearched: str | None = None
        for root, c in zip(roots, candidates):
            try:
                real = c.resolve() if c.is_file() else None
                if real is None and odd is None and (c.exists() or c.is_symlink()):  # (a link to nothing too)
                    odd = c
            except OSError as e:  # a name the system refuses to look up (too long, say)
                if unsearched is None:
                    unsearched = f"cannot look for {_shown(str(c))}: {e.strerror or e}"
                real = None
            if ctx.recorder is not None:  # the compile cache checks each candidate again on a hit
                ctx.recorder.candidate(c, real)
            if real is not None and real == here:
                itself = True
            if real is None or real == here:
                continue
            # A program reads only inside the folder it searched (an absolute path, `..` or a link
            # leading out is not read) or inside a library folder (SERQ_PATH widens them)
            if not (inside(real, root) or any(inside(real, lib) for lib in libs)):
                raise ctx.error(u.pos, f"`use \"{u.path}\"` finds {c}, which is outside the folders a "
                                f"program may read ({root} and the library folders; SERQ_PATH adds folders)")
            files.append(c)
        if not files and odd is None and unsearched is not None:  # at the `use`
            raise ctx.error(u.pos, f"`use \"{_shown(u.path)}\"`: {unsearched}")
        if not files and odd is not None:
            # a symbolic link that leads to no file (a loop of links, or one to a file since removed) was "no
            # such library", the hint offering another link of the loop
            what = ("a symbolic link that leads to no file (a loop of links, or a link to a missing file)"
                    if not odd.exists() else "not a regular file")
            raise ctx.error(u.pos, f"`use \"{u.path}\"` finds {odd}, which is {what} (a library "
                            "is a `.sq` file of `def`s and `use`s)")
        if not files:
            where = _folders(c.parent for c in candidates) or "no folder (a program given as text)"
            known = []
            for c in candidates:  # the libraries those folders hold, for the closest name (not the file the
                try:  # use is in, which a file does not use: `use "x.sq";` in u.sq named u.sq)
                    listed = [f for f in c.parent.glob("*.sq") if not f.name.startswith(".")]
                except OSError:
                    continue
                for f in listed:
                    try:  # a library to offer is a file (not a folder, nor a link that leads to none)
                        if not f.is_file() or (here is not None and path_resolved(f) == str(here)):
                            continue
                    except OSError:  # a name the system refuses to look up
                        continue
                    known.append(f.name)
            if itself:
                raise ctx.error(u.pos, f"`use \"{_shown(u.path)}\"` names the file it is in, and a file does "
                                f"not use itself; no other library of that name (looked in {where})")
            raise ctx.error(u.pos, f"`use \"{u.path}\"`: no such library (looked in {where})"
                            + _not_folders(candidates) + did_you_mean(Path(u.path).name, known))
        found = lib = None
        for c in files:
            key, ident = self._library_key(c)
            if key in ctx.libraries_read:
                cycle = next((i for i, (k, _) in enumerate(self._reading) if k == key), None)
                if cycle is not None:
                    # read once, its uses first: a library it uses that uses it back was read with its own
                    # definitions not yet defined, so a body there reading one was `unknown function`, or
                    # not, as the program happened to use one library of the cycle or the other
                    names = [_shown(n) for _, n in self._reading[cycle:]] + [_shown(u.path)]
                    chain = ", which uses ".join(f"`{n}`" for n in names)
                    raise ctx.error(u.pos, f"`use \"{_shown(u.path)}\"` closes a cycle of uses ({chain}): "
                                    "libraries use one another one way only (each is read once, its uses first: "
                                    "in a cycle, one library's definitions are read before the other's they use)")
                return
            if len(self._reading) >= MAX_USE_DEPTH:
                raise ctx.error(u.pos, f"`use \"{_shown(u.path)}\"`: libraries use one another more than "
                                f"{MAX_USE_DEPTH} deep here (each `use` in a library read by a `use`); use the "
                                "libraries the program needs from the program itself")
            try:
                parsed = ctx.parse_file(c, str(c), u.pos)
            except CompileError as e:
                raise self.in_library(e, u) from None
            if all(isinstance(item, (A.DefItem, A.UseItem)) for item in parsed.items):
                found, lib = c, parsed
                break
        if found is None:
            raise ctx.error(u.pos, f"`use \"{u.path}\"` finds {files[0]}, which is a program, not a "
                            "library (it declares more than `def`s and `use`s), and no library of that "
                            "name on the library path")
        ctx.libraries_read.add(key)
        if ident is not None:
            ctx.library_files[ident] = key
        self._reading.append((key, u.path))
        try:
            for item in lib.items:
                if isinstance(item, A.DefItem):
                    self.define(item)
                else:
                    self.use(item, found.parent)
        except CompileError as e:
            raise self.in_library(e, u) from None
        finally:
            self._reading.pop()

    def _library_key(self, c: Path) -> tuple[str, tuple[int, int] | None]:
        """The name a library file is read once by (its resolved path), and its device and inode. A hard link
        to a library read already is that library, as a symbolic link to it is (resolved to its path): it
        was read again, each of its definitions `defined twice`, and a cycle through it was not seen.
        The compile cache records that the two names are one file (``Recorder.same``)."""
        import os

        real = str(c.resolve())
        try:
            st = os.stat(real)
        except OSError:
            return real, None
        ident = (st.st_dev, st.st_ino)
        first = self.ctx.library_files.get(ident)
        if first is None or first == real:
            return real, ident
        if self.ctx.recorder is not None:
            self.ctx.recorder.same(c, first)
        return first, ident

    def in_library(self, e: CompileError, u: A.UseItem) -> CompileError:
        """An error found reading the library of the use ``u`` (it does not parse, or a definition of it is
        refused), noted with the use, as an error in a definition's expansion is with its use; an error
        at the use itself (the file cannot be read) is not."""
        if e.pos is None or e.pos == u.pos:
            return e
        return self.ctx.reporter.in_library(e, u.pos, f"in the library `{_shown(u.path)}`, used here")

    # -- expansion ---------------------------------------------------------------------------------

    def _unknown(self, name: str, pos: Pos) -> None:
        if name == self._current:
            raise self.ctx.error(pos, f"`{name}` uses itself: a definition's body uses only the definitions "
                                 "before it, so none reaches itself (a definition is written out where it "
                                 "is used, and a recursive one would never end)")
        if name in self.all_defs:
            where = self.all_defs[name].seen_from(pos)
            raise self.ctx.error(pos, f"`{name}` is used before its definition (at {where}); define it first")

    def expr(self, e: Any) -> Any:
        defs = self.defs

        def f(x: Any) -> Any:
            if type(x) is A.Call:
                d = defs.get(x.name)
                if d is None:
                    self._unknown(x.name, x.pos)
                    return None
                if d.expr is None:
                    raise self.ctx.error(x.pos, f"`{x.name}` is a statement definition; use it as a "
                                         f"statement, `{x.name}(…);`")
                self.used(x.name, x.pos)
                args = [self.expr(a) for a in x.args]
                return self.instantiate_expr(d, args, x.pos)
            return None

        return A.map_expr(e, f)

    def block(self, stmts: list[Any]) -> list[Any]:
        """``stmts`` with each use of a statement definition written out; a block not inside another (a
        workload block, a definition's body) starts afresh the attributes it has set (:meth:`overwritten`)."""
        saved = self._set_so_far
        if not self._nest:
            self._set_so_far = {}
        self._nest += 1
        try:
            return self._block(stmts)
        finally:
            self._nest -= 1
            if not self._nest:
                self._set_so_far = saved

    def overwritten(self, d: A.DefItem, use: Pos) -> None:
        """Warn at each `set` of the text being expanded (its own, before ``use``, in the text's order) of
        an attribute the body of ``d`` sets before reading it: from the use on, the attribute holds the
        definition's value, and the caller's is lost (lib/vllm.sq's ``vllm_request`` sets ``runs``, ``known``,
        ``c``, …; a ``let`` of such a name is refused as every let of an attribute's name is, and a ``set``
        was overwritten silently). A warning, not an error: a value set and read before the use is sound."""
        for name, at in self.first_sets.get(d.name, {}).items():
            mine = self._set_so_far.pop(name, None)
            if mine is not None:
                self.ctx.reporter.warn(mine, f"`{name}` is set here, and the use of `{d.name}` at {use.at()} sets "
                                       f"it again before reading it ({at.at()}): from that use on it holds "
                                       f"`{d.name}`'s value, not this one; give this attribute another name")

    def _arms(self) -> Callable[[list[Any]], list[Any]]:
        """The blocks of a branch, its arms in turn (``map_stmt`` calls this for ``then``, then ``orelse``), for
        :meth:`overwritten`: a `set` in one arm is not before a use in the other, which never runs after it in
        one pass (a program of two ways of serving, `branch (disagg) { set c = cached; … } else {
        vllm_request(…); }`, was warned that the use overwrote its `c`). The `else` starts from the sets
        before the branch that the `then` did not warn of; after the branch, a set before it stands if
        neither arm warned of it, with each arm's own sets after it."""
        before = dict(self._set_so_far)
        then_state: list[dict[str, Pos]] = []

        def arm(stmts: list[Any]) -> list[Any]:
            if not then_state:  # the then arm: after the sets before the branch
                out = self.block(stmts)
                then_state.append(self._set_so_far)
                return out
            after_then = then_state[0]
            self._set_so_far = {k: v for k, v in before.items() if k in after_then}
            out = self.block(stmts)
            after_else = self._set_so_far
            merged = {k: v for k, v in before.items() if k in after_then and k in after_else}
            for state in (after_then, after_else):
                for k, v in state.items():
                    if k not in before:
                        merged.setdefault(k, v)
            self._set_so_far = merged
            return out

        return arm

    def _block(self, stmts: list[Any]) -> list[Any]:
        out: list[Any] = []
        for i, s in enumerate(stmts):
            if type(s) is A.SSet and s.pos.uses is None:  # the text's own (not a definition's, written out)
                self._set_so_far.setdefault(s.name, s.pos)
            s = A.map_stmt(s, self.expr, self.expr,
                           self._arms() if type(s) is A.SBranch or type(s) is A.SBranchWith else self.block)
            if type(s) is A.SDefCall:
                d = self.defs.get(s.name)
                if d is None:
                    self._unknown(s.name, s.pos)
                    if s.name in ("reserve", "reuse") and i and type(stmts[i - 1]) is A.SHold:
                        # `hold kv (1) { … } reuse (8);`: the clause after the block, read as a call
                        raise self.ctx.error(s.pos, before_block(s.name))
                    if s.name in ("reserve", "reuse"):  # `reuse (3);` alone: as `lease kv (3);` alone is told
                        raise self.ctx.error(s.pos, f"`{s.name}` begins no statement: it is a hold's clause, "
                                             f"{_CLAUSE_WORDS[s.name]}")
                    if s.name == "admission":  # `admission (x);` alone: a hold's `at admission (…)`
                        raise self.ctx.error(s.pos, ADMISSION_ALONE)
                    if s.name in DIALECT:
                        raise self.ctx.error(s.pos, not_in_language(s.name))
                    if s.name in KEYWORDS:  # `on (1);`: a word of another place, read as a definition's call
                        raise self.ctx.error(s.pos, keyword_begins_nothing(s.name))
                    if s.name in self.taken:  # `user (1);` beside `stage user : delay;`
                        raise self.ctx.error(s.pos, declared_not_defined(s.name, self.taken[s.name]))
                    hint = self.ctx.library_hint(s.name)
                    close = "" if hint else did_you_mean(s.name, [n for n, x in self.defs.items() if x.body is not None])
                    if not close and not hint:
                        # a statement's word misspelt (`tools (z);`), or a hold's clause after its block
                        # (`} cached (n);`): the word meant, said as the parser says a word that begins no statement
                        words = _BEGIN_WORDS | ({"cache", "lease"} if i and type(stmts[i - 1]) is A.SHold else set())
                        meant = did_you_mean(s.name, sorted(words))
                        if meant:
                            raise self.ctx.error(s.pos, f"`{s.name}` does not begin a statement{meant}: a name there "
                                                 f"calls a definition, `{s.name}(…);`, and no definition `{s.name}` "
                                                 "is")
                    raise self.ctx.error(s.pos, f"`{s.name}(…);`: no definition `{s.name}`{close}{hint}")
                if d.body is None:
                    raise self.ctx.error(s.pos, f"`{s.name}` is an expression definition; use it in an "
                                         "expression")
                self.used(s.name, s.pos)
                self.overwritten(d, s.pos)
                out.extend(self.instantiate_block(d, s.args, s.pos))
            else:
                out.append(s)
        return out

    def bind(self, d: A.DefItem, args: list[Any], pos: Pos) -> dict[str, Any]:
        if len(args) != len(d.params):
            raise self.ctx.error(pos, takes(d.name, len(args), ", ".join(d.params)))
        return dict(zip(d.params, args))

    def write_out(self, d: A.DefItem, params: dict[str, Any], pos: Pos) -> None:
        """Count the nodes the use of ``d`` at ``pos`` makes (its body, each parameter read replaced by
        its argument) before they are made (:meth:`Context.write_out`)."""
        reads = self.reads[d.name]
        n = self.size[d.name] + sum(reads[p] * (A.expr_size(a) - 1) for p, a in params.items())
        self.ctx.write_out(n, pos, f"this use of `{d.name}`")
        deepest, at = self.nesting[d.name]
        for p, a in params.items():
            if at[p]:
                deepest = max(deepest, at[p] - 1 + expr_depth(a))
        deepest += self._nest  # (the blocks the use is in: a statement definition used 900 branches deep)
        if deepest > MAX_EXPANDED_DEPTH:
            what = ("an expression that nests", IN_EXPRESSIONS) if d.body is None else ("statements that nest", IN_BLOCKS)
            raise too_deep(self.ctx, pos, f"this use of `{d.name}` writes out {what[0]}", deepest, what[1])

    def check_args(self, d: A.DefItem, params: dict[str, Any], pos: Pos) -> None:
        counts = self.reads[d.name]
        stmts = d.body or []
        assigned = self.assigned_by(stmts, params) if stmts else set()
        for p, a in params.items():
            if A.draws(a) and counts[p] > 1:
                terms = "" if param_reads(d, lambda _: 1)[p] == counts[p] else " (in an aggregate, once a term)"
                raise self.ctx.error(a.pos, f"the argument for `{p}` of `{d.name}` draws, and the body "
                                     f"reads `{p}` {counts[p]} times{terms}: each would draw anew; set an "
                                     "attribute to the draw and pass its name")
            read = names_read(a)
            hit = sorted(read & assigned)
            if hit:
                raise self.ctx.error(a.pos, f"an argument of `{d.name}` reads `{hit[0]}`, which its body "
                                     "assigns: the body would read the new value; pass a copy")
            if d.body is not None:
                live = reads_live(a)
                if live is not None:
                    what = "the clock" if isinstance(live, A.Var) else f"live state, `{live.name}(…)`"
                    raise self.ctx.error(live.pos, f"an argument of the statements `{d.name}` reads "
                                         f"{what}: the body would read it after its runs; name the value "
                                         "with `set` first and pass the name")

    def assigned_by(self, stmts: list[Any], params: dict[str, Any]) -> set[str]:
        out = A.assigned_in(stmts)
        for s in A.walk_stmts(stmts):
            if isinstance(s, A.SHold):
                out.update(("cached", "computed"))
            elif isinstance(s, A.SMark):
                out.add(s.name)
            elif isinstance(s, A.STurn):
                out.update(self._turn_assigns())
            elif isinstance(s, A.SRequest):
                gw = s.gateway
                if gw is not None and gw in params and own_name(s):
                    arg = params[gw]
                    gw = arg.simple if isinstance(arg, A.Var) else None
                    if gw is None:
                        out.update(self._all_routes())
                        continue
                out.update(self._request_assigns(gw))
            elif isinstance(s, A.SQCall):
                q = s.queue
                if q in params and own_name(s):
                    arg = params[q]
                    q = arg.parts[0][0] if isinstance(arg, A.Var) and len(arg.parts) == 1 else None
                if q is None:
                    for item in self.module.items:
                        if isinstance(item, A.QueueItem):
                            out.update(self._entry_assigns(item.name, set()))
                else:
                    out.update(self._entry_assigns(q, set()))
        return out

    def _entry_assigns(self, queue: str, seen: set[str]) -> set[str]:
        """What a call of an entry of ``queue`` assigns, as the session sees it after the queues layer:
        the names its entries set, choose and mark (as ``queue.NAME``, a gateway's sets as written),
        their holds' bindings and admission attributes, and what the calls and requests in them assign."""
        out: set[str] = set()
        if queue in seen:
            return out
        seen.add(queue)
        for item in self.module.items:
            if not (isinstance(item, A.QueueItem) and item.name == queue):
                continue
            gateway = any(r == "gateway" for r, _ in item.roles)
            for e in item.entries:
                for s in A.walk_stmts(e.body):
                    if isinstance(s, A.SMark):
                        out.add(f"{queue}.{s.name}")
                    elif isinstance(s, (A.SSet, A.SChoose)):
                        out.add(s.name if gateway else f"{queue}.{s.name}")
                    elif isinstance(s, A.SHold):
                        out.update(b.name for b in s.bindings)
                        out.update(("cached", "computed"))
                    elif isinstance(s, A.SQCall):
                        out |= self._entry_assigns(s.queue, seen)
                    elif isinstance(s, A.SRequest) and s.gateway is not None:
                        out |= self._entry_assigns(s.gateway, seen)
        return out

    def _turn_assigns(self) -> set[str]:
        out: set[str] = set()
        for item in self.module.items:
            if isinstance(item, A.WorkloadItem):
                for w in item.items:
                    if w.kind == "turn":
                        out |= A.assigned_in(w.arg)
                    elif w.kind == "trace":
                        out.update(TRACE_ATTRIBUTES)
        return out | {"turn_no"}

    def _request_assigns(self, gw: str | None) -> set[str]:
        out: set[str] = set()
        for item in self.module.items:
            if gw is None and isinstance(item, A.ServerItem):
                out |= A.assigned_in(item.body)
            elif gw is not None and isinstance(item, A.QueueItem) and item.name == gw:
                for e in item.entries:
                    out |= A.assigned_in(e.body)
                out |= self._entry_assigns(gw, set())
        return out

    def _all_routes(self) -> set[str]:
        out: set[str] = set()
        for item in self.module.items:
            if isinstance(item, A.QueueItem) and any(r == "gateway" for r, _ in item.roles):
                for e in item.entries:
                    out |= A.assigned_in(e.body)
                out |= self._entry_assigns(item.name, set())
        return out

    def instantiate_expr(self, d: A.DefItem, args: list[Any], pos: Pos) -> Any:
        params = self.bind(d, args, pos)
        self.write_out(d, params, pos)
        self.check_args(d, params, pos)
        return Instance(self.ctx, d.name, params, pos).expr(d.expr)

    def instantiate_block(self, d: A.DefItem, args: list[Any], pos: Pos) -> list[Any]:
        params = self.bind(d, args, pos)
        self.write_out(d, params, pos)
        self.check_args(d, params, pos)
        return Instance(self.ctx, d.name, params, pos).block(d.body or [])


class Instance:
    """One expansion of a definition's body at a use.

    Only the parameters are the definition's own (program-reference.txt, def): a name of the body's own text
    that is a parameter is replaced by its argument, and a name that came into the body from a definition
    the body uses (written out when the body was defined: its place remembers that use, ``Pos.uses``) is
    that definition's, the program's, whatever the parameters are called. ``def g() = now;`` and ``def
    f(now) = g() + now;`` make ``f(100)`` at time 1 read 1 + 100; the parameter took g's clock too (200).
    A request's gateway and a queue call's queue follow the same rule (:func:`own_name`): with ``def pre(w)
    { P[0].prefill (w); }``, ``def f(P) { pre(P); }`` calls the queue P whatever ``f`` is given (the
    parameter took pre's queue, and ``f(prompt)`` called a queue `prompt`), and a name a parameter put
    there keeps its argument's place, so ``def g(Q) { Q.prefill (1); }`` used as ``g(P)`` in ``f(P)``'s body
    calls the queue ``f`` is given."""

    def __init__(self, ctx: Any, name: str, params: dict[str, Any], use: Pos):
        self.ctx = ctx
        self.name = name
        self.params = params
        self.use = use

    def pos(self, p: Pos) -> Pos:
        return p.expanded(self.use, self.name)

    def expr(self, e: Any) -> Any:
        t = type(e)
        if t is A.Var:
            head, idx = e.parts[0]
            if head in self.params and own_name(e):
                arg = self.params[head]
                if len(e.parts) == 1 and idx is None:
                    return arg
                if not isinstance(arg, A.Var):
                    raise self.ctx.error(self.pos(e.pos), f"`{head}` is used as a reference here, and its "
                                         f"argument is not a name")
                return self.combine(arg, e)
            return A.Var([(n, None if i is None else self.expr(i)) for n, i in e.parts], self.pos(e.pos))
        if t is A.Num:
            return A.Num(e.value, self.pos(e.pos))
        if t is A.Call:
            return A.Call(e.name, [self.expr(a) for a in e.args], self.pos(e.pos))
        if t is A.Draw:
            return A.Draw(e.dist, [self.expr(a) for a in e.args], self.pos(e.pos))
        if t is A.Unary:
            return A.Unary(e.op, self.expr(e.arg), self.pos(e.pos))
        if t is A.Binary:
            return A.Binary(e.op, self.expr(e.lhs), self.expr(e.rhs), self.pos(e.pos))
        if t is A.Cond:
            return A.Cond(self.expr(e.test), self.expr(e.then), self.expr(e.orelse), self.pos(e.pos))
        if t is A.Agg:
            return A.Agg(e.op, e.var, self.expr(e.n), self.expr(e.body), self.pos(e.pos),
                         None if e.var_pos is None else self.pos(e.var_pos))
        return e

    def combine(self, arg: A.Var, use: A.Var) -> A.Var:
        last_name, last_idx = arg.parts[-1]
        idx = use.parts[0][1]
        if idx is not None and last_idx is not None:
            raise self.ctx.error(self.pos(use.pos), f"`{use.parts[0][0]}[…]` indexes `{arg.dotted}`, which "
                                 "its argument indexes already")
        idx = self.expr(idx) if idx is not None else last_idx
        parts = list(arg.parts[:-1]) + [(last_name, idx)]
        parts += [(n, None if i is None else self.expr(i)) for n, i in use.parts[1:]]
        return A.Var(parts, arg.pos)

    def ref(self, r: A.Var) -> A.Var:
        out = self.expr(r)
        if not isinstance(out, A.Var):
            raise self.ctx.error(self.pos(r.pos), f"`{r.dotted}` names a pool or a stage here, and its "
                                 f"argument in the use of `{self.name}` is not a name")
        return out

    def block(self, stmts: list[Any]) -> list[Any]:
        return [self.stmt(s) for s in stmts]

    def stmt(self, s: Any) -> Any:
        n = A.map_stmt(s, self.expr, self.ref, self.block, self.pos)
        if isinstance(n, A.SRequest) and n.gateway in self.params and own_name(s):
            arg = self.params[n.gateway]
            if not isinstance(arg, A.Var) or arg.simple is None:
                raise self.ctx.error(arg.pos, f"`request {n.gateway};` in `{self.name}`: the argument "
                                     "must name a gateway")
            n.gateway, n.name_pos = arg.simple, arg.pos
        elif isinstance(n, A.SQCall) and n.queue in self.params and own_name(s):
            arg = self.params[n.queue]
            if not isinstance(arg, A.Var) or len(arg.parts) != 1:
                raise self.ctx.error(arg.pos, f"`{n.queue}.{n.verb}` in `{self.name}`: the argument must "
                                     "name a queue")
            name, idx = arg.parts[0]
            if idx is not None and n.index is not None:
                raise self.ctx.error(arg.pos, f"`{n.queue}[…]` indexes a queue its argument indexes already")
            n.queue, n.index, n.name_pos = name, n.index if n.index is not None else idx, arg.pos
        return n


def rewrite(module: A.Module, ctx: Any) -> A.Module:
    ex = Expander(module, ctx)
    base = ctx.base_dir
    out: list[Any] = []
    for item in module.items:
        if isinstance(item, A.DefItem):
            ex.define(item)
        elif isinstance(item, A.UseItem):
            ex.use(item, base)
        else:
            out.append(A.map_item(item, ex.expr, ex.block))
    unknown_defs(ctx, ex.overridden, module, {k: list(d.params) for k, d in ex.defs.items() if d.body is None})
    return A.Module(out, module.file)


def unknown_defs(ctx: Any, overridden: set[str], module: A.Module | None = None,
                 params: dict[str, list[str]] | None = None) -> None:
    """Refuse a ``--def`` that names no expression definition of the program (also when the program has
    no definition at all, and this layer has nothing else to do); one that names a ``let`` of the program
    says to give its value with ``--set``; one written with a definition's parameters (``--def 'out(i)=…'``,
    ``params``: each expression definition's), to name the definition alone, its body reading them; a
    misspelt one, the closest definition and the closest let (serq.errors.knob_hint, the rule of --set's
    too)."""
    lets = [] if module is None else [item.name for item in module.items if isinstance(item, A.Let)]
    for name in ctx.defs:
        if name not in overridden:
            head = name.split("(", 1)[0].strip() if isinstance(name, str) else ""
            if head != name and head in (params or {}):
                ps = params[head]  # type: ignore[index]
                reads = (f"; its body reads {'the parameter' if len(ps) == 1 else 'the parameters'} "
                         + ", ".join(f"`{x}`" for x in ps) if ps else "; it has no parameter")
                hint = (f": give the body of the definition `{head}` with {ctx.option_name('def', _shown(head))}, "
                        f"its name alone, without parentheses{reads}")
            elif name in lets:
                hint = f"; `{name}` is a `let`: give its value with {ctx.option_name('set', _shown(name))}"
            else:
                hint = knob_hint(name, lets, ctx.notes.get("expression_defs", ()), "definition", ctx.option_name)
            raise ctx.error(None, f"{ctx.option_name('def', _shown(name))}: the program has no expression definition "
                            f"`{name}`" + hint)


LAYER = SugarLayer("defs", grammar_text("defs"), BUILDERS, rewrite)


#: the most folders the error of a library no folder has lists
FOLDERS_LISTED = 8


def _folders(folders) -> str:
    """The folders a ``use`` looked in, as its error lists them: the first :data:`FOLDERS_LISTED`, each name
    as messages print one (:func:`serq.errors.shown_path`), and how many more. A ``SERQ_PATH`` of 9 000
    folders made the error one line of 134 000 characters."""
    from serq.errors import shown_path

    names = [shown_path(f) for f in folders]
    more = len(names) - FOLDERS_LISTED
    return ", ".join(names[:FOLDERS_LISTED]) + (f" and {more} more folders" if more > 0 else "")
