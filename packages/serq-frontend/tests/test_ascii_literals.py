"""A numeric literal is ASCII digits (docs/language.md, Lexical: "Numbers are decimal"): kernel.lark's
NUMBER was /\\d+.../, and Python's \\d matches every script's digits, so `let g = ١٢;` (Arabic-Indic) or
`１２` (fullwidth) compiled as 12, in a source, a library or a --def body. They are now an unexpected
character where they stand; serq fmt's tokenizer reads literals by the same rule."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend.fmt import _TOKEN
from sqhelpers import compile_src, refused

BODY = "stage s : delay;\nworkload {{ arrive poisson(1); }}\nsession {{ observe x = {v}; run s (1); }}\nrun {{ horizon 5; }}\n"


@pytest.mark.parametrize("digits", ["\u0661\u0662", "\uff11\uff12", "\u0967", "1\u0662"])
def test_other_scripts_digits_are_no_literal(digits):
    at = digits.index(next(c for c in digits if not c.isascii()))
    src = BODY.format(v=digits[:at] + "⟨" + digits[at:])
    refused(src, f"unexpected character `{digits[at]}`")


@pytest.mark.parametrize("text, value", [("12", 12.0), ("0.5", 0.5), (".5", 0.5), ("3.", 3.0), ("2e-5", 2e-5),
                                         ("1E+3", 1000.0)])
def test_ascii_literals_compile(text, value):
    program = compile_src(BODY.format(v=text))
    assert any(getattr(s, "value", None) is not None and getattr(s.value, "value", None) == value
               for s in program.session), program.session


def test_a_def_body_is_held_to_it():
    src = "def service() = 1;\n" + BODY.format(v="service()")
    with pytest.raises(serq_frontend.CompileError, match="unexpected character `\u0661`"):
        compile_src(src, defs={"service": "\u0661"})
    compile_src(src, defs={"service": "1"})


def test_fmt_reads_literals_by_the_same_rule():
    kinds = [m.lastgroup for m in _TOKEN.finditer("x = \u0661\u0662 + 12")]
    assert "number" in kinds and kinds.count("number") == 1
