"""Known defects, round 35, in serq-frontend.

1. The read of an attribute before any statement sets it (link.Unset) was warned inside a queue's entry by
   the long name the queue sugar gives the attribute (`` `D.t` is read here before any statement sets it``),
   where the entry writes ``t``: it is said as written, as the live-state lint says it (stale.as_written).
2. A hold within another hold of an entry read in its header a name the entry set earlier in the source but
   not on the path taken (`hold kv (p) { branch (…) { set c = cached; } else { hold cpu (c) { … } } }`, where
   the other arm's `c` is 0 or an earlier request's): the rule is now "set on every path to the hold"
   (queues.QueueRewriter._set_on_every_path), an error at the read otherwise.
4. The warning of ``est_wait(S)`` of a step stage named only the first pool admitted via ``S``: it names every
   one, in the order they are declared, the fourth and later counted (``… and 2 more``), in one warning.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend.diagnostics import CompileError

UNSET = """\
queue D[2] : decode {
  pool reqs { cap 4; admit via D; }
  pool kv { cap 64; admit via D; }
  serve step { budget 32; cost 0.01; memory kv; }
  decode (prompt) {
    run tool (t);
    set t = 3;
    hold kv (4) {
      decode (prompt) growing kv;
    }
  }
}

stage tool : delay;

workload { arrive batch(3); }

session {
  D[serial % 2].decode (4);
}

