"""Test helpers of serq-sweep live next to the tests (sweepstop.py)."""

import sys
from pathlib import Path

HERE = str(Path(__file__).parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

