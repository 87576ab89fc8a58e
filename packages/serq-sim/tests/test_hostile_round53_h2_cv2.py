"""``~h2(mean, cv2)`` of a cv2 so large that its slow phase cannot be drawn (serq_ir.rules.MAX_CV2; docs/language.md,
"The domains of the draws").

The draw takes the slow phase with probability ``q = (1 - sqrt((cv2 - 1) / (cv2 + 1))) / 2``, about
``1 / (2 cv2)``, and its rate is ``2 q / mean``. From cv2 about 1e16 that ``q`` is 0 in a double: no draw is the
slow phase's, every one is the fast phase's, ~exp(mean / 2). ``~h2(1, 1e17)`` drew a mean of 0.508 and a cv2 of
0.73 over 102 draws, on both tiers, without a word, where the law's are 1 and 1e17; below that the draws' cv2
is off by 12 to 25 % at 1e15. A cv2 above 1e12 is now outside the law's domain: a constant one does not link, a
computed one is a run-time error at the draw naming the time and the session, on both tiers."""

from __future__ import annotations

import math

import pytest
from conform import refused, run, run_error
from serq_ir.rules import MAX_CV2

pytestmark = pytest.mark.timeout(60)

WHY = ("cv2 above 1e12 (its slow phase, of probability about 1 / (2 cv2), is drawn by one uniform of 53 bits: the "
       "draws' cv2 would be off by more than 0.01 %, and from about 1e16 no draw is the slow phase's and their "
       "mean is half the law's)")

SRC = """stage d : delay;
workload { arrive batch(3); }
session { set a = DRAW; observe x = a; run d (1); }
run { horizon 2; }
"""


def _cv2_drawn(cv2: float) -> float:
    """The cv2 of the draws of ``~h2(1, cv2)`` as serq_sim.rand.d_h2 computes its branch (``p`` the fast one's
    probability, its rate 2 p; the slow one's ``q = 1 - p``, rate 2 q): each branch's mean 1 / (2 p) and
    1 / (2 q), its second moment 2 / (2 p)², so E X = 1 and E X² = 1 / (2 p) + 1 / (2 q)."""
    p = 0.5 * (1.0 + math.sqrt((cv2 - 1.0) / (cv2 + 1.0)))
    q = 1.0 - p
    return 1 / (2 * p) + 1 / (2 * q) - 1 if q > 0 else 0.0


def test_the_bound_is_where_the_draws_keep_the_laws_cv2():
    # by hand: q = 1 - p is the double next below 1's distance at cv2 1e17, 0: no slow phase, cv2 0 (exp(1/2)
    # draws have cv2 1, and this counts the branch as absent); at the bound the cv2 is the law's within 1e-4
    assert _cv2_drawn(1e17) == 0.0
    assert abs(_cv2_drawn(MAX_CV2) / MAX_CV2 - 1) < 1e-4
    assert abs(_cv2_drawn(1e15) / 1e15 - 1) > 0.1
    assert MAX_CV2 == 1e12


@pytest.mark.parametrize("cv2", ["1e17", "2e12", "1e308"])
def test_a_constant_cv2_above_the_bound_does_not_link(cv2, monkeypatch):
    shown = {"1e17": "1e+17", "2e12": "2000000000000", "1e308": "1e+308"}[cv2]
    assert refused(SRC.replace("DRAW", f"~h2(1, {cv2})")) == f"~h2(1, {shown}): {WHY}"
    # computed, the same words at the draw, with the time and the session whose draw it is
    src = SRC.replace("DRAW", f"~h2(1, serial == 2 ? {cv2} : 4)")
    assert run_error(src, monkeypatch) == f"<source>:3:19: error: at t=0, session 2: ~h2(1, {shown}): {WHY}"


def test_the_bound_itself_is_a_draw(monkeypatch):
    _, obs = run(SRC.replace("DRAW", "~h2(0, 1e12) + ~h2(1, 1e12) * 0"), monkeypatch)
    # ~h2(0, …) is the point 0 and the other's draw times 0 is 0: three sessions observe 0 at t = 0
    assert obs["x"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0)]


def test_an_ir_file_is_held_to_the_same_bound(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(SRC.replace("DRAW", "~h2(1, 4)"))
    r = serq_in_process("ir", "p.sq")
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert text.count('"value": 4.0') == 1
    (tmp_path / "p.ir.json").write_text(text.replace('"value": 4.0', '"value": 1e17'))
    for command in ("check", "run"):
        r = serq_in_process(command, "p.ir.json")
        assert (r.returncode, r.stdout) == (1, ""), r
        assert r.stderr.splitlines()[0].endswith(f"error: ~h2(1, 1e+17): {WHY} - at '$.session[0].value.args'")
