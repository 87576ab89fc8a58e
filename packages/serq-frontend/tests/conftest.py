"""Test setup: the helpers module next to this file is importable as ``sqhelpers``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sqhelpers  # noqa: E402


@pytest.fixture(scope="session")
def pm():
    return sqhelpers._pm()
