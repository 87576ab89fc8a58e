"""A pull relation whose reader reads nothing (language.txt §2, Queues: "Inside an entry of D called from P[i],
a transfer without on is the read"; the relation's share divides the two NICs of such reads).

`D pull P share maxmin;` with no entry of `D` holding a transfer was refused with "`share` with no run over
several stages: it divides such runs' stages, and the program has none", about a `share` the program does not
write (a program with a relation writes none, §2). It is now told as the relation's, at the same place.
"""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src

Q_P = """queue P : prefill {
  pool kv { }
  serve fifo;
  nic ps(1);
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
"""
READ = "transfer (1) from s to kv (1);"
Q_D = """queue D : decode {
  pool kv { }
  serve fifo;
  nic ps(1);
  decode (prompt) from s { hold kv (prompt) { BODY } cache (prompt); }
}
D pull P share maxmin;
workload { arrive batch(1); }
"""
CALL = "session { set prompt = 2; P.prefill (prompt); D.decode (prompt) from P; }\n"
RUN = "run { horizon 5; }\n"
SAID = ("<source>:13:1: error: `D pull P` reads nothing: its read is a `transfer` without `on` in an entry of `D` "
        "called `from P`, and ")


def _refusal(src: str) -> list[str]:
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(src)
    return str(info.value).splitlines()


def test_a_reader_whose_entries_hold_no_transfer():
    lines = _refusal(Q_P + Q_D.replace("BODY", "run (1);") + CALL + RUN)
    assert lines == [SAID + "no entry of `D` holds one, so the relation's share divides no NIC",
                     "  D pull P share maxmin;", "  ^"]


def test_a_reader_whose_reading_entry_is_never_called():
    lines = _refusal(Q_P + Q_D.replace("BODY", READ) + CALL.replace(" D.decode (prompt) from P;", "") + RUN)
    assert lines == [SAID + "no entry of `D` that holds one is called `from P`, so the relation's share "
                     "divides no NIC", "  D pull P share maxmin;", "  ^"]


def test_a_reader_that_reads_compiles():
    compile_src(Q_P + Q_D.replace("BODY", READ) + CALL + RUN)


def test_a_share_of_its_own_with_no_run_over_several_stages_is_still_told_as_the_share():
    lines = _refusal("share maxmin;\nstage s : fifo;\nworkload { arrive batch(1); }\nsession { run s (1); end; }\n"
                     + RUN)
    assert lines[0] == ("<source>:1:1: error: `share` with no run over several stages: it divides such runs' "
                        "stages, and the program has none")
    assert lines[1:] == ["  share maxmin;", "  ^"]
