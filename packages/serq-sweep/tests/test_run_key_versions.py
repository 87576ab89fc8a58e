"""A run's key holds the versions of the parts that decide its results (serq-ir, serq-frontend, serq-sim, and
the distribution of each plugin providing a stage kind or policy the program names): a table resumed after
one of them changed runs its runs again. The key held the IR, the seed, the bounds and the trace alone, so a
table resumed after an upgrade of serq-sim kept the old version's runs and mixed them with the new one's,
silently (docs/sweep.md, Resuming)."""

from __future__ import annotations

import csv
from pathlib import Path
from types import SimpleNamespace

import pytest
import serq.plugins
import serq_sweep

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[3]
MG1 = str(ROOT / "examples/single-turn/mg1.sq")
ARGS = dict(sets={"lambda": 0.5}, seeds=[1, 2], arrivals=20, horizon=float("inf"), warmup=0, workers=0,
            progress=False)


def _as_version(monkeypatch, part: str, version: str) -> None:
    """Make ``part`` (a distribution's name) seem installed at ``version``."""
    real = serq.plugins.find_distributions

    def find(names):
        found = real(names)
        return {n: SimpleNamespace(project_name=n, version=version, metadata={"Name": n}) if n == part else d
                for n, d in found.items()}

    monkeypatch.setattr(serq.plugins, "find_distributions", find)


def _keys(path) -> list[str]:
    with open(path, newline="") as f:
        return [row["key"] for row in csv.DictReader(f)]


@pytest.mark.parametrize("part", ["serq-sim", "serq-ir", "serq-frontend"])
def test_a_table_resumed_under_another_version_of_a_part_runs_every_run_again(tmp_path, monkeypatch, part):
    out = str(tmp_path / "r.csv")
    first = serq_sweep.sweep(MG1, out=out, **ARGS)
    same = serq_sweep.sweep(MG1, out=out, **ARGS)  # the same version: the same keys, nothing run again
    assert list(same["key"]) == list(first["key"]) == _keys(out)
    _as_version(monkeypatch, part, "999.0")
    again = serq_sweep.sweep(MG1, out=out, **ARGS)
    assert len(again) == 2 and not set(again["key"]) & set(first["key"])
    assert _keys(out) == list(again["key"])  # the table holds this version's runs alone
    assert list(again["observes.response.mean"]) == list(first["observes.response.mean"])  # (the same code ran)


def test_a_plugin_providing_a_kind_the_program_names_is_in_the_key(tmp_path, monkeypatch):
    """The stage kind `fifo` of mg1.sq is registered by a plugin (serq-sim's, seen here as another
    distribution's): its distribution's version is in the key."""
    import serq_sim.plugin

    real = serq.plugins.plugin_distribution
    version = {"v": "1.0"}

    def dist(pm, plugin):
        if plugin is serq_sim.plugin:
            return SimpleNamespace(project_name="acme-kinds", version=version["v"])
        return real(pm, plugin)

    monkeypatch.setattr(serq.plugins, "plugin_distribution", dist)
    a = list(serq_sweep.sweep(MG1, **ARGS)["key"])
    version["v"] = "1.1"
    b = list(serq_sweep.sweep(MG1, **ARGS)["key"])
    assert not set(a) & set(b)


def test_a_table_resumed_under_another_report_shape_runs_every_run_again(tmp_path, monkeypatch):
    """The report's shape decides which figures a run has: a table written under report version 3 had no
    request metrics' `std`, and its rows were resumed beside new ones that had it (the column empty for
    them). FIGURES_VERSION is in the key."""
    import serq_ir.report

    out = str(tmp_path / "r.csv")
    first = serq_sweep.sweep(MG1, out=out, **ARGS)
    monkeypatch.setattr(serq_ir.report, "FIGURES_VERSION", serq_ir.report.FIGURES_VERSION + 1)
    again = serq_sweep.sweep(MG1, out=out, **ARGS)
    assert len(again) == 2 and not set(again["key"]) & set(first["key"])
    assert _keys(out) == list(again["key"])


def test_a_report_version_that_changed_no_figure_keeps_the_keys(tmp_path, monkeypatch):
    """A report version that changed only what is no figure (7: program.plugins) resumes a table written
    before it: its runs' keys are the same, no run runs again."""
    import serq_ir.report

    out = str(tmp_path / "r.csv")
    first = serq_sweep.sweep(MG1, out=out, **ARGS)
    monkeypatch.setattr(serq_ir.report, "REPORT_VERSION", serq_ir.report.REPORT_VERSION + 1)
    again = serq_sweep.sweep(MG1, out=out, **ARGS)
    assert list(again["key"]) == list(first["key"]) and _keys(out) == list(first["key"])
