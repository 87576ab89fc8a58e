"""`serq vllm scenario FILE` of a FILE that is neither a file nor a shipped scenario printed FILE as given:
a line break in it split the message's one line (`error: no`, then `such: no such scenario file …`), and a
name longer than 240 characters was said whole. It is printed as every message prints a file's name
(serq.errors.shown_path: `\\n`, and a name longer than 240 characters cut to its first 120 and last 119
characters around `…`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
LONG = "no/" + "s" * 250  # (cut in a message; a name the system takes, in a folder that does not exist)


@pytest.mark.parametrize("name, shown", [
    ("no\nsuch", "no\\nsuch"),
    (LONG, LONG[:120] + "…" + LONG[-119:]),
])
def test_a_missing_scenario_is_named_as_every_message_names_a_file(tmp_path, name, shown):
    r = subprocess.run([SERQ, "vllm", "scenario", name], cwd=tmp_path, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith(f"error: {shown}: no such scenario file or shipped scenario (see `serq vllm "
                               "scenarios`)")
    assert r.stderr.count("\n") == 1 and len(r.stderr) < 400
