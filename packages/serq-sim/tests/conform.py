"""Running a hand-computed conformance case (test_conformance_hand.py, test_conformance_more.py,
test_conformance_pd.py): the program on the tier picked for it and on the general engine, which must
give the same report, and the samples of its observes in time order; a program file on both tiers, and a
mean's CI against a closed form (the peer programs' tests)."""

from __future__ import annotations

import json
import math
import os

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json


def _compiled(src: str, path=None):
    return serq_frontend.compile(path=str(path)) if path else serq_frontend.compile(source=src, sets={}, defs={})


def _run(src: str, monkeypatch, tier: str, path=None, program=None):
    """The report of ``src`` (or the file ``path``) on ``tier``; ``program``: its IR, compiled already (the
    compile reads no tier, and a run leaves its program as it was: both tiers run one compile)."""
    if tier:
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
    else:
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    return serq_sim.run(program if program is not None else _compiled(src, path))


def samples(report) -> dict:
    """Every observe's columns as bytes (values, times, sessions, turns)."""
    return {n: tuple(getattr(o, f).tobytes() for f in ("values", "times", "sessions", "turns"))
            for n, o in report.observes.items()}


def run(src: str, monkeypatch, path=None):
    """``(report, {observe: [(session, time, value), …] in time then session order})``, the same on both
    tiers (``path``: the program's file instead of ``src``): the reports and every observe's samples the
    same bytes (a report summarises a sample column, which is the same for its values in another order:
    two victims preempted in the other order, say)."""
    program = _compiled(src, path)
    picked = _run(src, monkeypatch, "", program=program)
    general = _run(src, monkeypatch, "general", program=program)
    assert encode_json(picked) == encode_json(general)
    assert samples(picked) == samples(general)
    obs = {}
    for name, o in general.observes.items():
        rows = zip(o.sessions.tolist(), o.times.tolist(), o.values.tolist())
        obs[name] = sorted(((s, t, v) for s, t, v in rows), key=lambda r: (r[1], r[0]))
    return general, obs


def both_tiers(path, monkeypatch, *, sets=None, **kw):
    """The program file ``path`` run (``serq_sim.run(…, **kw)``) on the tier serQ picks and on the general
    engine: the two reports and every observe's samples must be the same bytes. Returns the report."""
    prog = serq_frontend.compile(path=str(path), sets=sets or {})
    out = []
    before = os.environ.get("SERQ_SIM_TIER")
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        r = serq_sim.run(prog, **kw)
        samples = {n: tuple(getattr(o, f).tobytes() for f in ("values", "times", "sessions", "turns"))
                   for n, o in r.observes.items()}
        out.append((encode_json(r), samples, r))
    # the rest of the test runs on the tier it ran on before (not on the general engine, silently)
    if before is None:
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    else:
        monkeypatch.setenv("SERQ_SIM_TIER", before)
    assert out[0][0] == out[1][0]
    assert out[0][1] == out[1][1]
    return out[1][2]


def covers(stats, theory: float, rel: float) -> None:
    """The run's mean is within its 95 % CI of ``theory``, and that CI is narrow (under ``rel`` of it)."""
    assert abs(stats.mean - theory) <= stats.ci, (stats.mean, stats.ci, theory)
    assert stats.ci <= rel * abs(theory), (stats.ci, theory)


def at(samples):
    """An observe's samples as ``(session, time)``, without their values."""
    return [(s, t) for s, t, _ in samples]


def vals(samples):
    """An observe's samples' values, in order."""
    return [v for _, _, v in samples]


def pool(report, name):
    return next(p for p in report.result.pools if p.name == name)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def stage(report, name, index=None):
    return next(s for s in report.result.stages if s.name == name and s.index == index)


def refused(src: str) -> str:
    """The compile error's first line (no position)."""
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=src, sets={}, defs={})
    return str(e.value).splitlines()[0].split(": error: ", 1)[1]


