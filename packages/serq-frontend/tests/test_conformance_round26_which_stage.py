"""A serving form without `on` finds its stage among the stages declared above it, as both texts say:

* language.txt §2, Which stage: "A form finds its stage among the stages declared above it (declarations
  come first in every program here): the stage whose name is the role's, …; failing that, for prefill and
  decode, the step engine";
* program-reference.txt: "Items are read in order and declarations come first: a serving form finds its
  stage among the stages declared above it", and of `def`: "a serving form in it finds its stage at the use".

The rule looked at every stage of the program, so a stage named after the role declared below the form
took the form from the step engine declared above it (`prefill (4);` ran as a plain run on the delay stage
`prefill`, not as the engine's prefill), and two step engines, one above and one below, were "several".
The IR of every tracked .sq file is the same.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, ir_bytes, refused

HEAD = """pool kv { cap 100; }
stage E : step { budget 10; cost 1; memory kv; }
"""
TAIL = """workload { arrive batch(1); session { request; } }
server { hold kv (4) { FORM } }
"""


def _same(a: str, b: str) -> None:
    assert ir_bytes(compile_src(a)) == ir_bytes(compile_src(b))


@pytest.mark.parametrize("form, explicit", [("prefill (4);", "prefill on E (4);"),
                                            ("decode (4);", "decode on E (4);")])
def test_a_stage_named_after_the_role_below_the_form_is_not_its_stage(form, explicit):
    below = "stage prefill : delay;\nstage decode : delay;\nrun { horizon 10; }\n"
    _same(HEAD + TAIL.replace("FORM", form) + below, HEAD + TAIL.replace("FORM", explicit) + below)


def test_a_stage_named_after_the_role_above_the_form_is_its_stage():
    above = HEAD + "stage prefill : delay;\n"
    _same(above + TAIL.replace("FORM", "prefill (4);"), above + TAIL.replace("FORM", "prefill on prefill (4);"))


def test_of_two_step_engines_the_one_above_is_the_one():
    below = "stage F : step { budget 10; cost 1; }\nrun { horizon 10; }\n"
    _same(HEAD + TAIL.replace("FORM", "prefill (4);") + below, HEAD + TAIL.replace("FORM", "prefill on E (4);") + below)


def test_a_form_above_every_stage_that_could_serve_it_is_refused_at_the_form():
    src = ("pool kv { cap 100; }\nworkload { arrive batch(1); session { request; } }\n"
           "server { hold kv (4) { ⟨prefill (4); } }\nstage E : step { budget 10; cost 1; memory kv; }\n")
    refused(src, "unknown stage in a serving form: `prefill` finds no stage to run on (it needs a stage named "
                 "`prefill` or one step engine); declare one above, or write `prefill on STAGE …`")


def test_a_definitions_form_finds_its_stage_at_the_use():
    """The definition is written above the stages and used below them: its form runs on E."""
    d = "def pre(n) { prefill (n); }\n"
    _same(d + HEAD + TAIL.replace("FORM", "pre(4);"), HEAD + TAIL.replace("FORM", "prefill on E (4);"))


def test_a_definitions_form_used_above_the_stages_is_refused():
    src = ("def pre(n) { ⟨prefill (n); }\npool kv { cap 100; }\nworkload { arrive batch(1); session { request; } }\n"
           "server { hold kv (4) { pre(4); } }\nstage E : step { budget 10; cost 1; memory kv; }\n")
    e = refused(src, "unknown stage in a serving form: `prefill` finds no stage to run on")
    assert "pre" in str(e)  # the note naming the use
