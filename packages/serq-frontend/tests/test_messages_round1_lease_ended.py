"""A second transfer from a leased pool, in the block of the first: the first transfer's release ends the
session's lease (language.txt §3: "a release m outside any hold on m ends the lease"; a session keeps one lease
a leasing hold it ran), so the second reads KV the session no longer holds, and its release gives nothing back.

It compiled without a word, where a transfer from a pool no hold leases is warned of (test_peer_programs_round25
_unleased_release). The compile now warns at the second transfer when it can tell: both in one block and in
no hold of the pool, no hold leasing the pool between them, and the program's one hold that leases the pool
in no loop and no hold (so it runs once a session, and the session holds one lease of the pool at most). With
two leasing holds, or one that may run again, the session may hold a second lease, and nothing is said.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

TWO = """pool p { cap 9; }
pool q { cap 9; }
stage link : delay;
workload { arrive batch(1); }
session {
  PREFILL
  hold q (2) {
    observe before = used(p);
    transfer (1) from p to q (1);
    observe between = used(p);
    BETWEENtransfer (1) from p to q (1);
  }
}
run { horizon 5; }
"""
LEASED = "hold p (2) { run link (1); } cache (2) lease p (inf);"
WARNED = ("<source>:11:5: warning: `transfer … from p` gives nothing back: `transfer … from p` at 9:5, in the same "
          "block and in no hold of `p` either, ended the session's lease of `p`, the one the program takes (its one "
          "hold that leases `p` runs once), and no hold leases it again between, so the session holds nothing there "
          "when it runs; the transfer reads KV the session no longer holds")


def _compiled(capsys, text: str):
    program = serq_frontend.compile(source=text)
    return program, capsys.readouterr().err.splitlines()


def test_the_second_transfer_is_told_at_its_place(capsys, monkeypatch):
    program, err = _compiled(capsys, TWO.replace("PREFILL", LEASED).replace("BETWEEN", ""))
    assert err == [WARNED, "      transfer (1) from p to q (1);", "      ^"]
    # what it says, on both tiers: the lease holds p's 2 units until the first transfer's release, which
    # gives them back; at the second nothing of p is the session's
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_sim.run(program)
        assert r.observe("before").values.tolist() == [2.0]
        assert r.observe("between").values.tolist() == [0.0]


def test_a_decode_entry_reading_twice_is_told_in_the_entry(capsys):
    src = """queue P : prefill {
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
workload { arrive batch(1); }
session { set prompt = 2; P.prefill (prompt); D.decode (prompt) from P; }
run { horizon 50; }
"""
    _, err = _compiled(capsys, src)
    assert err[:3] == [
        "<source>:14:7: warning: `transfer … from P.kv` gives nothing back: `transfer … from P.kv` at 13:7, in the "
        "same block and in no hold of `P.kv` either, ended the session's lease of `P.kv`, the one the program takes "
        "(its one hold that leases `P.kv` runs once), and no hold leases it again between, so the session holds "
        "nothing there when it runs; the transfer reads KV the session no longer holds",
        "        transfer (1) from s to kv (1);", "        ^"]
    assert err[3].startswith("<source>:20:47: note: in the expansion of `D.decode`, used here")


@pytest.mark.parametrize("prefill, between", [
    (LEASED + "\n  " + LEASED, ""),  # two leases: the second transfer ends the second
    ("loop { " + LEASED + " }", ""),  # a lease in a loop: one each time round
    ("hold q (1) { " + LEASED + " }", ""),  # in a hold, whose preemption would run it again
    (LEASED, LEASED.replace("run link (1);", "run link (1);") + "\n    "),  # leased again between
])
def test_a_second_lease_that_may_be_held_says_nothing(capsys, prefill, between):
    _, err = _compiled(capsys, TWO.replace("PREFILL", prefill).replace("BETWEEN", between))
    assert not any("ended the session's lease" in line for line in err), err


def test_two_members_of_a_family_say_nothing(capsys):
    src = TWO.replace("pool p { cap 9; }", "pool p[2] { cap 9; }").replace(
        "PREFILL", "hold p[0] (2), p[1] (2) { run link (1); } cache (2) lease p[0] (inf);").replace("BETWEEN", "")
    src = src.replace("used(p)", "used(p[0])").replace("from p to q (1);\n    observe", "from p[0] to q (1);\n    observe")
    src = src.replace("transfer (1) from p to q (1);\n  }", "transfer (1) from p[1] to q (1);\n  }")
    _, err = _compiled(capsys, src)
    assert not any("ended the session's lease" in line for line in err), err
