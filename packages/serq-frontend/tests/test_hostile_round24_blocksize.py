"""blocksize(p) as a link-time constant (language.txt §2: "the pool's block, folded at link time"), attacked.

1. The member it names is checked as any pool reference checks one (``Linker.ref``): ``blocksize(m[2])`` of
   ``pool m[2]``, ``m[-1]``, ``m[0.5]`` and ``kv[1]`` of a lone pool were folded to the family's block, in a
   ``let`` and in a session's expression alike; they are refused at the index, "`m[2]`: `m` has members 0 … 1".
2. A pool's block is folded once: a chain of pools whose block reads the next one's twice was folded 2**n
   times (40 pools never ended), and every ``let`` reading ``blocksize`` built the table of the program's
   items again (10 000 lets: 6.7 s against 0.6 s without the call).
3. A long cycle of blocks is told by its ends: 500 pools in a ring made a message of 36 876 characters.
4. A block that is no positive, finite number is refused at the block even when a ``let`` reads it first:
   ``block 0/0`` under ``let B = blocksize(kv2)`` said "`let B` evaluates to NaN" at the let."""

from __future__ import annotations

import subprocess
import time

import pytest
from sqhelpers import SERQ, compile_src, hold_tail, ir_bytes, refused

pytestmark = pytest.mark.timeout(60)

TAIL = hold_tail("5")

POOLS = "pool m[2] { cap 64; block 4; }\npool kv { cap 64; }\n"


# --- 1. the member is checked -----------------------------------------------------------------------------------

@pytest.mark.parametrize("index, message", [
    ("m[⟨2]", "`m[2]`: `m` has members 0 … 1"),
    ("m[⟨-1]", "`m[-1]`: `m` has members 0 … 1"),
    ("m[⟨0.5]", "`m[0.5]`: `m` has members 0 … 1"),
    ("m[⟨1 / 0]", "`m[inf]`: `m` has members 0 … 1"),
    # kv is declared without a size: one pool, which takes no index (test_fleet_round47_not_a_family)
    ("kv[⟨1]", "`kv[…]`: `kv` is one pool, not a family (declared without a size), and takes no index"),
])
def test_a_member_out_of_range_is_refused_in_a_let_and_in_a_sessions_expression_alike(index, message):
    refused(f"let B = blocksize({index});\n" + POOLS + TAIL, message)
    refused("let B = 2;\n" + POOLS + TAIL.replace("hold kv (B)", f"hold kv (blocksize({index}))"), message)


def test_a_member_in_range_is_the_familys_block_and_a_computed_index_reads_it_too():
    # m's block is 4; kv has no block, so 1 (docs/language.md); m[1 + 0] is m[1]; kv is the lone pool (declared
    # without a size, it takes no index: test_fleet_round47_not_a_family)
    written = "let B = 9;\n" + POOLS + TAIL
    for read in ("blocksize(m[1 + 0]) + blocksize(m[0]) + blocksize(kv)",
                 "sum j in 2 (blocksize(m[j])) + blocksize(kv)"):
        assert ir_bytes(compile_src(f"let B = {read};\n" + POOLS + TAIL)) == ir_bytes(compile_src(written))
    # an index read at run time names a member the linker cannot check; the members share the block, 4
    session = TAIL.replace("hold kv (B) {", "set i = 1;\n  hold kv (blocksize(m[i]) * 2) {")
    assert ir_bytes(compile_src("let B = 2;\n" + POOLS + session)) == \
        ir_bytes(compile_src("let B = 2;\n" + POOLS + session.replace("blocksize(m[i]) * 2", "8")))


def test_a_let_that_names_a_member_by_what_is_no_constant_is_refused_at_that_name():
    refused("let B = blocksize(m[⟨i]);\n" + POOLS + TAIL, "`let B` is not a constant: it reads `i`")


# --- 2. each block is folded once -------------------------------------------------------------------------------

def test_a_chain_of_blocks_each_reading_the_next_twice_folds_in_a_moment():
    # p_k's block is (p_{k+1} + p_{k+1}) / 2, the last 4: every block is 4, so B = 4
    n = 40
    pools = "".join(f"pool p{k} {{ cap 64; block (blocksize(p{k + 1}) + blocksize(p{k + 1})) / 2; }}\n"
                    for k in range(n - 1)) + f"pool p{n - 1} {{ cap 64; block 4; }}\n"
    begun = time.monotonic()
    read = compile_src("let B = blocksize(p0);\n" + pools + "pool kv { cap 64; }\n" + TAIL)
    assert time.monotonic() - begun < 5
    written = "let B = 4;\n" + "".join(f"pool p{k} {{ cap 64; block 4; }}\n" for k in range(n)) + \
        "pool kv { cap 64; }\n" + TAIL
    assert ir_bytes(read) == ir_bytes(compile_src(written))


