"""The serving vocabulary: ``prefill``, ``decode``, ``tool`` and ``transfer``, rewritten to ``run`` (and
``load``, ``release``) on the stage the which-stage rule finds."""

from __future__ import annotations

from typing import Any

from serq_ir import rules

from .. import ast as A
from ..consts import BadConstant, NotConstant, fold
from ..parser import _word, grammar_text
from . import SugarLayer


def _where(where: Any) -> tuple[Any, list[A.Var]]:
    """The index and the stages of ``[j]`` or ``on S, …`` (none: no index, no stages)."""
    if isinstance(where, tuple):
        return where[1], where[2]
    return None, []


#: the serving forms' words, which the lexer reads as a name where an expression begins
_VERBS = ("prefill", "decode", "tool", "transfer")


def _verb_in_work(b: Any, p: Any, verb: str, work: Any) -> None:
    """Refuse a serving form whose amount is a call of a serving form's word: the word written twice (`tool tool
    (1);`, `prefill [j] prefill (w);`), or a second form's word after the first (`decode tool (1);`). The lexer
    reads the second word as a name where the amount begins, and the linker told "unknown function `tool`"."""
    if not isinstance(work, A.Call) or work.name not in _VERBS:
        return

    def shape(word: str) -> str:
        return f"`{word} (w) from P to Q (n);`" if word == "transfer" else f"`{word} (w);`"

    if work.name == verb:
        raise b.error(work.pos, f"`{verb}` is written twice (the first at {p.line}:{p.col}): a serving form is its "
                                f"word once and its amount, {shape(verb)}")
    raise b.error(work.pos, f"`{work.name}` after `{verb}`: a serving form is one of the words `prefill`, `decode`, "
                            f"`tool`, `transfer` and its amount, {shape(verb)} or {shape(work.name)}, one at a time")


def _s_serving(b: Any, p: Any, c: list[Any]) -> A.SServing:
    verb, where, work, growing = str(c[0]), c[1], c[2], c[3]
    _verb_in_work(b, p, verb, work)
    return A.SServing(verb, *_where(where), work, p, growing)


def _s_transfer(b: Any, p: Any, c: list[Any]) -> A.STransfer:
    where, work, src, dst, amount = c
    _verb_in_work(b, p, "transfer", work)
    return A.STransfer(*_where(where), work, src, dst, amount, p)


BUILDERS = {
    "s_serving": _s_serving,
    "s_transfer": _s_transfer,
    "serve_verb": _word,
    "where_index": lambda b, p, c: ("index", c[0], []),
    "where_on": lambda b, p, c: ("on", None, list(c)),
}

ROLE_STAGES = {"prefill": ("prefill",), "decode": ("decode",), "tool": ("tool",),
               "transfer": ("link", "transfer")}


def which_stage(kinds: dict[str, str], verb: str, pos: Any, ctx: Any) -> str:
    """The stage a serving form without ``on`` runs on (language.txt §2, Which stage), among the stages
    ``kinds`` (name -> kind): the one named after the role, failing that, for prefill and decode, the one
    step engine."""
    names = [n for n in ROLE_STAGES[verb] if n in kinds]
    if len(names) == 1:
        return names[0]
    if len(names) > 1:
        raise ctx.error(pos, f"`{verb}`: several stages qualify ({', '.join(names)}); say which "
                        f"with `{verb} on STAGE …`")
    if verb in ("prefill", "decode"):
        steps = [n for n, k in kinds.items() if k == "step"]
        if len(steps) == 1:
            return steps[0]
        if len(steps) > 1:
            raise ctx.error(pos, f"`{verb}`: several step engines qualify ({', '.join(steps)}); "
                            f"say which with `{verb} on STAGE …`")
        wanted = f"a stage named `{verb}` or one step engine"
    else:
        wanted = " or ".join(f"a stage named `{n}`" for n in ROLE_STAGES[verb])
    raise ctx.error(pos, f"unknown stage in a serving form: `{verb}` finds no stage to run on "
                    f"(it needs {wanted}); declare one above, or write `{verb} on STAGE …`")


def _same_value(a: Any, b: Any) -> bool:
    """Whether index expressions ``a`` and ``b`` are one expression of numbers, names and arithmetic (no
    call, draw or clock): the same value wherever a session reads both between two of its own statements,
    since only its own statements set its attributes."""
    if type(a) is not type(b):
        return False
    if type(a) is A.Num:
        return a.value == b.value
    if type(a) is A.Var:
        return a.simple is not None and a.simple == b.simple and a.simple != "now"
    if type(a) is A.Unary:
        return a.op == b.op and _same_value(a.arg, b.arg)
    if type(a) is A.Binary:
        return a.op == b.op and _same_value(a.lhs, b.lhs) and _same_value(a.rhs, b.rhs)
    return False


def same_member(a: A.Var, b: A.Var, lets: dict[str, float]) -> bool:
    """Whether the references ``a`` and ``b`` name one pool (one member of a family) whatever the state: the
    same names, each index the same constant or the same expression (:func:`_same_value`). Two references
    this cannot tell apart are taken as two pools."""
    if len(a.parts) != len(b.parts):
        return False
    for (na, ia), (nb, ib) in zip(a.parts, b.parts, strict=True):
        if na != nb or (ia is None) != (ib is None):
            return False
        if ia is None:
            continue
        try:
            if fold(ia, lets) != fold(ib, lets):
                return False
        except (NotConstant, BadConstant):
            if not _same_value(ia, ib):
                return False
    return True


