"""Statements a session never reaches: those after an ``end;``, after a ``loop`` (which only an ``end;`` leaves),
after a ``branch`` whose every way ends the session, or after a hold whose block does, in the same block.
language.txt §2 has ``end ;`` end the session and ``loop block`` repeat its block, so nothing after either
runs; a program that writes something there (an ``observe`` after the loop that was meant to close each turn,
a ``drop kv;`` after ``end;``) gets no sample and no error, and the run's figures are silently short. The
linker warns at the first such statement of each block (docs/language.md, "A statement after `end;`")."""

from __future__ import annotations

from typing import Any

from . import ast as A


def _at(s: Any) -> str:
    return f"{s.pos.line}:{s.pos.col}"


def ends(s: Any) -> str | None:
    """Why statement ``s`` never completes (its session ends in it, or it repeats until it does), or None."""
    t = type(s)
    if t is A.SEnd:
        return f"the `end;` at {_at(s)} before it ends the session"
    if t is A.SLoop:
        return f"the `loop` at {_at(s)} before it repeats until an `end;` ends the session"
    if t is A.SBranch or t is A.SBranchWith:
        if s.orelse and ends_block(s.then) is not None and ends_block(s.orelse) is not None:
            return f"every way through the `branch` at {_at(s)} before it ends the session"
        return None
    if t is A.SHold and ends_block(s.body) is not None:
        return f"the block of the hold at {_at(s)} before it ends the session"
    return None


def ends_block(block: list[Any]) -> str | None:
    for s in block:
        why = ends(s)
        if why is not None:
            return why
    return None


def unreachable(block: list[Any]) -> list[tuple[Any, str]]:
    """``(statement, why)`` for the first statement after one that never completes, in ``block`` and every
    block inside it, in the order written."""
    out: list[tuple[Any, str]] = []
    for i, s in enumerate(block):
        for name in getattr(type(s), "BLOCKS", ()):
            out.extend(unreachable(getattr(s, name) or []))
        why = ends(s)
        if why is not None:
            if i + 1 < len(block):
                out.append((block[i + 1], why))
            break
    return out
