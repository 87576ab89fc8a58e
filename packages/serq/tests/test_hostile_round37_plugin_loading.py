"""Ctrl-C or SIGTERM while a third party's plugin is being loaded (its module imported, a large library of
its own imported from it, its ``serq_addhooks`` called) names that plugin, as one in a hook that does not
return is named: a plugin that was slow to import was stopped with ``interrupted`` alone, naming nothing,
since no plugin manager held it yet."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 5; }\n"


def _site(tmp_path: Path, files: dict[str, str], value: str = "slowplug") -> Path:
    site = tmp_path / "site"
    info = site / "serq_slow-0.2.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-slow\nVersion: 0.2.0\n")
    (info / "entry_points.txt").write_text(f"[serq]\nslow = {value}\n")
    for name, text in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    (tmp_path / "p.sq").write_text(PROGRAM)
    return site


def _serq(tmp_path: Path, site: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(site)})


@pytest.mark.parametrize("args", [["run", "p.sq", "--no-progress"], ["plugins"], ["--version"]])
def test_ctrl_c_in_a_plugins_import_names_it(tmp_path, args):
    site = _site(tmp_path, {"slowplug.py": "import os\n\nx = 1\nraise KeyboardInterrupt  # (Ctrl-C while it imports)\n"})
    r = _serq(tmp_path, site, *args)
    assert r.returncode == 130, r.stderr
    assert r.stdout == ""
    line = str(site / "slowplug.py")
    assert r.stderr == (f"serq: interrupted in plugin 'slow' (from serq-slow 0.2.0) as it was loaded (slowplug): "
                        f"<module> at {line}:4\ninterrupted\n"), r.stderr


def test_the_innermost_line_of_the_plugins_own_package_is_named(tmp_path):
    # the plugin's package imports a module of its own, which waits: that module's line; serQ's and the import
    # machinery's frames around it are not the plugin's
    site = _site(tmp_path, {"slowpkg/__init__.py": "from serq import hookimpl\n\nfrom . import heavy  # noqa\n",
                            "slowpkg/heavy.py": "def load():\n    raise KeyboardInterrupt\n\n\nload()\n"},
                 value="slowpkg:nothing")
    r = _serq(tmp_path, site, "check", "p.sq")
    assert r.returncode == 130, r.stderr
    heavy = str(site / "slowpkg" / "heavy.py")
    assert r.stderr.splitlines()[0] == (f"serq: interrupted in plugin 'slow' (from serq-slow 0.2.0) as it was loaded "
                                        f"(slowpkg:nothing): load at {heavy}:2"), r.stderr


def test_ctrl_c_in_its_serq_addhooks_names_it(tmp_path):
    site = _site(tmp_path, {"slowplug.py": "from serq import hookimpl\n\n\n@hookimpl\n"
                                           "def serq_addhooks(pluginmanager):\n    raise KeyboardInterrupt\n"})
    r = _serq(tmp_path, site, "check", "p.sq")
    assert r.returncode == 130, r.stderr
    assert r.stderr.splitlines()[0] == ("serq: interrupted in plugin 'slow' (from serq-slow 0.2.0) as it was loaded "
                                        f"(slowplug): serq_addhooks at {site / 'slowplug.py'}:6"), r.stderr


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix", reason="POSIX signals")
def test_sigterm_while_a_plugin_imports_slowly_names_it(tmp_path):
    # a real signal, sent once the module is importing (it says so in a file, then waits)
    ready = tmp_path / "ready"
    site = _site(tmp_path, {"slowplug.py": f"import time\n\nopen({str(ready)!r}, 'w').close()\ntime.sleep(100)\n"})
    proc = subprocess.Popen([SERQ, "run", "p.sq", "--no-progress"], cwd=tmp_path, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(site)})
    try:
        for _ in range(6000):
            if ready.exists() or proc.poll() is not None:
                break
            try:
                proc.wait(timeout=0.02)
            except subprocess.TimeoutExpired:
                pass
        assert ready.exists(), proc.communicate()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, err
    assert out == ""
    assert err == (f"serq: interrupted in plugin 'slow' (from serq-slow 0.2.0) as it was loaded (slowplug): <module> "
                   f"at {site / 'slowplug.py'}:4\nterminated\n"), err


def test_ctrl_c_in_a_plugins_hook_after_loading_is_named_as_before(tmp_path):
    # the note is the loading's: a plugin loaded, then interrupted in a hook, is named by its hook's place
    site = _site(tmp_path, {"slowplug.py": "from serq import hookimpl\n\n\n@hookimpl\n"
                                           "def serq_sim_register_stage_kinds(register):\n    raise KeyboardInterrupt\n"})
    r = _serq(tmp_path, site, "run", "p.sq", "--no-progress")
    assert r.returncode == 130, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"serq: interrupted in plugin 'slow' (from serq-slow 0.2.0): serq_sim_register_stage_kinds at "
        f"{site / 'slowplug.py'}:6", "interrupted"], r.stderr
