"""The JSON report of ``serq run`` names the plugins that provide what the program names as a plugin's
(``program.plugins``: point, name, plugin, distribution, version), since its results depend on their
versions as on serQ's; a program of built-in kinds and policies has no such entry (its report as before)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.extensions import named

pytestmark = pytest.mark.timeout(120)
SERQ = str(Path(sys.executable).parent / "serq")

# a plugin of two names: a stage kind (the built-in delay under another name) and an eviction order (lru's)
PLUGIN = '''
from serq import hookimpl
from serq_sim.stages import DelayStage
from serq_sim.policies.eviction import lru_factory


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("later", DelayStage)


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("oldest", lru_factory)
'''

PROGRAM = """pool kv { cap 64; block 16; evict EVICT; }
stage s : KIND;
stage t : KIND;
workload { arrive batch(2); }
session {
  hold kv (16) { run s (1); } cache (16);
  run t (1);
}
run { horizon 10; seed 1; }
"""


@pytest.fixture
def plugged(tmp_path):
    folder = tmp_path / "plug"
    (folder / "serq_provenance").mkdir(parents=True)
    (folder / "serq_provenance" / "__init__.py").write_text(PLUGIN)
    info = folder / "serq_provenance-2.5.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-provenance\nVersion: 2.5.1\n")
    (info / "entry_points.txt").write_text("[serq]\nprovenance = serq_provenance\n")
    return {**os.environ, "PYTHONPATH": str(folder)}


def _report(tmp_path, env, kind, evict):
    (tmp_path / "p.sq").write_text(PROGRAM.replace("KIND", kind).replace("EVICT", evict))
    r = subprocess.run([SERQ, "run", "p.sq", "--json", "--no-progress"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_plugins_a_program_names_are_in_its_report(tmp_path, plugged):
    report = _report(tmp_path, plugged, "@later", "@oldest")
    # each once (the stage kind is named twice), sorted by point and name
    assert report["program"]["plugins"] == [
        {"point": "eviction order", "name": "oldest", "plugin": "provenance", "distribution": "serq-provenance",
         "version": "2.5.1"},
        {"point": "stage kind", "name": "later", "plugin": "provenance", "distribution": "serq-provenance",
         "version": "2.5.1"},
    ]
    # and the run is the built-in delay's and lru's: the same figures as the program of built-ins
    plain = _report(tmp_path, plugged, "delay", "lru")
    assert "plugins" not in plain["program"]
    for k in ("events", "arrivals", "ended", "observes", "pools"):
        assert report[k] == plain[k], k
    assert report["report_version"] == 7


def test_a_program_of_built_ins_names_what_it_names_in_order():
    import serq_frontend

    program = serq_frontend.compile(source=PROGRAM.replace("KIND", "delay").replace("EVICT", "lru"))
    assert [(path, point, name, ext) for path, _what, point, name, ext in named(program)] == [
        ("pools[0].evict.name", "eviction order", "EvictLru", False),
        ("pools[0].preempt.name", "preemption policy", "PreemptNone", False),
        ("stages[0].kind.name", "stage kind", "Delay", False),
        ("stages[1].kind.name", "stage kind", "Delay", False),
    ]
