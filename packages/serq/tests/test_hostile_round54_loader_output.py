"""What a loader prints is no output of the command's (docs/hooks.md, ``serq_register_loaders``): a
third party's loader that prints ("loading q.jobs"), or a sugar layer whose code prints while the ``.sq``
loader compiles, writes to standard error, and standard output holds the IR or the report alone. Before,
``serq ir q.jobs > q.ir.json`` wrote the line into the JSON ahead of the IR (and ``serq run q.jobs --format
json`` ahead of the report), so the file the user named held what no reader of the IR or the report takes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
import serq_ir.plugin
from serq.errors import PluginError
from serq.loading import load_program
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer

SOURCE = ("stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (1); observe r = now; }\n"
          "run { horizon inf; }\n")


def jobs_manager(fail=False):
    class Jobs:
        @serq.hookimpl
        def serq_register_loaders(self, register):
            def load_jobs(path, options):
                print("loading", path.name)
                if fail:
                    raise RuntimeError("no jobs today")
                return serq_frontend.compile(source=SOURCE, pm=options.pm)

            register(".jobs", load_jobs)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_ir.plugin, serq_frontend.plugin, Jobs()])


def test_what_a_loader_prints_goes_to_standard_error(tmp_path, capsys):
    f = tmp_path / "q.jobs"
    f.write_text("")
    program = load_program(jobs_manager(), f)
    assert [s.name for s in program.stages] == ["s"]
    out, err = capsys.readouterr()
    assert (out, err) == ("", "loading q.jobs\n")
    assert sys.stdout is not sys.stderr  # put back after the load
    with pytest.raises(PluginError, match="during its loader for .jobs files: RuntimeError: no jobs today at "):
        load_program(jobs_manager(fail=True), f)
    out, err = capsys.readouterr()
    assert (out, err) == ("", "loading q.jobs\n")
    print("after")
    assert capsys.readouterr().out == "after\n"


def test_what_a_sugar_layer_prints_in_the_sq_loaders_compile_goes_to_standard_error(tmp_path, capsys,
                                                                                     monkeypatch):
    monkeypatch.setenv("SERQ_COMPILE_CACHE", "0")

    def rewrite(module, ctx):
        print("desugaring", len(module.items), "items")
        return A.Module(list(module.items), module.file)

    class Chatty:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(SugarLayer("chatty", "", {}, rewrite))

    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_ir.plugin, serq_frontend.plugin, Chatty()])
    f = tmp_path / "p.sq"
    f.write_text(SOURCE)
    assert [s.name for s in load_program(pm, f).stages] == ["s"]
    assert capsys.readouterr() == ("", "desugaring 4 items\n")


PLUGIN = f"""
from serq import hookimpl

SOURCE = {SOURCE!r}


def load_jobs(path, options):
    import serq_frontend

    print("loading", path.name)
    return serq_frontend.compile(source=SOURCE, pm=options.pm)


@hookimpl
def serq_register_loaders(register):
    register(".jobs", load_jobs)
"""


@pytest.mark.parametrize("command", [["ir", "q.jobs"], ["run", "q.jobs", "--format", "json", "--no-progress"]])
def test_serq_writes_the_ir_and_the_report_alone_to_standard_output(tmp_path, command):
    site = tmp_path / "site"
    info = site / "serq_jobs54-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-jobs54\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\njobs54 = jobs54_loader\n")
    (site / "jobs54_loader.py").write_text(PLUGIN)
    (tmp_path / "q.jobs").write_text("")
    env = {**os.environ, "PYTHONPATH": str(site), "SERQ_COMPILE_CACHE": "0"}
    r = subprocess.run([sys.executable, "-m", "serq", *command], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "loading q.jobs\n"
    doc = json.loads(r.stdout)
    assert ("stages" in doc) if command[0] == "ir" else (doc["program"]["path"] == "q.jobs")
