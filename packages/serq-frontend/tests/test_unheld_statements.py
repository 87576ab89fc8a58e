"""A ``load``, a ``grow`` or a growing run that stands in no hold of its pool is refused where the program is
read, at the pool's name (serq_ir.rules.unheld): language.txt §3 has each act on "the innermost enclosing
hold" on its pool, and a hold's scope is written around the statement (a definition's body and a queue's
entry are written out where they are used), so such a statement could never run. ``serq check`` said OK and
the run stopped at it (``load kv: outside a hold of kv``). A member chosen by a computed index is compared
when the statement runs, as before (test_conformance_audit2's run-time errors)."""

from __future__ import annotations

import msgspec
import pytest
import serq_ir
import serq_sim
from sqhelpers import compile_src, refused

TAIL = "run { horizon 10; }\n"


@pytest.mark.parametrize("src, message", [
    # at the session's top level
    ("pool kv { cap 9; }\nworkload { arrive batch(1); }\nsession { load ⟨kv (1); end; }\n" + TAIL,
     "`load kv` stands in no hold of `kv`: it acts on the innermost hold around it that holds `kv` (write it "
     "inside `hold kv (…) { … }`)"),
    ("pool kv { cap 9; }\nworkload { arrive batch(1); }\nsession { grow ⟨kv (1); end; }\n" + TAIL,
     "`grow kv` stands in no hold of `kv`"),
    # in a branch inside a loop, after a hold of the pool has ended
    ("pool kv { cap 9; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
     "session { hold kv (1) { run d (1); } loop { branch (now > 5) { grow ⟨kv (1); } run d (1); } }\n" + TAIL,
     "`grow kv` stands in no hold of `kv`"),
    # inside a hold of another pool
    ("pool kv { cap 9; }\npool reqs { cap 2; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
     "session { hold reqs (1) { load ⟨kv (1); } }\n" + TAIL,
     "`load kv` stands in no hold of `kv`"),
    # another member of a family, both written with numbers
    ("pool kv[2] { cap 9; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
     "session { hold kv[0] (2) { grow ⟨kv[1] (1); } }\n" + TAIL,
     "`grow kv[1]` stands in no hold of `kv[1]`: it acts on the innermost hold around it that holds `kv[1]` "
     "(write it inside `hold kv[1] (…) { … }`)"),
    # a transfer's KV lands in a hold of its destination (the statement as written is named)
    ("pool kv { cap 9; }\npool tier { cap 9; }\nstage link : delay;\nworkload { arrive batch(1); }\n"
     "session { hold tier (1) { transfer (1) from tier to ⟨kv (1); } }\n" + TAIL,
     "`transfer … to kv` stands in no hold of `kv`: it acts on the innermost hold around it that holds `kv`"),
    # a growing run
    ("pool kv { cap 90; block 1; }\nstage e : step { budget 8; cost 1; memory kv; }\nworkload { arrive batch(1); }\n"
     "session { run e prefill (3) growing ⟨kv; end; }\n" + TAIL,
     "`run … growing kv` stands in no hold of `kv`"),
    # written out of a definition's body, at its use: the caret at the pool the use passes
    ("pool kv { cap 9; }\ndef fill(p) { load p (1); }\nworkload { arrive batch(1); }\nsession { fill(⟨kv); end; }\n"
     + TAIL, "`load kv` stands in no hold of `kv`"),
])
def test_a_statement_in_no_hold_of_its_pool_is_refused_at_the_pool(src, message):
    refused(src, message)


@pytest.mark.parametrize("body", [
    # the hold around it, directly or around a hold of another pool
    "hold kv (4) { load kv (3); observe u = used(kv); } cache (9);",
    "hold kv (4) { hold reqs (1) { load kv (3); observe u = used(kv); } } cache (9);",
    # written out of a definition's body used inside the hold
    "hold kv (4) { fill(kv); observe u = used(kv); } cache (9);",
    # a grow, then a load: 1 + 3 allocated
    "hold kv (1) { grow kv (3); load kv (3); observe u = used(kv); } cache (9);",
])
def test_a_statement_in_a_hold_of_its_pool_runs(body):
    # the load advanced the hold's position to 3 (of 4 allocated), which its release caches (min(9, 3)) and the
    # next hold finds (cached 3)
    src = ("pool kv { cap 9; }\npool reqs { cap 2; }\ndef fill(p) { load p (3); }\nworkload { arrive batch(1); }\n"
           f"session {{ {body} hold kv (4) {{ observe h = cached; }} cache (9); end; }}\n" + TAIL)
    r = serq_sim.run(compile_src(src))
    assert (r.observe("u").values.tolist(), r.observe("h").values.tolist()) == ([4.0], [3.0])


def test_a_member_chosen_by_a_computed_index_is_judged_when_it_runs():
    # kv[serial] may be kv[0]: the link cannot tell, the run can (session 0 loads the member it holds; session 1
    # does not hold kv[0] and stops there)
    src = ("pool kv[2] { cap 9; }\nworkload { arrive batch(2); }\n"
           "session { hold kv[0] (2) { load kv[serial] (1); observe c = computed; } end; }\n" + TAIL)
    program = compile_src(src)
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(program)
    assert "session 1: load kv[1]: outside a hold of kv[1]" in str(e.value).splitlines()[0]


def test_an_ir_file_with_such_a_statement_is_refused_at_its_path():
    # the same rule in an IR file (serq_ir.validate): the load taken out of its hold, to the session's top level
    program = compile_src("pool kv { cap 9; }\nworkload { arrive batch(1); }\n"
                          "session { hold kv (2) { load kv (1); } end; }\n" + TAIL)
    hold = program.session[0]
    moved = msgspec.structs.replace(program, session=[hold.body[0], msgspec.structs.replace(hold, body=[]),
                                                      *program.session[1:]])
    data = serq_ir.encode(moved)
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(data)
    text = str(e.value)
    assert "$.session[0].pool" in text, text
    assert "`load kv` stands in no hold of `kv`" in text, text
    # and in place it is read back as it was written
    assert serq_ir.decode(serq_ir.encode(program)) == program
