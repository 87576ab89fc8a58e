"""An item's word or a workload's inside a block: the next item of a block whose `}` is missing (the
error at that block's `{`), an item written inside a block, a workload's `arrive` in the session. Each
was an 'unexpected' error at the token after the word, naming none of this."""

from __future__ import annotations

from sqhelpers import refused

HEAD = "pool kv { cap 100; }\nstage svc : fifo;\nworkload { arrive poisson(1); }\n"


def test_the_next_item_after_a_block_left_open():
    refused(HEAD + "session ⟨{\n  run svc (1);\n\nrun { horizon 10; }\n",
            "a `}` is missing: this `{` is not closed before `run` at 7:1, which begins an item")
    refused(HEAD + "session {\n  hold kv (1) ⟨{\n    run svc (1);\n  end;\n}\nstage t : fifo;\n",
            "not closed before `stage` at 9:1")


def test_an_item_inside_a_block():
    refused(HEAD + "session {\n  run svc (1);\n  ⟨stage t : fifo;\n}\n",
            "`stage` begins an item: write it at the top level")
    refused(HEAD + "session {\n  ⟨run { horizon 10; }\n}\n", "`run` begins an item")


def test_a_workload_item_in_the_session():
    refused(HEAD + "session {\n  ⟨arrive poisson(1);\n}\n", "it belongs in `workload { … }`")


def test_run_as_a_statement_is_not_taken_for_the_item():
    refused(HEAD + "session {\n  run ⟨;\n}\n", "unexpected `;`")


def test_a_workload_item_in_the_workload_is_not_misplaced():
    # the error in `arrive poison(1)` is the misspelt word, not where `arrive` stands
    refused("stage svc : fifo;\nworkload { arrive ⟨poison(1); }\nsession { run svc (1); }\n",
            "(did you mean `poisson`?)")
    refused("stage svc : fifo;\nworkload {\n  arrive poisson(1);\n  session ⟨;\n}\nserver { run svc (1); }\n",
            "unexpected `;`")
