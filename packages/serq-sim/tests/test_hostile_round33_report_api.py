"""The report object used as a researcher scripts it: an SLO set twice, an empty SLO, a report copied or
pickled, a partial report, and a second run in the same process (docs/simulator.md, "The Python API's
report").

``report.set_slo({})`` was taken for an objective every request meets: the goodput of every request, and a
text report saying ``265 of 265 good: )``, where ``serq run --slo ''`` is refused."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_report import render

ROOT = Path(__file__).resolve().parents[3]
SINGLE = str(ROOT / "examples" / "multi-turn" / "vllm_single_turn.sq")


@pytest.fixture(scope="module")
def program():
    return serq_frontend.compile(SINGLE)


def _run(program, **kw):
    return serq_sim.run(program, **{"seed": 2, "horizon": 120, "warmup": 0, **kw})


def _good(report, ttft: float) -> int:
    """The requests whose TTFT (first_token - sent) is at most ``ttft``, counted from the records by hand."""
    t = report.records(kind="numpy")
    return sum(1 for s, f in zip(t["sent"], t["first_token"]) if f - s <= ttft)


def test_an_empty_slo_is_refused_and_the_report_keeps_its_goodput(program):
    report = _run(program)
    report.set_slo({"ttft": 0.05})
    before = report.result
    with pytest.raises(ValueError, match=r"^slo: no metric given: an SLO is seconds by metric \(\{'ttft': 1\.0\}\), "
                                         r"of ttft, tpot, e2el$"):
        report.set_slo({})
    assert report.result is before
    assert "good: )" not in render(report, "text")


def test_a_second_slo_replaces_the_first(program):
    report = _run(program)
    m = report.result.requests
    assert m.completed > 40
    report.set_slo({"ttft": 0.05})
    report.set_slo({"ttft": 0.2})
    m = report.result.requests
    good = _good(report, 0.2)
    assert 0 < good < m.completed and good != _good(report, 0.05)  # (the two SLOs tell apart)
    assert (m.slo, m.good) == ({"ttft": 0.2}, good)
    assert m.goodput == pytest.approx(good / m.duration, rel=1e-12)
    fresh = _run(program)
    fresh.set_slo({"ttft": 0.2})
    assert render(fresh, "json") == render(report, "json")


def test_records_are_a_new_table_at_each_call(program):
    report = _run(program)
    frame = report.records()
    first = frame.iloc[0, 0]
    frame.iloc[0, 0] = -1
    assert report.records().iloc[0, 0] == first
    with pytest.raises(ValueError, match="read-only"):
        report.records(kind="numpy")["sent"][0] = -1.0


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_report_copied_or_pickled_is_the_same_report(program, how):
    report = _run(program)
    report.set_slo({"ttft": 0.2})
    other = pickle.loads(pickle.dumps(report)) if how == "pickle" else copy.deepcopy(report)
    for fmt in ("json", "text", "csv"):
        assert render(other, fmt) == render(report, fmt)
    assert other.records().equals(report.records())
    assert other.observe("ttft").values.tobytes() == report.observe("ttft").values.tobytes()
    assert [(n, getattr(n, "code", None)) for n in other.notes] == [(n, getattr(n, "code", None)) for n in report.notes]


def test_a_partial_report_takes_every_method(program):
    report = _run(program, max_events=400)
    assert report.partial == "max-events" and report.exit_status == 3
    rows = len(report.records())
    report.set_slo({"ttft": 0.2})
    assert report.result.requests.good == _good(report, 0.2) <= rows
    for fmt in ("json", "text", "csv"):
        assert render(pickle.loads(pickle.dumps(report)), fmt) == render(report, fmt)


MG1 = str(ROOT / "examples" / "single-turn" / "mg1.sq")
FRESH = """
import sys, serq_frontend, serq_sim
from serq_report import render
r = serq_sim.run(serq_frontend.compile(sys.argv[1], sets={"lambda": 0.7}), seed=3, horizon=3000, warmup=0)
sys.stdout.write(r.tier + " " + render(r, "json"))
"""


def test_a_run_after_others_in_the_process_is_a_fresh_process_run(program):
    import subprocess
    import sys

    _run(program, max_events=300)  # (other runs first: a step engine's, a fast one's, one stopped early)
    serq_sim.run(serq_frontend.compile(MG1, defs={"service": "~det(1)"}), seed=9, horizon=500, warmup=0)
    here = serq_sim.run(serq_frontend.compile(MG1, sets={"lambda": 0.7}), seed=3, horizon=3000, warmup=0)
    fresh = subprocess.run([sys.executable, "-c", FRESH, MG1], capture_output=True, text=True, check=True)
    assert fresh.stdout == here.tier + " " + render(here, "json")
    assert here.tier == "fast"


@pytest.mark.parametrize("tier", ["", "general"])
def test_runs_in_two_threads_at_once_are_the_runs_alone(program, monkeypatch, tier):
    import threading

    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    programs = [(program, {"horizon": 60}), (serq_frontend.compile(MG1), {"horizon": 4000})]
    alone = [render(serq_sim.run(p, seed=s, warmup=0, **kw), "json") for p, kw in programs for s in (1, 2)]
    out: dict[int, str] = {}
    start = threading.Barrier(4)

    def go(i, p, seed, kw):
        start.wait()
        out[i] = render(serq_sim.run(p, seed=seed, warmup=0, **kw), "json")

    threads = [threading.Thread(target=go, args=(i, p, s, kw))
               for i, (p, kw, s) in enumerate((p, kw, s) for p, kw in programs for s in (1, 2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert [out.get(i) for i in range(4)] == alone


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_records_of_a_library_not_installed_say_so(program, monkeypatch, kind):
    import sys

    report = _run(program, max_events=300)
    monkeypatch.setitem(sys.modules, kind, None)  # (import of it then fails, installed or not)
    with pytest.raises(ModuleNotFoundError) as e:
        report.records(kind=kind)
    assert str(e.value) == (f"records(kind={kind!r}) needs {kind}, which is not installed (pip install {kind}); "
                            "kind='numpy' gives the columns as numpy arrays, kind='auto' what is installed")
    assert set(report.records(kind="numpy")) >= {"session", "turn", "time", "sent"}
    monkeypatch.setitem(sys.modules, "pandas", None)
    monkeypatch.setitem(sys.modules, "polars", None)
    assert isinstance(report.records(kind="auto"), dict)  # (auto: numpy when neither is there)


INNER = "stage d : delay;\nworkload { arrive poisson(1); }\nsession { run d (~exp(1)); observe x = ~exp(2); }\n" \
        "run { horizon 50; }\n"
OUTER = "stage n : @nested33;\nstage d : fifo;\nworkload { arrive poisson(1); }\n" \
        "session { set t0 = now; run n (~exp(1)); run d (~exp(2)); observe r = now - t0; }\nrun { horizon 60; warmup 0; }\n"


def test_a_run_inside_a_plugins_stage_leaves_the_outer_run_as_it_was():
    # a stage kind whose attach runs a simulation of its own for each job (its own seed, its own streams):
    # the outer run's report is the one it gives when the stage runs none
    from serq import hookimpl
    from serq.plugins import get_plugin_manager
    from serq_sim.stages import DelayStage

    inner_runs: list = []
    pm = get_plugin_manager()
    inner = serq_frontend.compile(source=INNER, pm=pm)

    class Nested(DelayStage):
        def attach(self, job):
            if inner_runs is not None and len(inner_runs) < 8:
                inner_runs.append(render(serq_sim.run(inner, pm=pm, seed=7), "json"))
            super().attach(job)

    class Plugin:
        @hookimpl
        def serq_sim_register_stage_kinds(self, register):
            register("nested33", Nested)

    pm.register(Plugin(), name="nested33")
    outer = serq_frontend.compile(source=OUTER, pm=pm)
    with_inner = render(serq_sim.run(outer, pm=pm, seed=3), "json")
    assert len(inner_runs) == 8 and len(set(inner_runs)) == 1  # (each inner run the same: seed 7)
    inner_runs = None  # (the stage runs none now)
    alone = render(serq_sim.run(outer, pm=pm, seed=3), "json")
    assert with_inner == alone
