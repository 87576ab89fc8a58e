"""Ctrl-C reaching the worker processes the ``serq`` command spawned (multiprocessing's spawn: the workers of
``serq sweep --dask local`` while its LocalCluster starts, before their preload ignores SIGINT; a local pool's
workers where no fork server can start). multiprocessing gives a spawned process its parent's ``sys.argv``,
so importing ``serq`` there took it for the command and installed the command's start-up handler: each
worker wrote ``interrupted`` too, the terminal's one Ctrl-C told once a worker plus once (``timeout -s INT 2
serq sweep p.sq --workers 3 --dask local``: four lines). A spawned process ends without a word, status 130;
the command's own start-up is as before."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)

# as multiprocessing's spawn prepares a child of the serq command (its sys.argv set to the parent's), then
# the import of serq, and a Ctrl-C
CHILD = """
import os, signal, sys
sys.argv = [os.path.join(os.path.dirname(sys.executable), "serq"), "sweep", "p.sq"]
import serq
os.kill(os.getpid(), signal.SIGINT)
import time
time.sleep(5)
print("not stopped")
"""


@pytest.mark.parametrize(("extra", "said"), [(["--multiprocessing-fork"], ""), ([], "interrupted\n")])
def test_a_spawned_process_of_the_command_ends_quietly_on_ctrl_c(extra, said):
    got = subprocess.run([sys.executable, "-c", CHILD, *extra], capture_output=True, text=True, timeout=30)
    assert (got.returncode, got.stdout, got.stderr) == (130, "", said)


def test_a_spawned_process_of_another_program_keeps_pythons_ctrl_c():
    child = ("import os, signal, sys\nsys.argv = ['mine.py']\nimport serq\ntry:\n"
             "    os.kill(os.getpid(), signal.SIGINT)\n    import time\n    time.sleep(5)\n"
             "except KeyboardInterrupt:\n    print('python')\n")
    got = subprocess.run([sys.executable, "-c", child, "--multiprocessing-fork"], capture_output=True, text=True,
                         timeout=30)
    assert (got.returncode, got.stdout, got.stderr) == (0, "python\n", "")