def _lets_reading_blocksize(n: int) -> tuple[str, str]:
    lets = "".join(f"let a{k} = a{k - 1} + blocksize(kv) - 4;\n" for k in range(1, n))
    src = "pool kv { cap 64; block 4; }\nlet a0 = blocksize(kv);\n" + lets + f"let B = a{n - 1};\n" + TAIL
    plain = src.replace(" + blocksize(kv) - 4;", " + 0;").replace("let a0 = blocksize(kv);", "let a0 = 4;")
    return src, plain


def test_a_thousand_lets_reading_blocksize_build_the_pool_table_as_often_as_ten(monkeypatch):
    # the work counted, not timed: the table of the program's pools is built a fixed number of times whatever
    # the number of lets reading blocksize (it was built again for every one: 10 000 lets took 6.7 s against
    # 0.6 s without the call). A count needs no long program to tell: built once a let, 1 000 lets count
    # 1 000 builds against 10's 10
    from serq_frontend.context import Context

    builds = [0]
    real = Context._pool_table

    def counted(self):
        key = (id(self.module.items), len(self.module.items))
        if self._pools is None or self._pools[0] != key:
            builds[0] += 1
        return real(self)

    monkeypatch.setattr(Context, "_pool_table", counted)
    counts = {}
    for n in (10, 1_000):
        src, plain = _lets_reading_blocksize(n)
        builds[0] = 0
        program = compile_src(src)
        counts[n] = builds[0]
        assert ir_bytes(program) == ir_bytes(compile_src(plain))
    assert 1 <= counts[1_000] == counts[10], counts


# --- 3. a long cycle ---------------------------------------------------------------------------------------------

def test_a_cycle_through_500_blocks_is_named_by_its_ends_in_a_message_of_a_few_lines():
    n = 500
    pools = "".join(f"pool p{k} {{ cap 64; block blocksize(p{(k + 1) % n}); }}\n" for k in range(n))
    e = refused("let B = 2;\n" + pools.replace("block blocksize(p1)", "block ⟨blocksize(p1)", 1)
                + "pool kv { cap 64; }\n" + TAIL,
                "a cycle of constants: the block of pool `p1` (declared at 3:1) reads `blocksize(p2)`, and the block "
                "of pool `p2` (declared at 4:1) reads `blocksize(p3)`, and the block of pool `p3` (declared at 5:1) "
                "reads `blocksize(p4)`, and 494 more blocks each reading the next, and the block of pool `p498` "
                "(declared at 500:1) reads `blocksize(p499)`, and the block of pool `p499` (declared at 501:1) "
                "reads `blocksize(p0)`, and the block of pool `p0` (declared at 2:1) reads `blocksize(p1)`; a "
                "constant cannot be computed from itself")
    assert len(str(e)) < 1000


def test_a_cycle_of_six_blocks_is_told_whole():
    n = 6
    pools = "".join(f"pool p{k} {{ cap 64; block blocksize(p{(k + 1) % n}); }}\n" for k in range(n))
    e = refused("let B = 2;\n" + pools.replace("block blocksize(p1)", "block ⟨blocksize(p1)", 1)
                + "pool kv { cap 64; }\n" + TAIL, "a cycle of constants: the block of pool `p1`")
    assert all(f"the block of pool `p{k}`" in str(e) for k in range(n))
    assert "more blocks" not in str(e)


# --- 4. a block that is no positive, finite number ---------------------------------------------------------------

@pytest.mark.parametrize("block, said", [
    ("0 / 0", "evaluates to NaN"),
    ("blocksize(kv) * 0", "must be a positive, finite number of units, not 0"),
    ("-blocksize(kv)", "must be a positive, finite number of units, not -4"),
    ("1 / 0", "must be a positive, finite number of units, not inf"),
])
def test_a_block_a_let_reads_is_refused_at_the_block(block, said):
    refused(f"let B = blocksize(kv2);\npool kv {{ cap 64; block 4; }}\npool kv2 {{ cap 64; block ⟨{block}; }}\n"
            + TAIL, f"the block of pool `kv2` {said}")


