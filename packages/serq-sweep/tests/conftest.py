"""Test helpers of serq-sweep live next to the tests (sweepstop.py)."""

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

HERE = str(Path(__file__).parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


@pytest.fixture
def serq_in_process(capsys):
    """``serq ARGS…`` in this process (serq.cli.main, as a shell runs it): its exit status and output, as
    ``subprocess.run(…, capture_output=True, text=True)`` gives them, without the start-up of a new
    interpreter (for a test of what a command reports, not of the process that runs it)."""
    from serq.cli import main

    def call(*args: str) -> SimpleNamespace:
        capsys.readouterr()  # (what the test printed before is not the command's)
        with pytest.raises(SystemExit) as info:
            main(list(args))
        out = capsys.readouterr()
        return SimpleNamespace(returncode=info.value.code or 0, stdout=out.out, stderr=out.err)

    return call
