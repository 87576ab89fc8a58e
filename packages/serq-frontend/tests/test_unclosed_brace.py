"""A file that ends inside a block is an error at the `{` left open, which says that its `}` is missing,
not at the end of the file without naming the brace; a `}` with no `{` open says it is one too many."""

from __future__ import annotations

from sqhelpers import refused

HEAD = "pool kv { cap 100; }\nstage svc : fifo;\nworkload { arrive poisson(1); }\n"


def test_the_block_whose_close_is_missing_by_the_indentation():
    # the hold's `}` is missing: the session's `}` (column 1) closed the hold (whose line is indented 2),
    # and the file ended with the session open; the `{` to close is the hold's
    refused(HEAD + "session {\n  hold kv (10) ⟨{\n    run svc (1);\n  end;\n}\n", "a `}` is missing: this `{`")


def test_nested_blocks_the_innermost_misindented_one():
    refused(HEAD + "session {\n  hold kv (1) {\n    branch (1 > 0) ⟨{\n      run svc (1);\n  }\n}\n",
            "a `}` is missing")


def test_no_indentation_to_go_by_the_innermost_open_brace():
    refused(HEAD + "session { hold kv (1) ⟨{ run svc (1);", "a `}` is missing")
    refused(HEAD + "session ⟨{\n  run svc (1);\n", "a `}` is missing")


def test_a_close_with_no_open_brace():
    refused(HEAD + "session {\n  run svc (1);\n}\n⟨}\n", "no `{` is open here")
