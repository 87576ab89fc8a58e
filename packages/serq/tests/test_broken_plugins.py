"""A third-party plugin that cannot be loaded (its module raises on import, is missing, or implements a
hook serq does not define) is one message naming the plugin, its distribution, what went wrong and how
to run without it; exit status 1, no traceback. Every command is refused, ``--help`` and ``--version``
too (what the installation offers is not known without it); ``SERQ_DISABLED_PLUGINS`` leaves it out."""

from __future__ import annotations

import os

import pytest
import serq
from host_helpers import run_serq

BODIES = {
    "raises": ("broken_mod", "import os\nraise RuntimeError('boom at import')\n",
               "cannot be loaded (broken_mod): RuntimeError: boom at import at {site}{sep}broken_mod.py:2"),
    "missing": ("no_such_module_xyz", None,
                "cannot be loaded (no_such_module_xyz): ModuleNotFoundError: No module named 'no_such_module_xyz'"),
    "unknown hook": ("broken_mod", "import pluggy\nhookimpl = pluggy.HookimplMarker('serq')\n\n\n@hookimpl\n"
                                   "def serq_no_such_hook():\n    pass\n",
                     "is not valid: it implements the hook serq_no_such_hook, which no installed part of serQ "
                     "{version} specifies; a hook of a part that may not be installed, or of a later serQ, is marked "
                     "@hookimpl(optionalhook=True), and is then not called where no part specifies it at "
                     "{site}{sep}broken_mod.py:5"),
}


def _site(tmp_path, module: str, body: str | None):
    site = tmp_path / "site"
    d = site / "brokenplug-0.1.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplug\nVersion: 0.1\n")
    (d / "entry_points.txt").write_text(f"[serq]\nbroken = {module}\n")
    if body is not None:
        (site / f"{module}.py").write_text(body)
    return site


@pytest.mark.parametrize("case", list(BODIES))
@pytest.mark.parametrize("args", [("run", "x.sq"), ("--version",), ("--help",)], ids=" ".join)
def test_a_plugin_that_cannot_be_loaded_is_one_message(tmp_path, case, args):
    module, body, what = BODIES[case]
    site = _site(tmp_path, module, body)
    r = run_serq(*args, env={"PYTHONPATH": str(site)}, cwd=tmp_path)
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 2, r.stderr
    assert lines[0].startswith("error: plugin 'broken' (from brokenplug 0.1) "
                               + what.format(site=site, sep=os.sep, version=serq.__version__)), lines[0]
    assert lines[1] == "(run without it: SERQ_DISABLED_PLUGINS=broken, or uninstall brokenplug)"
    assert r.stdout == ""


def test_disabling_the_plugin_runs_without_it(tmp_path):
    site = _site(tmp_path, "broken_mod", "raise RuntimeError('boom at import')\n")
    r = run_serq("--version", env={"PYTHONPATH": str(site), "SERQ_DISABLED_PLUGINS": "broken"})
    assert r.returncode == 0, r
    assert r.stdout.startswith("serq, version")
