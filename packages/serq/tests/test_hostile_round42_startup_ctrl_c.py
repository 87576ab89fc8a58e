"""Ctrl-C in the ``serq`` command's first milliseconds, before :func:`serq.signals.install` takes SIGINT
(importing the ``serq`` package, ``serq.cli``, what :func:`serq.cli.entry` imports before :func:`serq.cli.main`
installs its handlers), ends the command with the one line ``interrupted`` and status 130: it was a
KeyboardInterrupt's traceback out of the import under way (``from .errors import …`` of serq/__init__).

The signal is made to land at a chosen import, deterministically: the command is started from a copy of its
script named ``serq`` whose import hook sends SIGINT to its own process when the named module is about to
be imported (Python runs the handler at the next bytecode, inside the import)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
import serq

SCRIPT = """\
import os
import signal
import sys


class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, Interrupt())
from serq.cli import entry

sys.exit(entry())
"""


@pytest.mark.parametrize("module", [
    "serq.errors",   # serq/__init__ (the traceback the report showed)
    "serq.shared",   # entry(), before main()
    "serq.signals",  # main(), before it installs the handlers
    "click",         # after: the handlers of serq.signals (as before)
])
def test_ctrl_c_at_startup_is_one_line_and_130(tmp_path, module):
    script = tmp_path / "serq"
    script.write_text(SCRIPT.format(module=module))
    r = subprocess.run([sys.executable, str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr, r.stdout) == (130, "interrupted\n", "")


def test_a_program_importing_serq_keeps_pythons_ctrl_c():
    code = "import signal, serq; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, "True\n")


@pytest.mark.parametrize(("argv0", "orig", "own"), [
    ("/venv/bin/serq", ["python", "/venv/bin/serq", "run"], True),
    ("C:\\venv\\Scripts\\serq.exe", ["serq.exe"], True),
    ("-m", ["python", "-m", "serq", "run"], True),     # python -m serq, while Python locates it
    ("-m", ["python", "-mserq"], True),
    ("-m", ["python", "-m", "serq_sim"], False),
    ("-c", ["python", "-c", "import serq"], False),
    ("/home/u/serq.py", ["python", "/home/u/serq.py"], False),
])
def test_which_process_is_the_command(monkeypatch, argv0, orig, own):
    monkeypatch.setattr(sys, "argv", [argv0])
    monkeypatch.setattr(sys, "orig_argv", orig)
    assert serq._own_command() is own


def test_the_startup_handler_exits_130_quietly(tmp_path):
    # the handler itself, in a process of its own: the line and the status, nothing else
    code = ("import os, signal, serq; signal.signal(signal.SIGINT, serq._startup_interrupt); "
            "os.kill(os.getpid(), signal.SIGINT); print('not reached')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr, r.stdout) == (130, "interrupted\n", "")
    assert signal.SIGINT == 2


def test_the_command_gives_back_pythons_handler_not_the_startup_one(tmp_path):
    # once the command is done (serq.signals.uninstall) SIGINT is Python's again, as before: the start-up
    # handler's os._exit would drop what the command's standard output still buffers at exit
    script = tmp_path / "serq"
    script.write_text("import signal, sys\nfrom serq.cli import main\n"
                      "assert signal.getsignal(signal.SIGINT).__name__ == '_startup_interrupt'\n"
                      "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
                      "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout.splitlines()[-1]) == (0, "True"), (r.stdout, r.stderr)
