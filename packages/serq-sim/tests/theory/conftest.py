import sys
from pathlib import Path

# The closed forms beside the tests (theory_forms.py) are imported by name.
sys.path.insert(0, str(Path(__file__).parent))
