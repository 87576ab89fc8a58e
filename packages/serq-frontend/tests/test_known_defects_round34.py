"""Known defects, round 34, in serq-frontend.

5. The live-state lint inside a queue's entry named the entry's attribute, and the pool its chain reads, by
   the long names the queue sugar gives them (`` `D.g` is set from live pool or stage state (at 8:7 from
   `D.t`, set at 7:7 from `used(D.kv[…])`)``), where the entry writes ``g``, ``t`` and ``used(kv)``: they
   are said as written (serq_frontend.stale.as_written), the note of the expansion naming the entry.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend.diagnostics import CompileError

ENTRY = """\
queue D[2] : decode {
  pool reqs { cap 4; admit via D; }
  pool kv { cap 64; admit via D; }
  serve step { budget 32; cost 0.01; memory kv; }
  decode (prompt) {
    hold kv (4) {
      set t = used(kv);
      set g = t + 1;
      hold reqs (g) {
        decode (prompt) growing kv;
      }
    }
  }
}

workload { arrive batch(3); }

session {
  D[serial % 2].decode (4);
}

run { horizon 10; }
"""


def test_the_live_state_lint_in_a_queue_entry_names_what_the_entry_writes():
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=ENTRY)
    assert str(info.value).splitlines() == [
        "<source>:9:18: error: `g` is set from live pool or stage state (at 8:7 from `t`, set at 7:7 from "
        "`used(kv)`) and read in a hold's header: the header is read at admission, the set when the session "
        "queued; read the state in `at admission (…)` instead",
        "        hold reqs (g) {",
        "                   ^",
        "<source>:19:3: note: in the expansion of `D.decode`, used here",
        "    D[serial % 2].decode (4);",
        "    ^",
    ]


def test_the_same_lint_outside_an_entry_names_the_session_attribute():
    # the program of the session alone: its names are the session's own, written out as they are
    src = """\
pool kv { cap 64; }
pool reqs { cap 4; }
stage s : fifo;
workload { arrive batch(3); }
session {
  hold kv (4) {
    set t = used(kv);
    set g = t + 1;
    hold reqs (g) { run s (1); }
  }
}
run { horizon 10; }
"""
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=src)
    assert str(info.value).splitlines()[0] == (
        "<source>:9:16: error: `g` is set from live pool or stage state (at 8:5 from `t`, set at 7:5 from "
        "`used(kv)`) and read in a hold's header: the header is read at admission, the set when the session "
        "queued; read the state in `at admission (…)` instead")
