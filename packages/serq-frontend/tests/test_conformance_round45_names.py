"""language.txt §2: "Session attributes, let constants and the names the language supplies (the context variables,
inf) have names of their own … Every name assigned by set or choose is a session attribute." A `choose` that
takes a supplied name is refused as a `set` of it is, and the refusal now shows the statement as written: it
said "(`set present = …` would shadow it)" at a `choose present in …` (found by conformance round 45)."""

from __future__ import annotations

import pytest
from sqhelpers import told

S = "stage s[2] : delay;\nworkload { arrive batch(1); }\n"


@pytest.mark.parametrize("stmt, name, what", [
    ("choose present in 2 by (queue(s[present]));", "present", "a context variable"),
    ("choose now in 2 by (1);", "now", "a context variable"),
    ("choose inf in 2 by (1);", "inf", "the language's infinity"),
])
def test_a_choose_of_a_supplied_name_is_told_as_written(stmt, name, what):
    said = told(S + "session { ⟨" + stmt + " run s[0] (1); }\n")
    assert said == (f"`{name}` is {what}; an attribute needs another name (`choose {name} in …` would shadow "
                    "it)"), said


@pytest.mark.parametrize("name, what", [("present", "a context variable"), ("inf", "the language's infinity")])
def test_a_set_of_a_supplied_name_is_told_as_before(name, what):
    said = told(S + "session { ⟨set " + name + " = 1; run s[0] (1); }\n")
    assert said == f"`{name}` is {what}; an attribute needs another name (`set {name} = …` would shadow it)"


def test_the_same_names_as_a_chooses_index_elsewhere_are_the_programs():
    """The refusal is of the supplied names only: `choose j …` beside a `let` or an attribute of another
    name links."""
    from sqhelpers import compile_src

    compile_src("let J = 2;\n" + S + "session { choose j in J by (queue(s[j])); run s[j] (1); }\n", sets={}, defs={})
