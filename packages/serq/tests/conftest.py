import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


@pytest.fixture
def serq_exe() -> str:
    return str(BIN / "serq")


@pytest.fixture
def repo() -> Path:
    return REPO
