"""Habits of other languages that were a bare 'unexpected `=`' or 'unexpected `;`': an option or run
field given its value with `=` (`cap = 100;`, `horizon = 100;`), a stage's kind after `=` (`stage t =
fifo;`), a value given without `set` (`x = 1;`), a `;` after a block's `}` (`branch (…) { … };`). Each now
says what to write."""

from __future__ import annotations

from sqhelpers import refused

W = "workload { arrive poisson(1); }\n"
S = "session { run svc (1); }\n"


def test_an_option_with_equals():
    refused("pool p { cap ⟨= 100; }\nstage svc : fifo;\n" + W + S, "`cap` takes its value without one, `cap …;`")
    refused("stage svc : fifo;\n" + W + S + "run { horizon ⟨= 100; }\n", "`horizon` takes its value without one")


def test_a_stage_kind_after_equals():
    refused("stage svc ⟨= fifo;\n" + W + S, "a stage's kind follows `:`, `stage svc : fifo;`")


def test_a_value_without_set():
    refused("stage svc : fifo;\n" + W + "session {\n  x ⟨= 1;\n  run svc (x);\n}\n",
            "begins with `set`, `set x = …;`")


def test_a_semicolon_after_a_block():
    refused("stage svc : fifo;\n" + W + "session {\n  branch (1 > 0) { run svc (1); }⟨;\n}\n",
            "unexpected `;` after a block")
