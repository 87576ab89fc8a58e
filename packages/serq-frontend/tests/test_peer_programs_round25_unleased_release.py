"""A `release P`, or a `transfer … from P`, that can never give anything back is told.

A P/D program (prefill engines, decode engines, the KV read over a delay that grows with the prompt) wrote its
prefill hold without `lease`: `hold preq[i] (1), pkv[i] (prompt) { prefill … } cache (prompt);`, then the decode
hold's `transfer on link (…) from pkv[i] to dkv[j] (prompt - 1);`. It compiled and ran without a word. A
release outside a hold of its pool ends the session's lease there, and a session that holds and leases
nothing on the pool releases nothing (language.txt §3), so the prefill's KV went back to the cache at the
hold's end, where another request may evict it before the read, and the read counted its tokens at the
decoder all the same. The compile now warns at the pool of such a release when it stands in no hold of the
pool and no hold of the program leases it (serq_frontend.link, ``unleased_releases``); the IR is unchanged.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

# two sessions, sent at 1 and 2: a prefill hold of the whole pool p, a wait of 2, then the read to q
PD = """pool p { cap 4; block 1; evict lru; }
pool q { cap 10; block 1; }
stage w : delay;
stage link : delay;

workload {
  arrive renewal(1);
}

session {
  hold p (4) {
    observe admitted = now;
    run w (0.5);
  } cache (4)LEASE;
  run w (2);
  hold q (4) {
    transfer on link (0.5) from p to q (4);
  }
}

run { horizon inf; arrivals 2; seed 1; }
"""
TRANSFER = ("<source>:17:33: warning: `transfer … from p` reads KV the session no longer holds: it stands in no "
            "hold of `p`, and no hold of the program leases `p`, so the hold that computed the KV gave it back at "
            "its end, to the cache, where it may be evicted before the read, and the transfer's release ends "
            "nothing; keep the KV for the read: `lease p (inf)` after that hold's block")


def compiled(capsys, text: str):
    program = serq_frontend.compile(source=text)
    return program, capsys.readouterr().err


def test_a_transfer_from_a_pool_no_hold_leases_is_told_and_what_it_means(capsys):
    program, err = compiled(capsys, PD.replace("LEASE", ""))
    assert err.splitlines()[0] == TRANSFER, err
    assert err.splitlines()[2].index("^") == err.splitlines()[1].index("from p") + len("from ")
    # by hand: session 0 holds p over [1, 1.5] and caches it; session 1, sent at 2, is admitted at once,
    # evicting that KV, which session 0 reads at 3.5 all the same
    assert list(serq_sim.run(program).observe("admitted").values) == [1.0, 2.0]
    # leased, the KV stays session 0's until the transfer's release at 4 (3.5 + the link's 0.5), and session
    # 1 waits for it: no warning
    leased, err = compiled(capsys, PD.replace("LEASE", " lease p (inf)"))
    assert "warning" not in err, err
    assert list(serq_sim.run(leased).observe("admitted").values) == [1.0, 4.0]
    # the warning changes nothing the program means: the IR without it is the IR with it
    assert serq_frontend.compile(source=PD.replace("LEASE", "")) == program


RELEASE = ("<source>:{line}:11: warning: `release {ref}` gives nothing back: it stands in no hold of `p`, and no "
           "hold of the program leases `p`, so the session holds nothing there when it runs (a release outside a "
           "hold ends the lease a hold took, `hold {ref} (…) {{ … }} lease {ref} (t)`)")
FAMILY = """pool p[2] { cap 4; }
stage w : delay;

workload {
  arrive renewal(1);
}

session {
  set i = serial % 2;
  hold p[HELD] (1) {
    run w (1);
  }LEASE
  release p[FREED];
}

run { horizon 10; seed 1; }
"""


@pytest.mark.parametrize("held, lease, released, told", [
    ("0", "", "1", "p[1]"),                        # no lease anywhere
    ("0", " lease p[0] (inf)", "1", "p[1]"),       # a lease of another member
    ("i", "", "i", "p[i]"),                        # a computed index, no lease
    ("0", " lease p[0] (inf)", "0", None),         # the lease it ends
    ("i", " lease p[i] (inf)", "1", None),         # a lease of a member chosen at run time may be p[1]
    ("0", " lease p[0] (inf)", "i", None),
])
def test_a_release_told_only_where_no_lease_can_be_its(capsys, held, lease, released, told):
    text = FAMILY.replace("HELD", held).replace("LEASE", lease).replace("FREED", released)
    _, err = compiled(capsys, text)
    if told is None:
        assert "gives nothing back" not in err, err
    else:
        assert err.splitlines()[0] == RELEASE.format(line=13, ref=told), err


def test_a_release_inside_a_hold_of_its_pool_is_not_told(capsys):
    text = FAMILY.replace("HELD", "0").replace("LEASE", "").replace(
        "    run w (1);\n  }\n  release p[FREED];", "    run w (1);\n    release p[0];\n    run w (1);\n  }")
    _, err = compiled(capsys, text)
    assert "warning" not in err, err


def test_a_definition_used_twice_is_told_once(capsys):
    """At the pool's name in the body when the body names it, at each use's argument when a use gives it."""
    body = "def read({param}) {{\n  hold q (4) {{\n    transfer on link (0.5) from {src} to q (4);\n  }}\n}}\n\nsession {{"
    reads = "  hold q (4) {\n    transfer on link (0.5) from p to q (4);\n  }\n}"
    text = PD.replace("LEASE", "").replace("session {", body.format(param="", src="p"))
    head, _, tail = text.rpartition(reads)  # the session's read, not the body's of the same words
    _, err = compiled(capsys, head + "  read();\n  read();\n}" + tail)
    assert err.count("reads KV the session no longer holds") == 1, err
    text = PD.replace("LEASE", "").replace("session {", body.format(param="src", src="src"))
    _, err = compiled(capsys, text.replace(reads, "  read(p);\n  read(p);\n}"))
    assert [line.split(": warning")[0] for line in err.splitlines() if ": warning" in line] == [
        "<source>:22:8", "<source>:23:8"], err
