"""A Program built in Python may use one node object at several places (``e = Binary("+", e, e)``, forty times:
forty objects), which every walk of the program takes as a tree of that many copies: 2**40 nodes, and
serq_ir.checked (what serq_sim.run and serq_ir.encode call) never ended in msgspec.to_builtins; 2**19 took the
simulator's set-up 12 s and 870 MB. Such a program's tree is now counted an object once, and one of more than
rules.MAX_TREE nodes is refused at once. A program with no shared node (every one read from a file) is judged
as before, whatever its size."""

from __future__ import annotations

import msgspec
import pytest
import serq_ir
from ir_programs import mm1
from serq_ir import IRError
from serq_ir import nodes as N
from serq_ir.codec import checked
from serq_ir.rules import MAX_TREE, shared_problem


def doubled(k: int):
    """mm1 with its first `set` given ``now`` added to itself ``k`` times over, one object at each level."""
    program = mm1()
    e = N.Ctx(name="now")
    for _ in range(k):
        e = N.Binary(op="+", lhs=e, rhs=e)
    at = next(i for i, s in enumerate(program.session) if isinstance(s, N.Set))
    session = list(program.session)
    session[at] = msgspec.structs.replace(session[at], value=e)
    return msgspec.structs.replace(program, session=session), at


def test_a_program_of_many_copies_of_one_node_is_refused_at_once():
    program, _ = doubled(40)
    with pytest.raises(IRError) as info:
        checked(program, name="p")
    # the set's value is 2**41 - 1 nodes (2**40 leaves): far past the bound, counted without walking it
    message = str(info.value)
    assert message.startswith("error: p: the program, each node written out where it stands, has "), message
    assert f"more than {MAX_TREE}: a node object is used at several places" in message
    assert message.endswith("- at '$'")
    with pytest.raises(IRError):
        serq_ir.encode(program)


def test_the_count_is_the_trees():
    assert shared_problem(mm1()) is None
    # with `now` as the set's value the tree is mm1's own, walked as one here; the doubled value is 2**21 - 1
    # nodes where that one node was
    plain, _ = doubled(0)
    problem = shared_problem(doubled(20)[0])
    assert problem is not None
    assert problem[1].startswith(f"the program, each node written out where it stands, has "
                                 f"{_tree(plain) - 1 + 2**21 - 1} nodes, more than {MAX_TREE}"), problem


def test_a_program_sharing_nodes_below_the_bound_is_judged_as_before():
    program, _ = doubled(10)  # 2**11 - 1 nodes in the set
    assert checked(program, name="p") == checked(serq_ir.decode(serq_ir.encode(program)), name="p")


def _walk(e):
    todo = [e]
    while todo:
        x = todo.pop()
        yield x
        for f in x.__struct_fields__:
            v = getattr(x, f)
            if f != "span" and isinstance(v, msgspec.Struct):
                todo.append(v)
            elif f != "span" and isinstance(v, list):
                todo.extend(y for y in v if isinstance(y, msgspec.Struct))


def _tree(program) -> int:
    return sum(1 for _ in _walk(program))
