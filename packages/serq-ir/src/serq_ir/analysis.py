"""Small read-only walks over a program."""

from __future__ import annotations

from collections.abc import Iterator

from .nodes import (
    BUILTIN_ATTRIBUTES,
    TRACE_ATTRIBUTES,
    Branch,
    Cond,
    Expr,
    Hold,
    Loop,
    Num,
    Program,
    Stage,
    Step,
    Stmt,
)


def taken_arm(e) -> Expr | None:
    """The arm a conditional ``c ? a : b`` always takes when its test is a number: ``a`` when the test is not
    zero, ``b`` when it is (``0`` or ``-0.0``); None when ``e`` is no conditional or its test is no number.
    A NaN test takes ``a``: a non-zero operand is true (language.txt, Expressions), and NaN is not zero, as the
    simulator evaluates it (``test != 0.0``) and the linker folds it. The one rule of every static judgement
    of a conditional (which arm its evaluation can reach: the simulator's ``reads``, the ``queue by`` keys kept,
    ``serq vllm target``'s folding), so that each agrees with the evaluation."""
    if not isinstance(e, Cond) or not isinstance(e.test, Num):
        return None
    v = e.test.value
    if isinstance(v, str):  # "inf" or "-inf": not zero
        return e.then
    return e.then if v != 0 else e.orelse


def builtin_slots(program: Program) -> frozenset[int]:
    """The attribute slots the language gives ``program``, by their names: the built-in ``serial``,
    ``turn_no``, ``cached``, ``computed``, and with a trace ``new``, ``out``, ``think``, ``more``, ``forced``,
    which each turn loads. The one rule of what is built in: the IR's ``builtin`` flag (which the frontend
    writes by these names) is read nowhere, so an IR file whose flag says otherwise runs, and is judged, as
    its names say (a user's ``t0`` marked ``builtin`` was no send time to ``serq vllm target``; the trace's
    attributes left unmarked were loaded by their names all the same)."""
    names = BUILTIN_ATTRIBUTES + (TRACE_ATTRIBUTES if program.workload.trace is not None else ())
    return frozenset(i for i, a in enumerate(program.attributes) if a.name in names)


def blocks(stmts: list[Stmt]) -> Iterator[list[Stmt]]:
    """Every statement block nested in ``stmts`` (not ``stmts`` itself)."""
    for s in stmts:
        if isinstance(s, Hold):
            yield s.body
            yield from blocks(s.body)
        elif isinstance(s, Branch):
            yield s.then
            yield from blocks(s.then)
            if s.orelse:
                yield s.orelse
                yield from blocks(s.orelse)
        elif isinstance(s, Loop):
            yield s.body
            yield from blocks(s.body)


def count_blocks(program: Program) -> int:
    """The statement blocks of a program: the session, ``init`` and ``turn`` (when present), and every
    block nested in them (hold bodies, branch arms, loop bodies)."""
    n = 0
    for top in (program.session, program.workload.init, program.workload.turn):
        if top:
            n += 1 + sum(1 for _ in blocks(top))
    return n


def budget_not_given(program: Program) -> list[Stage]:
    """The step stages whose source gives no ``budget``, so that the budget is infinite (docs/language.md: a
    step stage without ``budget``; language.txt §2 writes the field as required): those the IR says so of
    (``budget_given`` false, spans or none), and, in an IR written before it said so, an ``inf`` with no
    span in a stage that has one (a ``budget`` written, ``inf`` too, has its span). An IR without spans
    (``serq ir --no-spans``) was taken as giving every budget, silently."""
    from serq.errors import PLACED  # (a span placed in an IR file without them, serq_ir.codec.placed: none)

    def none(span: object) -> bool:
        return span is None or (bool(PLACED) and isinstance(span, tuple) and span in PLACED)

    return [s for s in program.stages
            if isinstance(s.kind, Step) and (not s.kind.budget_given or (
                isinstance(s.kind.budget, Num) and s.kind.budget.value == "inf" and none(s.kind.budget.span)
                and not none(s.span)))]


def span_files(program: Program) -> list[str]:
    """Every file the program's source spans name (its source and the libraries its text came from, a
    definition's uses included), each once."""
    import msgspec

    out: dict[str, None] = {}
    if program.source:
        out[program.source] = None
    stack: list[object] = [msgspec.to_builtins(program)]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            span = x.get("span")
            # a node's span is [file, line, col], or {file, line, col, via} where a use expanded it (each use
            # [name, file, line, col]); the run block's is an object of them by setting (RunSpans), where a
            # setting a command-line option gave is the option's text
            if isinstance(span, dict) and "via" in span:
                out.setdefault(span["file"], None)
                for use in span["via"]:
                    out.setdefault(use[1], None)
                span = None
            for s in (span.values() if isinstance(span, dict) else (span,)):
                if isinstance(s, list) and s and isinstance(s[0], str):
                    out.setdefault(s[0], None)
            stack.extend(v for k, v in x.items() if k != "span")
        elif isinstance(x, list):
            stack.extend(x)
    return list(out)
