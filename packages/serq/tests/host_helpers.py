"""Helpers for the host's tests: run the command as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[3]


def run_serq(*args: str, env: dict[str, str] | None = None, cwd: str | Path | None = None,
             module: bool = False) -> subprocess.CompletedProcess:
    """Run ``serq ARGS`` (or ``python -m serq ARGS``) in a child process."""
    full_env = {**os.environ, **(env or {})}
    cmd = [sys.executable, "-m", "serq", *args] if module else [str(BIN / "serq"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=full_env, cwd=cwd, timeout=120)
