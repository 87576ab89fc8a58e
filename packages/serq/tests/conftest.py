import sys
from pathlib import Path

# Test helpers beside the tests (host_helpers.py) are imported by name.
sys.path.insert(0, str(Path(__file__).parent))
