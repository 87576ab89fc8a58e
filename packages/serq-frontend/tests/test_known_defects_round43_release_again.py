"""A second `release P` of the same pool in one block. language.txt §3 defines it: a release gives back the
innermost enclosing hold's allocation on P that is left ("and holds m no longer"), a release outside any hold
on P ends the lease of it, and "a session that holds and leases nothing on m releases nothing". So a second
release gives back the next hold of P around (an outer one), else ends a lease of P, else nothing: no error.
It was silent where it gives nothing back for sure; the compile now warns there, when no other hold of P is
around and no hold of the program leases P (serq_frontend.link, ``_again``; docs/language.md). The IR is
unchanged, and the run does what §3 says on both tiers (hand-computed below)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import serq_frontend

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "serq-sim" / "tests"))
from tiers import same_json  # noqa: E402

pytestmark = pytest.mark.timeout(120)

PROGRAM = """pool p { cap 4; }
stage s : fifo;

workload {
  arrive poisson(1);
}

session {
  BEFORE
  hold p (1) {
    INNER
    run s (1);
    observe after = used(p);
  }
  observe out = used(p);
}
"""

TWICE = "release p;\n    release p;"
WARNING = ("<source>:12:13: warning: `release p` gives nothing back: `release p` at 11:5, in the same block, gave "
           "back the allocation on `p` of the hold around it, no other hold around holds `p`, and no hold of the "
           "program leases `p`, so the session holds nothing there when it runs (a release gives back the "
           "innermost hold's allocation that is left, and then the lease a hold took)")


def _src(before: str = "", inner: str = TWICE) -> str:
    return PROGRAM.replace("BEFORE", before).replace("INNER", inner)


def _compile(capsys, src: str):
    prog = serq_frontend.compile(source=src)
    return prog, capsys.readouterr().err


def _means(monkeypatch, prog) -> tuple[float, float]:
    r = same_json(prog, monkeypatch, arrivals=1, warmup=0, seed=1)
    return r["observes"]["after"]["mean"], r["observes"]["out"]["mean"]


def test_a_second_release_that_gives_nothing_back_is_told(capsys, monkeypatch):
    prog, err = _compile(capsys, _src())
    lines = err.splitlines()
    assert lines[0] == WARNING, err
    assert lines[1].strip() == "release p;" and lines[2].index("^") == lines[1].index("p;")
    assert len(lines) == 3
    # the run: the first release gave back the 1 unit, the second nothing, and the hold's end nothing more
    assert _means(monkeypatch, prog) == (0.0, 0.0)


def test_a_second_release_gives_back_the_outer_hold(capsys, monkeypatch):
    # hold p (2) { hold p (1) { release p; release p; … } … }: the first release gives the inner 1 back, the
    # second the outer 2 (§3: the innermost enclosing hold that still holds p), so used(p) is 0 after both
    src = _src().replace("  hold p (1) {\n    release p;", "  hold p (2) {\n  hold p (1) {\n    release p;")
    src = src.replace("  observe out = used(p);\n}", "  observe out = used(p);\n  }\n}")
    prog, err = _compile(capsys, src)
    assert err == ""
    assert _means(monkeypatch, prog) == (0.0, 0.0)
    # one release: the inner 1 given back, the outer 2 still held until its end
    prog, _ = _compile(capsys, src.replace(TWICE, "release p;"))
    assert _means(monkeypatch, prog) == (2.0, 2.0)


def test_a_second_release_ends_a_lease(capsys, monkeypatch):
    # a lease of 3 units taken first: the first release gives the hold's 1 back, the second ends the lease
    lease = "hold p (3) {\n    run s (1);\n  } lease p (inf);"
    prog, err = _compile(capsys, _src(before=lease))
    assert err == ""  # the program leases p: no warning
    assert _means(monkeypatch, prog) == (0.0, 0.0)
    prog, _ = _compile(capsys, _src(before=lease, inner="release p;"))
    assert _means(monkeypatch, prog) == (3.0, 3.0)


def test_a_second_transfer_from_one_pool_is_told(capsys):
    src = """pool p { cap 4; }
pool q { cap 4; }
stage link : delay;

workload {
  arrive poisson(1);
}

session {
  hold p (1), q (2) {
    transfer (1) from p to q (1);
    transfer (1) from p to q (1);
  }
}
"""
    _prog, err = _compile(capsys, src)
    assert err.splitlines()[0] == (
        "<source>:12:23: warning: `transfer … from p` gives nothing back: `transfer … from p` at 11:5, in the "
        "same block, gave back the allocation on `p` of the hold around it, no other hold around holds `p`, and "
        "no hold of the program leases `p`, so the session holds nothing there when it runs (a release gives "
        "back the innermost hold's allocation that is left, and then the lease a hold took); the transfer reads "
        "KV the session no longer holds"), err


def test_releases_of_other_members_or_in_other_blocks_are_not_told(capsys):
    src = """pool p[2] { cap 4; }
stage s : fifo;

workload {
  arrive poisson(1);
}

session {
  hold p[0] (1), p[1] (1) {
    release p[0];
    release p[1];
    branch with (0.5) {
      run s (1);
    }
  }
  hold p[0] (1) {
    release p[0];
  }
}
"""
    _prog, err = _compile(capsys, src)
    assert err == ""