def _written(r: A.Var, lets: dict[str, float]) -> str:
    out = []
    for n, i in r.parts:
        if i is not None:
            try:
                v = fold(i, lets)
                n += f"[{int(v)}]" if v == int(v) else "[…]"
            except (NotConstant, BadConstant, OverflowError, ValueError):
                n += "[…]"
        out.append(n)
    return ".".join(out)


def transfer_problem(src: A.Var, dst: A.Var, lets: dict[str, float]) -> str | None:
    """Why a transfer ``from src to dst`` moves nothing (its two pools one, :func:`same_member`), or ``None``.
    Its ``release src`` would give back the hold on ``dst`` that its ``load`` has just filled."""
    if not same_member(src, dst, lets):
        return None
    return rules.transfer_itself_message(_written(src, lets), _written(dst, lets))


class Serving:
    def __init__(self, module: A.Module, ctx: Any):
        self.ctx = ctx
        self.kinds: dict[str, str] = {}
        #: the stages in the order they are declared, with where (language.txt §2, Which stage: "A form finds
        #: its stage among the stages declared above it"; program-reference.txt: "Items are read in order")
        self.declared: list[tuple[Any, str, str]] = []
        for item in module.items:
            if isinstance(item, A.StageItem):
                self.kinds.setdefault(item.name, item.kind.kind)
                self.declared.append((item.pos, item.name, item.kind.kind))

    def find(self, verb: str, pos: Any) -> str:
        """The stage of a form without ``on`` at ``pos``, among the stages declared above it: above the
        form, or, for a form a definition's body holds, above its outermost use ("a serving form in it
        finds its stage at the use"). A server's forms are above or below the stages as the server is."""
        at = pos.uses[0] if getattr(pos, "uses", None) else pos
        kinds: dict[str, str] = {}
        for where, name, kind in self.declared:
            if where.file == at.file and (where.line, where.col) < (at.line, at.col):
                kinds.setdefault(name, kind)
        return which_stage(kinds, verb, pos, self.ctx)

    def stages(self, s: Any) -> list[A.Var]:
        if s.on:
            return list(s.on)
        name = self.find(s.verb if isinstance(s, A.SServing) else "transfer", s.pos)
        return [A.Var([(name, s.index)], s.pos)]

    def work_misread(self, s: Any) -> None:
        """A serving form whose work the parser read as a call of a name that is no function, where the name
        is a word of the form's head (language.txt §2: ``VERB [ '[' expr ']' | on STAGE [, STAGE]* ] expr``):
        ``transfer [0] on (1) …``, an index and an ``on`` without its stage, read as the work ``on(1)``; and
        ``transfer on a b (1) …``, a stage after another without the ``,``, read as the work ``b(1)``. It was
        `unknown function`, of a word the user wrote as no function. Told at the word; a definition named so
        (``def on(x) = …;``) is the work it reads as, and any other unknown name is the linker's."""
        work = s.work
        if type(work) is not A.Call or self.ctx.unknown_function(work) is None:
            return
        verb = s.verb if isinstance(s, A.SServing) else "transfer"
        tail, w = (" from P to Q (n);", "X") if verb == "transfer" else (";", "W")
        if work.name == "on" and s.index is not None:
            raise self.ctx.error(work.pos, f"unexpected `on`: a serving form names its stage by an index or by "
                                 f"`on`, not both, and `on` is followed by the stage's name: `{verb}[j] ({w}){tail}` "
                                 f"serves the role's array, `{verb} on S ({w}){tail}` the stage S")
        if s.on and work.name in self.kinds:
            named = ", ".join(r.dotted for r in s.on)
            if verb == "transfer":
                raise self.ctx.error(work.pos, f"unexpected `{work.name}`, a stage, where the transfer's work "
                                     f"begins: the stages of `on` are separated by `,`, `transfer on {named}, "
                                     f"{work.name} (X){tail}`")
            raise self.ctx.error(work.pos, f"unexpected `{work.name}`, a stage, where the work begins: `{verb} on` "
                                 f"names one stage, `{verb} on {named} (W);`; a run over several is a `transfer` "
                                 f"or the kernel's `run {named}, {work.name} (…);`")

    def rewrite(self, s: Any) -> list[Any] | None:
        if isinstance(s, (A.SServing, A.STransfer)):
            self.work_misread(s)
        if isinstance(s, A.SServing):
            stages = self.stages(s)
            if len(stages) > 1:
                raise self.ctx.error(stages[1].pos, f"`{s.verb} on` names one stage; a run over several "
                                     "is a `transfer` or the kernel's `run a, b (…)`")
            mode = "plain"
            if s.verb in ("prefill", "decode") and self.kinds.get(stages[0].dotted) == "step":
                mode = s.verb
            return [A.SRun(stages, mode, s.work, s.pos, s.growing)]
        if isinstance(s, A.STransfer):
            problem = transfer_problem(s.src, s.dst, self.ctx.lets())
            if problem is not None:
                raise self.ctx.error(s.dst.pos, problem)
            stages = self.stages(s)
            return [A.SRun(stages, "plain", s.work, s.pos), A.SLoad(s.dst, s.amount, s.pos, "transfer … to"),
                    A.SRelease(s.src, s.pos, "transfer … from")]
        return None


def rewrite(module: A.Module, ctx: Any) -> A.Module:
    sv = Serving(module, ctx)
    return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, sv.rewrite))
                     for i in module.items], module.file)


LAYER = SugarLayer("serving", grammar_text("serving"), BUILDERS, rewrite)
