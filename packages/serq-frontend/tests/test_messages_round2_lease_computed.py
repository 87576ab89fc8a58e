"""A second transfer from a leased pool's member written with a computed index (`from p[i + 1]`, a decode entry
called `from P[i]`), in the block of the first: warned of when the compile can prove both name one member.

test_messages_round1_lease_ended warns when the two releases name one member by a number; members with a
computed index were not compared, so the decode entry of a family of prefillers (`D.decode (…) from P[i]`,
which reads `P.kv[i]`) reading twice said nothing. Now two indices that are one expression of numbers and names,
no name of it set between, are one member: the second release gives nothing back whichever member the session's
one lease is of. What cannot be proven (a call or a draw in the index, a name set between, two expressions) is
not told.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

TWO = """pool p[3] { cap 9; }
pool q { cap 9; }
stage link : delay;
workload { arrive batch(1); }
session {
  set i = 0;
  hold p[1] (2) { run link (1); } cache (2) lease p[1] (inf);
  hold q (2) {
    observe before = used(p[1]);
    transfer (1) from FIRST to q (1);
    observe between = used(p[1]);
    BETWEENtransfer (1) from SECOND to q (1);
  }
}
run { horizon 5; }
"""
SAID = ("<source>:12:5: warning: `transfer … from p[…]` gives nothing back: `transfer … from p[…]` at 10:5, in the "
        "same block and in no hold of `p` either, released the same member (its index reads nothing set between), "
        "which ended the session's lease of `p` if the lease was of that member and found nothing otherwise (the "
        "program's one hold that leases `p` runs once), and no hold leases it again between, so the session holds "
        "nothing there when it runs; the transfer reads KV the session no longer holds")


def _compiled(capsys, first: str, second: str, between: str = ""):
    text = TWO.replace("FIRST", first).replace("SECOND", second).replace("BETWEEN", between)
    program = serq_frontend.compile(source=text)
    return program, [ln for ln in capsys.readouterr().err.splitlines() if "warning" in ln]


@pytest.mark.parametrize("index", ["p[i + 1]", "p[(i + 3) % 2]", "p[2 * i + 1 - i]"])
def test_one_computed_member_twice_is_told_at_the_second(capsys, monkeypatch, index):
    program, err = _compiled(capsys, index, index)
    assert err == [SAID]
    # what it says, on both tiers: the lease holds p[1]'s 2 units until the first transfer's release gives them
    # back; at the second nothing of p[1] is the session's
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_sim.run(program)
        assert r.observe("before").values.tolist() == [2.0]
        assert r.observe("between").values.tolist() == [0.0]


def test_a_member_other_than_the_lease_twice_is_told_too(capsys, monkeypatch):
    """`p[i + 2]` is p[2], not the lease's p[1]: the first release finds nothing, and so does the second, whose
    read is of KV the session never held there; the lease stays until the session's end."""
    program, err = _compiled(capsys, "p[i + 2]", "p[i + 2]")
    assert err == [SAID]
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    r = serq_sim.run(program)
    assert r.observe("between").values.tolist() == [2.0]


@pytest.mark.parametrize("first, second, between", [
    ("p[i + 1]", "p[i + 1]", "set i = 1;\n    "),  # the index's name set between: another member may be named
    ("p[i + 1]", "p[i + 1]", "branch (i == 0) { set i = 1; }\n    "),  # set in an arm between
    ("p[i + 1]", "p[i + 1]", "choose i in 2 by (i);\n    "),
    ("p[min(i + 1, 2)]", "p[min(i + 1, 2)]", ""),  # a call: not compared
    ("p[i + 1]", "p[1 + i]", ""),  # two expressions: not compared
    ("p[i]", "p[1]", ""),  # the first names another member than the lease, the second the leased one: correct
])
def test_what_cannot_be_proven_says_nothing(capsys, first, second, between):
    _, err = _compiled(capsys, first, second, between)
    assert not any("gives nothing back" in line for line in err), err


def test_a_setting_of_another_name_between_keeps_the_warning(capsys):
    _, err = _compiled(capsys, "p[i + 1]", "p[i + 1]", "set j = 2;\n    observe k = j;\n    ")
    assert [e.replace(":14:5:", ":12:5:") for e in err] == [SAID]


def test_a_decode_entry_of_a_family_reading_twice_is_told_in_the_entry(capsys):
    src = """queue P[2] : prefill {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
queue D : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  decode (prompt) from s {
    hold kv (prompt) {
      transfer (1) from s to kv (1);
      transfer (1) from s to kv (1);
    } cache (prompt);
  }
}
D pull P share maxmin;
workload { arrive batch(2); }
session { set prompt = 2; set i = serial % 2; P[i].prefill (prompt); D.decode (prompt) from P[i]; }
run { horizon 50; }
"""
    serq_frontend.compile(source=src)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("<source>:14:7: warning: `transfer … from P.kv[i]` gives nothing back: `transfer … "
                             "from P.kv[i]` at 13:7, in the same block and in no hold of `P.kv` either, released the "
                             "same member")
    assert err[3].startswith("<source>:20:70: note: in the expansion of `D.decode`, used here")
