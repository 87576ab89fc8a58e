"""A pool family's cap may read `member(X)` of a family of its size named without an index, each member its
own index (docs/language.md, "A family's members' caps"): the IR gives each member's cap (`caps`) where
they differ, and the one `cap` where they do not, so a program that does not read its members compiles as it
did. A cap that cannot be one is told at it, naming the member."""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, ir_bytes, told

pytestmark = pytest.mark.timeout(60)


def program(cap: str, size: str = "2", extra: str = "") -> str:
    return (f"let N = {size};\n"
            f"pool kv[N] {{ cap {cap}; }}\n"
            "stage s[N] : fifo;\n"
            f"{extra}"
            "workload { arrive poisson(1); }\n"
            "session { hold kv[0] (1) { run s[0] (1); } }\n"
            "run { horizon 10; }\n")


@pytest.mark.parametrize("cap, caps", [
    ("member(kv) == 0 ? 8000 : 2000", [8000.0, 2000.0]),
    ("1000 * (member(s) + 1)", [1000.0, 2000.0]),          # a stage family of the pool's size
    ("max(1, member(kv)) * 4", [4.0, 4.0]),                 # the same for both: one cap
    ("member(kv) == 1 ? inf : 4", [4.0, "inf"]),
])
def test_each_members_cap_is_the_expression_at_its_index(cap, caps):
    pool = compile_src(program(cap)).pools[0]
    if len(set(caps)) == 1:
        assert pool.caps is None and pool.cap == caps[0]
    else:
        assert pool.caps == caps and pool.cap == "inf"


def test_a_cap_of_one_value_is_the_ir_of_that_cap():
    assert ir_bytes(compile_src(program("member(kv) >= 0 ? 16 : 1"))) == ir_bytes(compile_src(program("16")))
    # a family of one, and a pool declared without a size (member 0)
    assert ir_bytes(compile_src(program("member(kv) + 3", "1"))) == ir_bytes(compile_src(program("3", "1")))
    lone = "pool q { cap 2 + member(q); }\n"
    assert compile_src(program("4", extra=lone)).pools[1].cap == 2.0


def test_a_let_sizes_the_fleet_and_a_set_changes_it():
    p = compile_src(program("member(kv) < N - 1 ? 10 : 1", "3"))
    assert p.pools[0].caps == [10.0, 10.0, 1.0]


def test_a_family_of_another_size_is_told_at_its_member():
    said = told("pool other[3] { cap 1; }\n" + program("⟨member(other) + 1"))
    assert said == ("`member(other)` in the cap of pool `kv`: `other` is a family of 3 and `kv` one of 2; a "
                    "family's cap reads the index of a family of its size, each member its own (`member(kv)`)")


def test_a_members_negative_or_nan_cap_is_told_naming_the_member():
    assert told(program("⟨member(kv) == 1 ? -1 : 5")) == "the cap of pool `kv[1]` is negative (-1)"
    assert told(program("⟨member(kv) == 0 ? 0 / 0 : 5")) == "the cap of pool `kv[0]` evaluates to NaN"


def test_what_is_no_constant_is_still_told_as_before():
    said = told(program("member(kv) + ⟨used(kv[0])"))
    assert said.startswith("the cap of pool `kv[0]` must be a constant (numbers and `let`s): it reads")


def test_a_queue_familys_own_pool_reads_its_members_index():
    src = ("queue D[2] : decode {\n"
           "  pool kv { cap member(kv) == 0 ? 100 : 50; }\n"
           "  serve fifo;\n"
           "  decode (p) { hold kv (p) { run (p); } }\n"
           "}\n"
           "workload { arrive poisson(1); }\n"
           "session { set j = serial % 2; D[j].decode (4); }\n"
           "run { horizon 10; }\n")
    pool = compile_src(src).pools[0]
    assert (pool.name, pool.caps) == ("D.kv", [100.0, 50.0])
