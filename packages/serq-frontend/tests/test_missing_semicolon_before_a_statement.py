"""A `;` missing at the end of a line whose next line begins a statement (`set t0 = now` then `hold kv
(10) {`) is an error right after the line, saying the `;` is missing. The expression read the next
line's word on as a name (`now hold kv` the start of an aggregate, `sum j in …`), and the error was
'unexpected `kv` (expected in)' on the next line, for every statement word."""

from __future__ import annotations

import pytest
from sqhelpers import refused

HEAD = "pool kv { cap 100; }\nstage svc : fifo;\nworkload { arrive poisson(1); }\n"


def test_a_missing_semicolon_before_hold():
    refused(HEAD + "session {\n  set t0 = now⟨\n  hold kv (10) {\n    run svc (1);\n  }\n}\n",
            "missing `;` (found `hold` next)")


@pytest.mark.parametrize("line", ["branch (x > 1) { end; }", "loop { end; }", "drop kv;", "observe z = 1;",
                                  "grow kv (1);", "record r { a = 1; }", "release kv;"])
def test_a_missing_semicolon_before_each_statement_word(line):
    refused(HEAD + f"session {{\n  set x = 1;\n  set y = x⟨\n  {line}\n}}\n",
            f"missing `;` (found `{line.split()[0]}` next)")
