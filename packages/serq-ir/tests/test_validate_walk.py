"""validate's walk reads the rules' chain only for the node types the chain names (``validate._CHECKED``),
and keeps a node's JSON path as a chain written out for a message only: the list of types is held to the
chain's source, and the paths of refusals deep in a program are the ones written out in full."""

from __future__ import annotations

import ast
import inspect

import msgspec
import pytest
import serq_frontend
import serq_ir
from serq_ir import nodes as N
from serq_ir import rules, validate
from serq_ir.errors import IRError

pytestmark = pytest.mark.timeout(60)


def _walk_source() -> ast.FunctionDef:
    tree = ast.parse(inspect.getsource(validate))
    top = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "validate")
    return next(f for f in ast.walk(top) if isinstance(f, ast.FunctionDef) and f.name == "walk")


def _names(node: ast.expr) -> set[str]:
    """The class names in an isinstance's second argument: a name, a tuple of them, a union ``A | B``."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Tuple):
        return set().union(*(_names(e) for e in node.elts))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _names(node.left) | _names(node.right)
    if isinstance(node, ast.Attribute):  # msgspec.Struct
        return {node.attr}
    raise AssertionError(f"an isinstance of an unexpected form: {ast.dump(node)}")


def test_checked_types_are_the_chains():
    named: set[str] = set()
    for node in ast.walk(_walk_source()):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            obj = node.args[0]
            if isinstance(obj, ast.Name) and obj.id == "obj":
                named |= _names(node.args[1])
        # `Pool in mro`, `Attr not in mro`: obj's type's classes (validate._MROS), asked as isinstance was
        if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn)
                and isinstance(node.left, ast.Name) and isinstance(node.comparators[0], ast.Name)
                and node.comparators[0].id == "mro"):
            named.add(node.left.id)
        # `type(obj) is Preset`
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Call)
                and isinstance(node.left.func, ast.Name) and node.left.func.id == "type"
                and isinstance(node.left.args[0], ast.Name) and node.left.args[0].id == "obj"):
            for op, right in zip(node.ops, node.comparators):
                if isinstance(op, ast.Is) and isinstance(right, ast.Name):
                    named.add(right.id)
    named -= {"list", "Struct", "_INNER"}  # (the walk's own tests of what it holds)
    assert named == {t.__name__ for t in validate._CHECKED}


def test_every_node_type_is_walked_into():
    # a type the chain does not read is still entered: a dangling slot under a Cond, a Branch, a Loop
    every = [t for t in vars(N).values() if isinstance(t, type) and issubclass(t, msgspec.Struct)]
    assert {N.Cond, N.Branch, N.Loop, N.Num, N.Workload} <= set(every)
    unchecked = [t for t in every if not issubclass(t, validate._CHECKED)]
    assert N.Cond in unchecked and N.Branch in unchecked and N.Loop in unchecked


@pytest.mark.parametrize("path, want", [
    ("$", "$"),
    (("$", "session"), "$.session"),
    (((("$", "session"), 0), "then"), "$.session[0].then"),
    (((("$.stages[2].kind", "serve"), 1), "lhs"), "$.stages[2].kind.serve[1].lhs"),
])
def test_json_path_written_out(path, want):
    assert rules.json_path(path) == want


SOURCE = """stage s : delay;

workload {
  arrive poisson(1);
}

session {
  loop {
    branch (serial > 3) {
      set x = serial > 1 ? 2 : serial;
      end;
    } else {
      run s (1);
    }
  }
}
"""


def test_deep_paths_in_messages():
    # a dangling attribute slot under a loop, a branch and a conditional (types the chain does not read,
    # walked into): the message's path in full, as the walk meets it
    ir = msgspec.json.decode(serq_ir.encode(serq_frontend.compile(source=SOURCE)))
    n = len(ir["attributes"])
    stmt = ir["session"][0]["body"][0]["then"][0]
    assert stmt["kind"] == "Set" and stmt["value"]["kind"] == "Cond"
    stmt["value"]["orelse"]["slot"] = n + 5
    with pytest.raises(IRError) as e:
        serq_ir.decode(msgspec.json.encode(ir))
    assert "$.session[0].body[0].then[0].value.orelse.slot" in str(e.value)
    assert f"attribute slot {n + 5} does not exist" in str(e.value)
