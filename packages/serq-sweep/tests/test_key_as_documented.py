"""docs/sweep.md says what a run's `key` is as the table holds it: the first 24 hex digits of a SHA-256 (it
said "the SHA-256", 64 digits, where every table has 24)."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MG1 = str(ROOT / "examples/single-turn/mg1.sq")
SERQ = str(Path(sys.executable).parent / "serq")


@pytest.mark.timeout(120)
def test_the_key_is_as_long_as_the_doc_says():
    doc = " ".join((ROOT / "docs" / "sweep.md").read_text().split())
    m = re.search(r"`key` is the first (\d+) hex digits \((\d+) bits\) of a SHA-256", doc)
    assert m, "docs/sweep.md says how long a run's key is"
    digits, bits = int(m.group(1)), int(m.group(2))
    assert bits == 4 * digits
    p = subprocess.run([SERQ, "sweep", MG1, "--set", "lambda=0.5,0.6", "--arrivals", "20", "--horizon", "inf",
                        "--warmup", "0", "--workers", "0", "--no-progress"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    keys = [row["key"] for row in csv.DictReader(io.StringIO(p.stdout))]
    assert len(keys) == 2 and all(re.fullmatch(rf"[0-9a-f]{{{digits}}}", k) for k in keys), keys