def test_a_set_that_makes_the_block_zero_is_named_beside_it():
    refused("let bs = 4;\nlet B = blocksize(kv);\npool kv { cap 64; block ⟨bs - 8; }\n" + TAIL,
            "the block of pool `kv` must be a positive, finite number of units, not 0 (`bs` is 8, given in place "
            "of its `let` at 1:1)", sets={"bs": 8})


def test_a_fractional_block_and_one_of_2_to_the_60_fold_through_a_let():
    # 12 / 3 / 3 = 4/3; 2**60 exactly
    for block, value in (("blocksize(kv) / 3", "4 / 3"), ("pow(2, 60)", "1152921504606846976")):
        src = f"let B = 2 * blocksize(kv2);\npool kv {{ cap 64; block 4; }}\npool kv2 {{ cap inf; block {block}; }}\n"
        written = f"let B = 2 * ({value});\npool kv {{ cap 64; block 4; }}\npool kv2 {{ cap inf; block {value}; }}\n"
        assert ir_bytes(compile_src(src + TAIL)) == ir_bytes(compile_src(written + TAIL))


def test_serq_check_of_an_out_of_range_member_is_one_message_and_exit_1(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text("let B = blocksize(m[2]);\n" + POOLS + TAIL)
    r = subprocess.run([SERQ, "check", str(p)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert r.stderr.splitlines()[0].endswith("p.sq:1:21: error: `m[2]`: `m` has members 0 … 1")
    assert r.stderr.splitlines()[2] == " " * 22 + "^"


# --- 5. a member named in its own family's size -----------------------------------------------------------------

def test_a_familys_size_may_read_the_block_of_its_own_member_and_the_member_is_checked_against_it():
    # m's block is 2, so m has 2 members: m[1] is one of them, m[2] and m[5] are not (the check of the member
    # folded the size, which read the member again, without end: "the program nests too deeply to compile")
    src = "pool kv { cap 64; }\npool m[blocksize(m[K])] { cap 4; block 2; }\nlet B = 1;\n" + TAIL
    assert ir_bytes(compile_src(src.replace("K", "1"))) == ir_bytes(compile_src(src.replace("blocksize(m[K])", "2")))
    for k in (2, 5):
        refused(src.replace("K", f"⟨{k}"), f"`m[{k}]`: `m` has members 0 … 1")
    # two families whose sizes read each other's block (each 2), and a queue's family its own pool's
    two = "pool kv { cap 64; }\npool m[blocksize(n[1])] { cap 4; block 2; }\npool n[blocksize(m[1])] { cap 4; block 2; }\n"
    assert ir_bytes(compile_src(two + "let B = 1;\n" + TAIL)) == ir_bytes(compile_src(
        two.replace("blocksize(n[1])", "2").replace("blocksize(m[1])", "2") + "let B = 1;\n" + TAIL))
    queue = ("pool kv { cap 64; }\nqueue P[N] : prefill { pool kv { cap 96; block 2; } serve delay; prefill (p) { "
             "hold kv (p) { run (1); } } }\nlet B = 1;\n")
    assert ir_bytes(compile_src(queue.replace("N", "blocksize(P[1].kv)") + TAIL)) == \
        ir_bytes(compile_src(queue.replace("N", "2") + TAIL))


@pytest.mark.parametrize("size, message", [
    ("1 / 0", "the size of pool `m` must be an integer of at least 1, not inf"),
    ("0", "the size of pool `m` must be an integer of at least 1, not 0"),
    ("-1", "the size of pool `m` must be an integer of at least 1, not -1"),
    ("1.5", "the size of pool `m` must be an integer of at least 1, not 1.5"),
    ("0 / 0", "the size of pool `m` evaluates to NaN"),
    ("pow(2, 40)", "the pool `m` (a family of 1099511627776) makes more than 100000 pools"),
])
def test_a_member_of_a_family_whose_size_is_no_size_is_told_at_the_size(size, message):
    # the member was checked against the size first: "`m[-1]`: `m` has members 0 … -1" (size 0), "0 … …" (inf)
    refused(f"let B = blocksize(m[-1]);\npool m[⟨{size}] {{ cap 64; block 4; }}\npool kv {{ cap 64; }}\n" + TAIL,
            message)
