"""The fast tier's cost per event does not grow with the program's size (docs/simulator.md, "The fast
tier"): its generated loop finds a resumed session's block by halving the range of labels
(``fast._dispatch``), and a program of more than ``fast.FAST_POOLS`` pool families runs in the general
engine, whose settle asks only the pools something changed (the fast tier's asked every pool at every
event). Each program here is run on both tiers and the reports compared byte for byte."""

from __future__ import annotations

import re

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim import fast
from serq_sim.errors import SimError

pytestmark = pytest.mark.timeout(120)


def _both(src: str, monkeypatch) -> tuple[object, object]:
    """The report (or the error's type and message) on the default tier and on the general engine."""
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    out = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        try:
            out.append(serq_sim.run(prog))
        except SimError as e:
            out.append(("error", str(e)))
    return out[0], out[1]


def _runs_program(n: int, bad: int | None = None) -> str:
    """A session of ``n`` runs in a row on a fifo stage, every tenth inside a branch on a draw and every
    seventh a branch on the serial between one run and two, so the labels are many and reached out of order; with ``bad``, the
    run at that index has a negative work for the sessions of odd serial (a run-time error there)."""
    parts = []
    for i in range(n):
        work = "(serial % 2 == 1 ? -1 : 0.001)" if i == bad else "~exp(0.0005)"
        run = f"run s ({work});"
        if i % 10 == 3:
            parts.append(f"branch with (0.5) {{ {run} }} else {{ observe skipped = {i}; }}")
        elif i % 7 == 5:
            parts.append(f"branch (serial % 3 == 0) {{ {run} {run} }} else {{ {run} }}")
        else:
            parts.append(run)
    body = "\n  ".join(parts)
    return f"""stage s : fifo;
workload {{ arrive poisson(2); }}
session {{
  {body}
  observe done = now;
  end;
}}
run {{ horizon 20; seed 3; }}
"""


def _longest_chain(src: str) -> int:
    """The longest run of ``if pc == …`` tests at one indentation with nothing at that indentation or
    less between them: the tests a resumption passes in a leaf of the dispatch."""
    longest = 0
    runs: dict[int, int] = {}
    for line in src.splitlines():
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        ind = len(line) - len(body)
        keep = {k: v for k, v in runs.items() if k < ind}
        if re.match(r"if pc == \d+:$", body):
            keep[ind] = runs.get(ind, 0) + 1
            longest = max(longest, keep[ind])
        runs = keep
    return longest


def _fast_source(src: str) -> str:
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    prog = serq_frontend.compile(source=src, sets={}, defs={})
    return fast._Gen(Simulation(prog, registries(None), seed=1, horizon=10.0, warmup=0.0)).source(False)


def test_a_long_session_dispatches_by_halving(monkeypatch):
    src = _runs_program(600)
    code = _fast_source(src)
    labels = re.findall(r"^ *if pc == (\d+):$", code, re.M)
    assert len(labels) > 600  # every run a resumption
    assert len(set(labels)) == len(labels)
    assert _longest_chain(code) <= fast._DISPATCH_LEAF
    assert code.count("if pc < ") >= len(labels) // fast._DISPATCH_LEAF - 1
    a, b = _both(src, monkeypatch)
    assert a.tier == "fast" and b.tier == "general"
    assert a.result.ended > 10 and len(a.observe("skipped").values) > 100
    assert encode_json(a) == encode_json(b)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 17, 64])
def test_small_sessions_agree(n, monkeypatch):
    a, b = _both(_runs_program(n), monkeypatch)
    assert a.tier == "fast"
    assert a.result.ended > 10
    assert encode_json(a) == encode_json(b)


def test_an_error_deep_in_the_tree_names_its_statement(monkeypatch):
    src = _runs_program(300, bad=287)
    a, b = _both(src, monkeypatch)
    assert isinstance(a, tuple) and a == b, (a, b)
    line = 4 + 287  # the session's first run is on line 4
    assert f":{line}:" in a[1], a[1]


def _pools_program(p: int) -> str:
    pools = "\n".join(f"pool p{i} {{ cap 1; }}" for i in range(p))
    holds = " ".join(f"hold p{i} (1) {{ run s (~exp(0.05)); }}" for i in range(p))
    return f"""{pools}
stage s : delay;
workload {{ arrive poisson(4); }}
session {{ {holds} observe done = now; end; }}
run {{ horizon 30; seed 5; }}
"""


def test_pool_families_beyond_the_limit_run_in_the_general_engine(monkeypatch):
    at = serq_frontend.compile(source=_pools_program(fast.FAST_POOLS), sets={}, defs={})
    beyond = serq_frontend.compile(source=_pools_program(fast.FAST_POOLS + 1), sets={}, defs={})
    assert fast.exclusion(at) is None
    assert fast.exclusion(beyond) == f"more than {fast.FAST_POOLS} pool families"
    for p in (fast.FAST_POOLS, fast.FAST_POOLS + 1):
        a, b = _both(_pools_program(p), monkeypatch)
        assert a.tier == ("fast" if p == fast.FAST_POOLS else "general")
        assert a.pool("p0").wait > 0 and a.result.ended > 20
        assert encode_json(a) == encode_json(b)


def _observes_program(k: int) -> str:
    """A session of ``k`` statements: ``k - 1`` observes and a run (a program at the statements' limit
    when ``k`` is ``fast.FAST_STATEMENTS``)."""
    obs = " ".join(f"observe o{i % 7} = serial + {i};" for i in range(k - 1))
    return f"""stage s : fifo;
workload {{ arrive poisson(1); }}
session {{ {obs} run s (~exp(0.5)); }}
run {{ horizon 6; seed 2; }}
"""


def test_statements_beyond_the_limit_run_in_the_general_engine(monkeypatch):
    # (the session's `end` is implicit: k statements in all)
    n = fast.FAST_STATEMENTS
    at = serq_frontend.compile(source=_observes_program(n), sets={}, defs={})
    beyond = serq_frontend.compile(source=_observes_program(n + 1), sets={}, defs={})
    assert sum(1 for _ in fast._stmts(at.session)) == n
    assert fast.exclusion(at) is None
    assert fast.exclusion(beyond) == f"more than {n} statements"
    for k in (n, n + 1):
        a, b = _both(_observes_program(k), monkeypatch)
        assert a.tier == ("fast" if k == n else "general")
        assert len(a.observe("o3").values) > 100
        assert encode_json(a) == encode_json(b)
