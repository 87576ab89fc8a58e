"""Running a theory program and judging its estimate against a closed form.

Every test runs seed 1 and asserts that the 95% batch-means CI (20 batches, Student t) covers the closed
form and that its half-width is below 5% of it. The run lengths keep the half-width near 1–3.5%. Over
seeds 1–11 of the six cases of the classical set (132 estimates) the CI covered the closed form 126 times
(95.5%), with the misses on both sides; GI/M/1 (12 seeds) and the ps(min(present, 3)) stage (11 seeds)
were covered every time. A failure here is worth a second seed before it is called a bug; a systematic
one is a bug.
"""

from __future__ import annotations

from pathlib import Path

import serq_frontend
import serq_sim
from serq_ir import nodes

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
REPO = HERE.parents[3]

#: The half-width of the 95% CI must be below this fraction of the closed form.
PRECISION = 0.05


def program_path(example: str, own: str) -> Path:
    """The repository's example when it is there, else the program kept beside the tests."""
    path = REPO / "examples" / example
    return path if path.exists() else PROGRAMS / own


def compile_program(path: Path, *, sets: dict | None = None, defs: dict | None = None) -> nodes.Program:
    return serq_frontend.compile(str(path), sets=sets or {}, defs=defs or {})


def poisson_rate(program: nodes.Program) -> float:
    arrive = program.workload.arrive
    assert isinstance(arrive, nodes.Poisson), f"expected Poisson arrivals, got {arrive!r}"
    return float(arrive.rate)


def stage(program: nodes.Program, name: str) -> nodes.Stage:
    for st in program.stages:
        if st.name == name:
            return st
    raise AssertionError(f"no stage {name!r} in {[s.name for s in program.stages]}")


def constant(program: nodes.Program, name: str) -> float:
    for c in program.constants:
        if c.name == name:
            return float(c.value)
    raise AssertionError(f"no let {name!r} in {[c.name for c in program.constants]}")


def run(program: nodes.Program, *, seed: int, horizon: float, warmup: float) -> serq_sim.Report:
    return serq_sim.run(program, seed=seed, horizon=horizon, warmup=warmup)


def assert_matches(report: serq_sim.Report, observe: str, expected: float, *, precision: float = PRECISION):
    """The 95% batch-means CI of the simulated mean covers the closed form, and is tight."""
    st = report.result.observes[observe]
    where = (
        f"{observe}: simulated {st.mean:.5f} ± {st.ci:.5f} ({st.count} samples), "
        f"closed form {expected:.5f}, error {st.mean - expected:+.5f} "
        f"({(st.mean - expected) / expected:+.2%}), half-width {st.ci / expected:.2%}"
    )
    assert st.count > 0, where
    assert abs(st.mean - expected) <= st.ci, "CI misses the closed form: " + where
    assert st.ci < precision * expected, "CI too wide: " + where


def with_rate(path: Path, rate: float, *, defs: dict | None = None) -> nodes.Program:
    """The program with its Poisson arrival rate set to ``rate``: the let whose value the rate is is
    overridden (an example names its rate as it likes)."""
    program = compile_program(path, defs=defs)
    current = poisson_rate(program)
    if current == rate:
        return program
    names = [c.name for c in program.constants if not isinstance(c.value, str) and float(c.value) == current]
    assert len(names) == 1, f"{path}: cannot tell which let is the arrival rate {current} ({names})"
    program = compile_program(path, sets={names[0]: rate}, defs=defs)
    assert poisson_rate(program) == rate
    return program


def only_stage(program: nodes.Program, kind: type) -> nodes.Stage:
    found = [s for s in program.stages if isinstance(s.kind, kind)]
    assert len(found) == 1, f"expected one {kind.__name__} stage, got {[s.name for s in program.stages]}"
    return found[0]
