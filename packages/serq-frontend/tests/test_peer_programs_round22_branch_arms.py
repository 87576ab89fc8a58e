"""A `set` in one arm of a branch is not before a use of a statement definition in the other arm.

An llm-d engineer wrote one program of two ways of serving the same GPUs, disaggregated or co-located,
`branch (disagg) { …; set c = cached; …; record request { …; cached = c; } } else { vllm_request(…); }`,
to compare them with `serq compare --set disagg=0,1`. The compile warned that `c` "is set here, and the use of
`vllm_request` … sets it again before reading it": the warning took the branch's arms in the text's order,
so the `then` arm's set counted as before the `else` arm's use, which never runs after it in one pass. The
arms are now taken each after what came before the branch (serq_frontend.sugar.defs, `_arms`); after the
branch, each arm's sets stand before a later use, and a set before the branch stands unless an arm's use
has told of it (one warning a set). The IR is unchanged: these are warnings.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_ir

pytestmark = pytest.mark.timeout(60)

DEFS = """def zero() { set n = 0; set m = 0; }
let flag = 1;
stage s : delay;
workload { arrive poisson(1); }
session {
BODY
  observe x = n + m;
  end;
}
run { horizon 10; seed 1; }
"""


def _told(capsys, body):
    """The (line, name, use line) of each warning compiling ``body``; and the IR."""
    ir = serq_ir.encode_pretty(serq_frontend.compile(source=DEFS.replace("BODY", body)), spans=False)
    err = capsys.readouterr().err
    out = []
    for line in err.splitlines():
        if ": warning: " in line:
            at = int(line.split(":")[1])
            name = line.split("`")[1]
            use = int(line.split("the use of `zero` at <source>:")[1].split(":")[0])
            out.append((at, name, use))
    return out, ir


@pytest.mark.parametrize("body, told", [
    # the then arm's set, the else arm's use: never one after the other (lines from 6)
    ("  branch (flag) {\n    set n = 5;\n  } else {\n    zero();\n  }", []),
    ("  branch with (0.5) {\n    set n = 5;\n  } else {\n    zero();\n  }", []),
    # the use in the then arm, a set in the else arm: after it in the text, not before it
    ("  branch (flag) {\n    zero();\n  } else {\n    set n = 5;\n  }", []),
    # a set before the branch is before a use in either arm
    ("  set n = 5;\n  branch (flag) {\n    set y = 1;\n  } else {\n    zero();\n  }", [(6, "n", 10)]),
    ("  set n = 5;\n  branch (flag) {\n    zero();\n  } else {\n    set y = 1;\n  }", [(6, "n", 8)]),
    # each arm's set is before a use after the branch
    ("  branch (flag) {\n    set n = 5;\n  } else {\n    set m = 6;\n  }\n  zero();", [(7, "n", 11), (9, "m", 11)]),
    # a set before the branch that an arm's use told of is told once, not again at the use after it
    ("  set n = 5;\n  branch (flag) {\n    zero();\n  }\n  zero();", [(6, "n", 8)]),
    ("  set n = 5;\n  branch (flag) {\n    set y = 1;\n  } else {\n    zero();\n  }\n  zero();", [(6, "n", 10)]),
    # one untold by both arms is told at the use after the branch
    ("  set n = 5;\n  branch (flag) {\n    set y = 1;\n  }\n  zero();", [(6, "n", 10)]),
    # nested: the inner else arm's use is not after the inner then arm's set, but after the outer set
    ("  set m = 1;\n  branch (flag) {\n    branch (flag) {\n      set n = 5;\n    } else {\n      zero();\n    }\n"
     "  }", [(6, "m", 11)]),
])
def test_the_arms_of_a_branch_by_hand(capsys, body, told):
    got, _ = _told(capsys, body)
    assert sorted(got) == sorted(told)


VLLM = """use "vllm.sq";
let bs = 16;
let disagg = 1;
pool reqs { cap 4; admit via engine; }
pool kv { cap 100 * bs; block bs; evict lru; preempt lifo; }
stage engine : step {
  budget 64;
  cost 0.01;
  memory kv;
}
workload { arrive poisson(1); }
session {
  set t0 = now;
  branch (disagg) {
    hold reqs (1), kv (10) {
      set c = cached;
      prefill on engine (10 - c) growing kv;
    } cache (10);
    record mine { sent = t0; cached = c; }
  } else {
    vllm_request(reqs, kv, engine, 10, 5, t0);
  }
  end;
}
run { horizon 10; seed 1; }
"""


def test_two_ways_of_serving_in_one_program_compile_without_a_warning(capsys):
    serq_frontend.compile(source=VLLM)
    assert capsys.readouterr().err == ""
    # the set moved before the branch is before the use, and told
    serq_frontend.compile(source=VLLM.replace("  branch (disagg) {\n", "  set c = 0;\n  branch (disagg) {\n", 1))
    err = capsys.readouterr().err
    assert err.startswith("<source>:14:3: warning: `c` is set here, and the use of `vllm_request` at <source>:22:5")
