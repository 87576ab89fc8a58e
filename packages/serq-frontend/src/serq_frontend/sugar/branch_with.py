"""``branch with (p) { … } else { … }``: a draw, the kernel's ``branch (~bernoulli(p))``."""

from __future__ import annotations

from typing import Any

from .. import ast as A
from ..parser import grammar_text
from . import SugarLayer

BUILDERS = {
    "s_branch_with": lambda b, p, c: A.SBranchWith(c[0], c[1], c[2] or [], p),
}


def _rw(s: Any) -> list[Any] | None:
    if isinstance(s, A.SBranchWith):
        return [A.SBranch(A.Draw("bernoulli", [s.prob], s.prob.pos), s.then, s.orelse, s.pos)]
    return None


def rewrite(module: A.Module, ctx: Any) -> A.Module:
    return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, _rw)) for i in module.items],
                    module.file)


LAYER = SugarLayer("branch_with", grammar_text("branch_with"), BUILDERS, rewrite)
