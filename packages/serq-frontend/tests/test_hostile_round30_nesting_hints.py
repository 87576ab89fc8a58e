"""A program refused for how deep it nests is told the limits and how to keep to them, and the program
written as the message says compiles and runs to the same values.

`1 + 1 + … + 1` of 1 000 terms or more (a chain nests a level a term) and 1 000 `hold`s inside one another
were refused as "the program nests more than 1000 deep here (expressions and blocks inside one another)":
the limit of the parse, and nothing of the linker's 64 and 32 a program that compiles keeps to, nor of what
to write instead, which a chain of 100 terms was told ("name a part with `set` or a `def`"). 33 loops,
branches and holds inside one another were "loops, branches and holds nest more than 32 deep here", with
no way out either."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

HINT = ("an expression may nest 64 deep and loops, branches and holds 32: name a part with `set`, or write a "
        "long chain of terms as `sum j in n (…)`")
BLOCKS = ("loops, branches and holds nest more than 32 deep here; a branch in a branch is one branch on both tests "
          "(`branch (a && b) { … }`), and a hold of pools taken together one hold (`hold P (u), Q (v) { … }`)")


def program(body: str, items: str = "") -> str:
    return (f"stage s : delay;\n{items}workload {{ arrive poisson(1); }}\nsession {{\n{body}\n  run s (1);\n}}\n"
            "run { horizon 20; seed 7; }\n")


def refusal(source: str) -> str:
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=source)
    return str(info.value).splitlines()[0]


def observed(source: str) -> list[float]:
    return serq_sim.run(serq_frontend.compile(source=source)).observe("o").values.tolist()


@pytest.mark.parametrize("terms", [1000, 10_000])
def test_a_long_chain_of_terms_is_told_the_limits_and_the_sum_it_can_be(terms):
    message = refusal(program(f"  set x = {' + '.join(['now'] * terms)};\n  observe o = x;"))
    assert message.startswith("<source>:4:") and message.endswith(
        "error: the program nests more than 1000 deep here (expressions and blocks inside one another); " + HINT)
    # as the message says: the chain named in parts of 50 terms (and those in parts of 50), or a sum, is the
    # chain's value: every sample is now times the number of terms, up to the rounding of the additions
    parts = "\n".join(f"  set p{i} = {' + '.join(['now'] * 50)};" for i in range(terms // 50))
    wholes = "\n".join(f"  set q{k} = {' + '.join(f'p{i}' for i in range(k, min(k + 50, terms // 50)))};"
                       for k in range(0, terms // 50, 50))
    chained = observed(program(f"{parts}\n{wholes}\n  set x = {' + '.join(f'q{k}' for k in range(0, terms // 50, 50))};"
                               "\n  observe o = x;"))
    summed = observed(program(f"  set x = sum j in {terms} (now);\n  observe o = x;"))
    times = observed(program(f"  set x = now * {terms};\n  observe o = x;"))
    assert len(chained) == len(summed) == len(times) > 5
    for a, b, c in zip(chained, summed, times, strict=True):
        assert a == pytest.approx(c, rel=1e-12) and b == pytest.approx(c, rel=1e-12)


def test_a_run_of_brackets_past_the_parsers_stack_is_told_the_same_limits():
    source = "let x = " + "(" * 60_000 + "1" + ")" * 60_000 + ";\n" + program("  set y = 1;")
    assert refusal(source).endswith("error: the program nests more than 1000 deep here (expressions, brackets and "
                                    "blocks inside one another); " + HINT)


def test_holds_nested_too_deeply_are_told_the_hold_of_pools_together():
    pools = "".join(f"pool p{i} {{ cap 100; }}\n" for i in range(33))
    nested = "".join(f"hold p{i} (1) {{ " for i in range(33)) + "observe o = used(p0) + used(p32);" + " }" * 33
    message = refusal(program(nested, pools))
    assert message.startswith("<source>:37:") and message.endswith("error: " + BLOCKS)  # (at the 33rd hold)
    together = f"hold {', '.join(f'p{i} (1)' for i in range(33))} {{ observe o = used(p0) + used(p32); }}"
    values = observed(program(together, pools))
    # a session holds 1 of each pool only while it observes (the run is after the hold): 1 + 1, every time
    assert len(values) > 5 and set(values) == {2.0}


def test_branches_nested_too_deeply_are_told_the_branch_on_both_tests():
    tests = [f"now > {i / 100}" for i in range(33)]
    nested = "".join(f"branch ({t}) {{ " for t in tests) + "observe o = now;" + " }" * 33
    assert refusal(program(nested)).endswith("error: " + BLOCKS)
    # 32 inside one another still compile, and are the one branch on all the tests
    inner = "".join(f"branch ({t}) {{ " for t in tests[:32]) + "observe o = now;" + " }" * 32
    joined = f"branch ({' && '.join(tests)}) {{ observe o = now; }}"
    deep, flat = observed(program(inner)), observed(program(joined))
    assert deep and [t for t in deep if t > 0.32] == [t for t in flat]
