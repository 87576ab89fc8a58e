"""The bridge reads a scenario file as UTF-8 whatever the locale's encoding (the determinism audit).

``python -m serq_vllm.real SCENARIO.json`` opened the file in the locale's encoding: under an ASCII locale
(``LC_ALL=C`` with Python's UTF-8 mode and locale coercion off) a scenario holding any non-ASCII character
ended in a ``UnicodeDecodeError`` traceback before the scenario was looked at.
"""

from __future__ import annotations

import os
import subprocess
import sys

ASCII = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def test_the_bridge_reads_a_scenario_as_utf8_under_an_ascii_locale(tmp_path):
    f = tmp_path / "s.json"
    f.write_bytes('{"name": "café …", "requests": []}'.encode())  # no request: refused, after it is read
    env = {k: v for k, v in os.environ.items() if k not in ("LC_CTYPE", "PYTHONIOENCODING")}
    r = subprocess.run([sys.executable, "-m", "serq_vllm.real", str(f)], capture_output=True, timeout=60,
                       env={**env, **ASCII})
    assert b"Traceback" not in r.stderr, r.stderr.decode()[-400:]
    assert r.returncode == 1
    assert r.stderr == b"error: not a scenario: expected an object with a non-empty 'requests' list\n"
