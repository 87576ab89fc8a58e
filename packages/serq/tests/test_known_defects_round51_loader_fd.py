"""What a loader writes to file descriptor 1 itself (``os.write(1, …)``, a C library's ``printf``, a child
process that inherits it) goes to standard error, as what it prints does (test_hostile_round54_loader_output):
``serq run --json q.jobs`` writes the report alone to standard output. Before, ``os.write(1, b"loading\\n")``
bypassed the redirection of ``sys.stdout`` and came out ahead of the report, which no JSON reader took. What
the command writes after the load goes to standard output as before, and descriptor 1 is put back (in a
Python process that calls the loader, after a failure too)."""

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

SOURCE = ("stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (1); observe r = now; }\n"
          "run { horizon inf; }\n")

PLUGIN = f"""
import os
import subprocess
import sys

from serq import hookimpl

SOURCE = {SOURCE!r}


def load_jobs(path, options):
    import serq_frontend

    os.write(1, b"fd one: loading " + path.name.encode() + b"\\n")
    sys.__stdout__.write("the interpreter's stdout\\n")  # (buffered: flushed before descriptor 1 is put back)
    subprocess.run([sys.executable, "-c", "print('a child process')"], check=True, timeout=60)
    print("print")
    return serq_frontend.compile(source=SOURCE, pm=options.pm)


@hookimpl
def serq_register_loaders(register):
    register(".jobs", load_jobs)
"""


def install(tmp_path):
    site = tmp_path / "site"
    info = site / "serq_jobs51-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-jobs51\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\njobs51 = jobs51_loader\n")
    (site / "jobs51_loader.py").write_text(PLUGIN)
    (tmp_path / "q.jobs").write_text("")
    return {**os.environ, "PYTHONPATH": str(site), "SERQ_COMPILE_CACHE": "0"}


@pytest.mark.parametrize("command", [["run", "--json", "q.jobs", "--no-progress"], ["ir", "q.jobs"]])
def test_what_a_loader_writes_to_descriptor_one_goes_to_standard_error(tmp_path, command):
    env = install(tmp_path)
    r = subprocess.run([sys.executable, "-m", "serq", *command], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # the report (or the IR) alone
    assert (doc["program"]["path"] == "q.jobs") if command[0] == "run" else ("stages" in doc)
    assert r.stderr.splitlines() == ["fd one: loading q.jobs", "the interpreter's stdout", "a child process",
                                     "print"]


def test_descriptor_one_is_put_back_after_the_load(tmp_path):
    """In one Python process whose descriptor 1 is a file: the load's writes go to descriptor 2's file, the
    process's own before and after to descriptor 1's, a failed load's too."""
    script = tmp_path / "call.py"
    script.write_text(f"""
import os, sys
sys.path.insert(0, {str(tmp_path / 'site')!r})
import serq, serq_frontend.plugin, serq_ir.plugin, jobs51_loader
from serq.errors import PluginError
from serq.loading import load_program

pm = serq.get_plugin_manager(autoload=False, plugins=[serq_ir.plugin, serq_frontend.plugin, jobs51_loader])
print("before", flush=True)
os.write(1, b"fd before\\n")
load_program(pm, "q.jobs")
print("after", flush=True)
os.write(1, b"fd after\\n")

def boom(path, options):
    os.write(1, b"failing\\n")
    raise RuntimeError("no jobs")

jobs51_loader.load_jobs.__code__ = boom.__code__
try:
    load_program(pm, "q.jobs")
except PluginError as e:
    print("refused:", str(e).splitlines()[0].split(" failed ")[0], file=sys.stderr)
os.write(1, b"fd at the end\\n")
""")
    env = install(tmp_path)
    with open(tmp_path / "out", "wb") as out, open(tmp_path / "err", "wb") as err:
        r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, stdout=out, stderr=err,
                           timeout=120)
    err_text = (tmp_path / "err").read_text()
    assert r.returncode == 0, err_text
    assert (tmp_path / "out").read_text().splitlines() == ["before", "fd before", "after", "fd after",
                                                            "fd at the end"]
    assert err_text.splitlines() == ["fd one: loading q.jobs", "the interpreter's stdout", "a child process",
                                     "print", "failing", "refused: error: plugin 'jobs51_loader'"]


def test_in_process_the_python_level_redirection_is_kept(tmp_path, capsys):
    class Jobs:
        @serq.hookimpl
        def serq_register_loaders(self, register):
            def load_jobs(path, options):
                print("loading", path.name)
                raise RuntimeError("no jobs today")

            register(".jobs", load_jobs)

    (tmp_path / "q.jobs").write_text("")
    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_ir.plugin, serq_frontend.plugin, Jobs()])
    with pytest.raises(PluginError, match="no jobs today"):
        load_program(pm, tmp_path / "q.jobs")
    assert capsys.readouterr() == ("", "loading q.jobs\n")
    print("after")
    assert capsys.readouterr().out == "after\n"
