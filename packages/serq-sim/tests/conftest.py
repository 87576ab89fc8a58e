"""Test helpers of serq-sim live next to the tests (irb.py, vllm_program.py); the fixture ``serq`` runs the
command in this process."""

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

HERE = str(Path(__file__).parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


@pytest.fixture
def serq(capsys, monkeypatch):
    """``serq ARGS…`` in this process (serq.cli.main, as a shell runs it, its exit status and output)."""
    from serq.cli import main

    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)

    def call(*args: str) -> SimpleNamespace:
        with pytest.raises(SystemExit) as info:
            main(list(args))
        out = capsys.readouterr()
        return SimpleNamespace(returncode=info.value.code or 0, stdout=out.out, stderr=out.err)

    return call
