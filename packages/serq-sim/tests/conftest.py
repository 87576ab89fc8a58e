"""Test helpers of serq-sim live next to the tests (irb.py, vllm_program.py)."""

import sys
from pathlib import Path

HERE = str(Path(__file__).parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
