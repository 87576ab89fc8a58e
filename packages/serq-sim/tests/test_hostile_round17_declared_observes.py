"""An IR program that declares more observes than the fast tier's bound runs in the general engine.

In a program written in the language every observe is declared by a statement that observes it, so the
bound on statements (``fast.FAST_STATEMENTS``) bounded the observes too. An IR file may declare observes
that no statement takes a sample of; each is six lines and four locals of the fast tier's one generated
function all the same, so 300 000 of them (a file of 7 MB) took CPython's compiler over 3 GB and more
than a minute, where the general engine runs the file in 25 s and 0.5 GB. Beyond ``FAST_STATEMENTS``
declared observes the program is outside the fast tier's class, with its reason, as a program of more
statements is.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq_report.json import encode_json
from serq_sim import fast

pytestmark = pytest.mark.timeout(120)

SOURCE = """stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (~exp(0.5)); observe response = now - t0; }
run { horizon 40; seed 3; }
"""


def _with_observes(k: int) -> serq_ir.Program:
    """The program above with ``k`` observes declared in all: ``response`` and ``k - 1`` that no statement
    observes (as an IR file may declare them)."""
    p = serq_frontend.compile(source=SOURCE)
    extra = [serq_ir.ObserveDecl(name=f"unused{i}") for i in range(k - 1)]
    return serq_ir.decode(serq_ir.encode(serq_ir.Program(**{
        **{f: getattr(p, f) for f in p.__struct_fields__}, "observes": [*p.observes, *extra]})))


def test_declared_observes_beyond_the_bound_leave_the_fast_tier():
    n = fast.FAST_STATEMENTS
    at, beyond = _with_observes(n), _with_observes(n + 1)
    assert (len(at.observes), len(beyond.observes)) == (n, n + 1)
    assert sum(1 for _ in fast._stmts(beyond.session)) == 3  # set, run and observe
    assert fast.exclusion(at) is None
    assert fast.exclusion(beyond) == f"more than {n} observes"


def test_the_observed_figures_do_not_depend_on_the_unobserved_declarations(monkeypatch):
    """The response's samples are those of the program without the extra declarations, on whichever tier
    runs it, and every observe that no statement observes has none."""
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    plain = serq_sim.run(serq_frontend.compile(source=SOURCE))
    assert plain.tier == "fast"
    for k, tier in ((fast.FAST_STATEMENTS, "fast"), (fast.FAST_STATEMENTS + 1, "general")):
        r = serq_sim.run(_with_observes(k))
        assert r.tier == tier
        a, b = r.observe("response"), plain.observe("response")
        assert len(a.values) > 20
        for field in ("values", "times", "sessions", "turns"):
            assert getattr(a, field).tobytes() == getattr(b, field).tobytes(), field
        assert all(len(r.observe(f"unused{i}").values) == 0 for i in (0, k - 2))
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
        assert encode_json(serq_sim.run(_with_observes(k))) == encode_json(r)
        monkeypatch.delenv("SERQ_SIM_TIER")
