"""Conformance of language.txt §2, Queues: "D pull P is one line for the topology and the mode: the KV goes
from P to D, D starts the read (NIXL pull), D waits x0 before each one …, and concurrent reads divide the two
NICs by the policy, which is the program's share and is written here, not left to a default. … a reader has
one source … A program with a relation does not also write share on its own."

Two reader families, each with its own source (D from P, D2 from P2: two P/D pairs), wrote the program's
share twice and were refused ("`share` is given twice") whatever they said, though each reader has one
source and the spec has every relation write the share. They now link when they name the same share, the
first writing the program's; two relations naming two policies are refused at the second, since a program
divides its stages one way (docs/language.md, Queues).
"""

from __future__ import annotations

import pytest
from conform import refused, run, stage

PAIRS = """queue P[1] : prefill { pool kv { cap 100; } serve fifo; nic ps(4); prefill (prompt) { hold kv (prompt) { run (prompt); } cache (prompt) lease kv (inf); } }
queue D[1] : decode { pool kv { cap 100; } serve fifo; nic ps(2); decode (prompt) from src { hold kv (prompt) { transfer (prompt) from src to kv (prompt - 1); run (1); } } }
queue P2 : prefill { pool kv { cap 100; } serve fifo; nic ps(4); prefill (prompt) { hold kv (prompt) { run (prompt); } cache (prompt) lease kv (inf); } }
queue D2 : decode { pool kv { cap 100; } serve fifo; nic ps(2); decode (prompt) from src { hold kv (prompt) { transfer (prompt) from src to kv (prompt - 1); run (1); } } }
D pull P latency 0.5 share maxmin;
D2 pull P2 latency 0.25 share SHARE;
queue gw : gateway { route { P[0].prefill (prompt); D[0].decode (prompt) from P[0]; set t1 = now; P2.prefill (prompt); D2.decode (prompt) from P2; } }
workload { arrive batch(1); turn { set prompt = 4; } session { turn; request gw; observe a = t1; observe b = now; end; } }
run { horizon 20; }
"""


def test_two_readers_each_pulling_from_its_own_source(monkeypatch):
    """One request through both pairs, by hand. P[0] prefills 4 over [0, 4] and leases its KV; D[0]'s
    entry waits its relation's latency 0.5 (D.nic.latency[0]: [4, 4.5]), reads 4 over P.nic[0] (ps 4) and
    D.nic[0] (ps 2) at min(4, 2) = 2 under maxmin, [4.5, 6.5], loads, releases P's lease, and decodes 1
    on D[0], [6.5, 7.5]: t1 = 7.5. Then P2 over [7.5, 11.5], D2's latency 0.25 ([11.5, 11.75]), its read
    at 2 over [11.75, 13.75], its decode [13.75, 14.75]. Utilisation over 20: P.nic[0] carries 2 of 4 for
    2 s (0.05), D.nic[0] 2 of 2 for 2 s (0.1), the latency stages 0.5 / 20 and 0.25 / 20."""
    r, o = run(PAIRS.replace("SHARE", "maxmin"), monkeypatch)
    assert o["a"] == [(0, 14.75, 7.5)]
    assert o["b"] == [(0, 14.75, 14.75)]
    assert stage(r, "P.nic", 0).utilisation == 0.05 and stage(r, "D.nic", 0).utilisation == 0.1
    assert stage(r, "P2.nic").utilisation == 0.05 and stage(r, "D2.nic").utilisation == 0.1
    assert stage(r, "D.nic.latency", 0).service == 0.5 and stage(r, "D2.nic.latency").service == 0.25


def test_two_relations_naming_two_shares_are_refused_at_the_second():
    assert refused(PAIRS.replace("SHARE", "bottleneck")) == (
        "`D2 pull P2 … share bottleneck`: the program's share is `maxmin`, which `D pull P` (at 5:1) names; a "
        "program divides its stages one way, so every pull relation names the same share")


def test_a_relation_and_the_programs_own_share_are_still_refused():
    src = PAIRS.replace("SHARE", "maxmin").replace("D2 pull P2 latency 0.25 share maxmin;",
                                                   "D2 pull P2 latency 0.25 share maxmin;\nshare maxmin;")
    # both relations named (test_messages_round3_share: it named the first alone)
    assert refused(src) == ("`share` is given twice: the pull relations `D pull P` and `D2 pull P2` name the "
                            "program's share; a program with a pull relation writes no `share` of its own")


SAID = ("`D pull P` names how concurrent reads divide the NICs, the program's share: `D pull P [latency x] share "
        "maxmin;` or `… share bottleneck;` (there is no default)")


@pytest.mark.parametrize("relation, found", [
    ("D pull P latency 0.5;", "`;`"),
    ("D pull P;", "`;`"),
    ("D pull P latency 0.5 maxmin;", "`maxmin`"),
    ("D pull P latency (0.5);", "`;`"),
])
def test_a_relation_without_its_share_says_it_has_no_default(relation, found):
    """"the policy, which is the program's share and is written here, not left to a default": the error
    was ``unexpected `;` (expected share)``."""
    src = PAIRS.replace("SHARE", "maxmin").replace("D pull P latency 0.5 share maxmin;", relation)
    assert refused(src) == f"unexpected {found}: " + SAID


def test_an_error_in_the_latency_keeps_its_own_words():
    src = PAIRS.replace("SHARE", "maxmin").replace("D pull P latency 0.5 share maxmin;", "D pull P latency 0.5 +;")
    assert refused(src).startswith("unexpected `;`: an operand is missing after `+`")  # (the expression's own words)
