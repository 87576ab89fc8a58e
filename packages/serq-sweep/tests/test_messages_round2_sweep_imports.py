"""serq_sweep.core, serq_sweep.search and serq_sweep.api import click only where they print (serq_sweep.core.say:
a resumed sweep's warnings of the columns or runs it leaves out, a search's warnings): a program that calls the
Python API (serq_sweep.sweep, find, compare, the tables, the figures) and is told nothing does not load click's
modules, some 15 to 40 ms of start-up on its first import (python -X importtime)."""

from __future__ import annotations

import subprocess
import sys


def _loaded(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", code + "; import sys; print('click' in sys.modules)"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_the_core_imports_no_click():
    assert _loaded("import serq_sweep.core, serq_sweep.figures") == "False"
    assert _loaded("import serq_sweep.search") == "False"
    assert _loaded("import serq_sweep; serq_sweep.sweep, serq_sweep.find, serq_sweep.compare") == "False"
    assert _loaded("import serq_sweep.core, click") == "True"  # (the check sees click when it is there)