def run_error(src: str, monkeypatch) -> str:
    """The run-time error's first line, the same on both tiers."""
    msgs = []
    program = _compiled(src)
    for tier in ("", "general"):
        with pytest.raises(serq_sim.SimError) as e:
            _run(src, monkeypatch, tier, program=program)
        msgs.append(str(e.value).splitlines()[0])
    assert msgs[0] == msgs[1]
    return msgs[0]


def gim1_sigma(lst, mu: float) -> float:
    """GI/M/1's sigma for gaps whose Laplace-Stieltjes transform is ``lst`` into an exp(mu) server: the
    root in (0, 1) of sigma = lst(mu (1 - sigma)), by bisection (lst(mu (1 - x)) - x is positive below the
    root, negative above it)."""
    lo, hi = 0.0, 1.0 - 1e-12
    for _ in range(200):
        x = (lo + hi) / 2
        if lst(mu * (1 - x)) - x > 0:
            lo = x
        else:
            hi = x
    return x


def report_json(report) -> dict:
    """The report as its JSON reads (``serq run --json``): the dict the round-29 conformance tests assert on."""
    return json.loads(encode_json(report))


def pool_json(report, name: str, index=None) -> dict:
    """One pool's entry of the JSON report, its name and index left out."""
    entry = next(p for p in report_json(report)["pools"] if p["name"] == name and p["index"] == index)
    return {k: v for k, v in entry.items() if k not in ("name", "index")}


#: one vLLM engine of lib/vllm.sq on the step clock, KV blocks of 4 tokens, N requests sent at 0 (the
#: §7 conformance cases): the words in capitals are filled by :func:`vllm_engine`
VLLM_ENGINE = """
use "vllm.sq";
pool reqs { cap MAXSEQ; admit via engine; }
pool kv { cap BLOCKS * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget B; cost 1; CHUNK memory kv; }
workload { arrive batch(N); hidden o; }
session {
  set prompt = PROMPT;
  set o = OUT;
  set t0 = now;
  REQUEST;
}
run { horizon 100; }
"""


def vllm_engine(**subs: str) -> str:
    """:data:`VLLM_ENGINE` with each word of ``subs`` replaced by its text, in the order given."""
    src = VLLM_ENGINE
    for k, v in subs.items():
        src = src.replace(k, v)
    return src


def request_rows(report) -> list[tuple]:
    """(session, sent, admitted, first_token, last_token, cached, preemptions) of each row of the request
    table, in the table's order (the order the requests' last tokens came)."""
    t = report.records("request")
    cols = {k: list(t[k]) for k in ("session", "sent", "admitted", "first_token", "last_token", "cached",
                                     "preemptions")}
    return [tuple(cols[k][i] for k in cols) for i in range(len(cols["session"]))]


def figure(js: dict, key):
    """The part of a JSON report a hand-computed case names: a top-level key, a stage or pool by ``(name,
    index)``, or a gauge by ``("gauge", name)``."""
    if isinstance(key, tuple) and key[0] == "gauge":
        return js["gauges"][key[1]]
    if isinstance(key, tuple):
        name, index = key
        return next(e for e in js["stages"] + js["pools"] if e["name"] == name and e["index"] == index)
    return js[key]


def subset(have, want):
    """The parts of ``have`` that ``want`` names, at every depth."""
    if isinstance(want, dict):
        return {k: subset(have[k], v) for k, v in want.items()}
    return have


def same_samples(got, want) -> bool:
    """Samples ``(session, time, value)`` equal, NaN equal to NaN, floats to 1e-12."""
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            if isinstance(b, float) and math.isnan(b):
                if not math.isnan(a):
                    return False
            elif not math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12):
                return False
    return True


def check_by_hand(monkeypatch, src: str, obs: dict, figures: dict):
    """Run ``src`` on both tiers (:func:`run`) and assert its observes' samples (:func:`same_samples`) and the
    report's figures (:func:`figure`, :func:`subset`, to 1e-12) a case computed by hand; the report and its JSON."""
    r, got = run(src, monkeypatch)
    for name, want in obs.items():
        assert same_samples(got.get(name, []), want), (name, got.get(name))
    js = report_json(r)
    for key, want in figures.items():
        assert subset(figure(js, key), want) == pytest.approx(want, rel=1e-12), key
    return r, js
