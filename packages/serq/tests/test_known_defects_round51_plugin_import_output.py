"""What a third party's plugin module writes to standard output as it is imported (a ``print`` at its top, an
``os.write(1, …)``) goes to standard error (serq.plugins.load_entry_points: its import and registration under
serq.loading.stdout_to_stderr): the plugins load before every command, and ``serq run --json``'s report or
``serq ir``'s IR began with the module's lines. A plugin whose import fails is still named, and standard
output is put back for the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROGRAM = "stage s : delay;\nworkload { arrive batch(2); }\nsession { run s (1.5); }\nrun { horizon inf; }\n"

PLUGIN = """
import os
print("imported imp51")
os.write(1, b"fd imported\\n")
from serq import hookimpl
if os.environ.get("IMP51_FAIL"):
    raise ImportError("imp51 cannot start")


@hookimpl
def serq_frontend_library_paths():
    return []
"""


@pytest.fixture
def env(tmp_path):
    site = tmp_path / "site"
    info = site / "serq_imp51-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-imp51\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nimp51 = imp51\n")
    (site / "imp51.py").write_text(PLUGIN)
    (tmp_path / "p.sq").write_text(PROGRAM)
    return {**os.environ, "PYTHONPATH": str(site), "SERQ_COMPILE_CACHE": "0"}


def serq(tmp_path, env, *args):
    return subprocess.run([sys.executable, "-m", "serq", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("command", [["run", "--json", "p.sq", "--no-progress"], ["ir", "p.sq"]])
def test_the_output_is_the_commands_alone(tmp_path, env, command):
    r = serq(tmp_path, env, *command)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    if command[0] == "run":  # two sessions of 1.5 each on a delay stage: both end at 1.5
        assert (doc["arrivals"], doc["end"]) == (2, 1.5)
    else:
        assert [s["name"] for s in doc["stages"]] == ["s"]
    assert r.stderr.splitlines() == ["imported imp51", "fd imported"]


def test_a_plugin_that_fails_to_import_is_named_and_stdout_is_put_back(tmp_path, env):
    r = serq(tmp_path, {**env, "IMP51_FAIL": "1"}, "ir", "p.sq")
    assert r.returncode == 1
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[:2] == ["imported imp51", "fd imported"]
    assert lines[2].startswith("error: plugin 'imp51' (from serq-imp51 0.1.0) cannot be loaded (imp51): ImportError: "
                               "imp51 cannot start at "), lines[2]
    r = serq(tmp_path, {**env, "SERQ_DISABLED_PLUGINS": "imp51"}, "ir", "p.sq")
    assert r.returncode == 0 and r.stderr == ""
    assert [s["name"] for s in json.loads(r.stdout)["stages"]] == ["s"]