run { horizon 10; }
"""


def _warnings(capfd, source: str) -> list[str]:
    capfd.readouterr()
    serq_frontend.compile(source=source)
    return capfd.readouterr().err.splitlines()


def test_an_unset_read_in_a_queue_entry_names_the_attribute_as_the_entry_writes_it(capfd):
    assert _warnings(capfd, UNSET) == [
        "<source>:6:15: warning: `t` is read here before any statement sets it, so it reads 0 (an attribute is 0 "
        "until the session sets it; the first statement that sets it is at 7:5): set it before this read, or "
        "write 0",
        "      run tool (t);",
        "                ^",
        "<source>:19:3: note: in the expansion of `D.decode`, used here",
        "    D[serial % 2].decode (4);",
        "    ^",
    ]


def test_the_same_read_in_a_session_says_the_same_words(capfd):
    src = ("pool kv { cap 64; }\nstage tool : delay;\nworkload { arrive batch(3); }\n"
           "session {\n  run tool (t);\n  set t = 3;\n  hold kv (4) { run tool (1); }\n}\nrun { horizon 10; }\n")
    assert _warnings(capfd, src)[0] == (
        "<source>:5:13: warning: `t` is read here before any statement sets it, so it reads 0 (an attribute is 0 "
        "until the session sets it; the first statement that sets it is at 6:3): set it before this read, or "
        "write 0")


NESTED = """\
queue D[2] : decode {
  pool reqs { cap 4; admit via D; }
  pool kv { cap 64; admit via D; }
  pool cpu { cap 64; }
  serve step { budget 32; cost 0.01; memory kv; }
  decode (p) {
    hold kv (p) {
      branch (p > 2) {
        set c = cached;
        THEN
      } else {
        ELSE
        hold cpu (c) {
          decode (1) growing kv;
        }
      }
    } cache (p);
  }
}
workload { arrive batch(3); }
session {
  D[serial % 2].decode (4);
}
run { horizon 10; }
"""


def test_a_nested_hold_reading_a_name_the_other_arm_sets_is_refused_at_the_read():
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=NESTED.replace("THEN", "").replace("ELSE", ""))
    assert str(info.value).splitlines()[:3] == [
        "<source>:13:19: error: the header of a hold in `D.decode` reads `c`, which the entry sets before this "
        "hold on some paths only (at 9:9); a hold within another reads in its header what the entry set on "
        "every path to it: set it on each, or before the branch",
        "          hold cpu (c) {",
        "                    ^",
    ]


AFTER = """\
queue D[2] : decode {
  pool reqs { cap 4; admit via D; }
  pool kv { cap 64; admit via D; }
  pool cpu { cap 64; }
  serve step { budget 32; cost 0.01; memory kv; }
  decode (p) {
    hold kv (p) {
      branch (p > 2) {
        set c = cached;
      }
      hold cpu (c) {
        decode (1) growing kv;
      }
    } cache (p);
  }
}
workload { arrive batch(3); }
session {
  D[serial % 2].decode (4);
}
run { horizon 10; }
"""


def test_after_a_branch_a_name_one_arm_sets_is_not_set_on_every_path():
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=AFTER)
    assert str(info.value).splitlines()[:3] == [
        "<source>:11:17: error: the header of a hold in `D.decode` reads `c`, which the entry sets before this "
        "hold on some paths only (at 9:9); a hold within another reads in its header what the entry set on "
        "every path to it: set it on each, or before the branch",
        "        hold cpu (c) {",
        "                  ^",
    ]
    # the other arm setting it too makes it set on every path
    serq_frontend.compile(source=AFTER.replace("        set c = cached;\n      }",
                                               "        set c = cached;\n      } else {\n        set c = 0;\n      }"))


def test_a_name_both_arms_set_is_read():
    program = serq_frontend.compile(source=NESTED.replace("THEN", "").replace("ELSE", "set c = 1;"))
    assert [p.name for p in program.pools] == ["D.reqs", "D.kv", "D.cpu"]


def test_a_name_set_before_the_branch_is_read():
    serq_frontend.compile(source=NESTED.replace("THEN", "").replace("ELSE", "").replace(
        "    hold kv (p) {", "    set c = 0;\n    hold kv (p) {"))


EST_WAIT = """\
POOLS
stage engine : step { budget 64; cost 0.01; memory kv; }
workload { arrive poisson(1); }
session {
  observe w = est_wait(engine);
  hold reqs (1), kv (16) { run engine prefill (16) growing kv; }
  end;
}
run { horizon 10; }
"""

HEAD = ("<source>:{line}:15: warning: `est_wait(engine)` is 0 throughout the run: step stage `engine` has no queue "
        "of its own (a run joins its residents at once, so no run waits there); read ")


def _pools(names: list[str]) -> str:
    return "\n".join(f"pool {n} {{ cap 1024; block 16; admit via engine; }}" for n in names)


@pytest.mark.parametrize("names, read", [
    (["reqs", "kv"], "`queued(reqs)` and `queued(kv)`, the requests waiting in the queues of the 2 pools it admits "
                     "from"),
    (["reqs", "kv", "kv2"], "`queued(reqs)`, `queued(kv)` and `queued(kv2)`, the requests waiting in the queues of "
                            "the 3 pools it admits from"),
    (["reqs", "kv", "kv2", "kv3", "kv4"], "`queued(reqs)`, `queued(kv)`, `queued(kv2)` and 2 more, the requests "
                                          "waiting in the queues of the 5 pools it admits from"),
])
def test_the_est_wait_warning_names_every_pool_the_stage_admits_from(capfd, names, read):
    err = _warnings(capfd, EST_WAIT.replace("POOLS", _pools(names)))
    assert [line for line in err if "warning:" in line] == [HEAD.format(line=len(names) + 4) + read]


def test_one_pool_is_named_as_before(capfd):
    err = _warnings(capfd, EST_WAIT.replace("POOLS", "pool reqs { cap 64; admit via engine; }\npool kv { cap 1024; "
                                             "block 16; }"))
    assert [line for line in err if "warning:" in line] == [
        HEAD.format(line=6) + "`queued(reqs)`, the requests waiting in the queue of the pool it admits from"]


def test_no_pool_admitted_via_the_stage_says_what_to_read(capfd):
    # a stage no pool names in `admit via`: the warning says to read the queue of such a pool (the list of
    # pools it admits from is empty: the compile raised IndexError there)
    err = _warnings(capfd, EST_WAIT.replace("POOLS", "pool reqs { cap 64; }\npool kv { cap 1024; block 16; }"))
    assert [line for line in err if "warning:" in line] == [
        HEAD.format(line=6) + "`queued(P)` of the pool its requests wait in (a pool with `admit via engine`)"]
