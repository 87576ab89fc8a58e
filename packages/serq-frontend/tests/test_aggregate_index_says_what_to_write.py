"""An aggregate whose index may not take its name says, in a whole sentence, what to write instead.

The five refusals of an index (a name the program has, the index of the aggregate around it, a binding of
`at admission`, a name of a queue's entry, a definition's parameter) ended "give the index its own", which
reads as cut short and names nothing. Each now offers a name and the rewrite: ``give the index a name of its
own: write `sum j2 in …` and `j2` in its body``; doing what it says makes the program compile.
"""

from __future__ import annotations

import re

import pytest
import serq_frontend
from sqhelpers import compile_src

pytestmark = pytest.mark.timeout(60)

TAIL = ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
        "run { horizon 5; }\n")

QUEUE = """queue P[2] : prefill {
  pool kv { cap 1000; }
  serve fifo;
  prefill (p) { hold kv (max p in 2 (p)) { run (p); } }
}
session { P[0].prefill (5); }
"""


CASES = [
    # (program, the message's head, the name offered, how to write the offer into the program)
    (TAIL + "session { set j = 1; set x = sum j in 2 (j); run s (x); }\n",
     "`sum j in …`: `j` is a name the program has already; ", "sum", "j",
     lambda s: s.replace("sum j in 2 (j)", "sum j2 in 2 (j2)")),
    (TAIL + "session { set j2 = 1; set x = sum j2 in 2 (j2); run s (x); }\n",
     "`sum j2 in …`: `j2` is a name the program has already; ", "sum", "j2",
     lambda s: s.replace("sum j2 in 2 (j2)", "sum j22 in 2 (j22)")),
    (TAIL + "session { set x = sum j in 2 (max j in 3 (j)); run s (x); }\n",
     "`max j in …`: `j` is the index of the aggregate around it (`sum j in …` at 4:19); ", "max", "j",
     lambda s: s.replace("max j in 3 (j)", "max j2 in 3 (j2)")),
    ("pool kv { cap 10; }\n" + TAIL + "session { hold kv (max h in 2 (h)) at admission (h = 5) { run s (1); } }\n",
     "`max h in …`: `h` is a binding of this `at admission`; ", "max", "h",
     lambda s: s.replace("max h in 2 (h)", "max h2 in 2 (h2)")),
    ("def f(j) = sum j in 2 (j);\n" + TAIL + "session { set x = f(1); run s (x); }\n",
     "`sum j in …`: `j` is a parameter of `f`; a parameter is substituted, so ", "sum", "j",
     lambda s: s.replace("sum j in 2 (j)", "sum j2 in 2 (j2)")),
    ("workload { arrive poisson(1); }\nrun { horizon 5; }\n" + QUEUE,
     "`max p in` inside queue `P`: `p` is a name of the entry; ", "max", "p",
     lambda s: s.replace("max p in 2 (p)", "max p2 in 2 (p2)")),
]


@pytest.mark.parametrize("src, head, op, var, fix", CASES)
def test_the_refusal_says_what_to_write_and_writing_it_compiles(src, head, op, var, fix):
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(src)
    first = str(info.value).splitlines()[0]
    offered = f"{var}2" if var != "j2" else "j22"
    assert first.endswith(head + f"give the index a name of its own: write `{op} {offered} in …` and "
                          f"`{offered}` in its body"), first
    assert not re.search(r"its own$", first)
    fixed = fix(src)
    assert fixed != src
    compile_src(fixed)
