"""A part that SERQ_DISABLE_PLUGIN_AUTOLOAD leaves unloaded is said to be installed, with how to load it.

The rule of serq.parts: a command that needs a part it does not have says whether the part is installed and
switched off, and how to enable it, not "install serq-…" of a part that is installed. Under
SERQ_DISABLE_PLUGIN_AUTOLOAD no installed part is loaded, and the commands said "install serq-frontend"
(``serq check p.sq``) and "no such command 'run'"; with SERQ_DISABLED_PLUGINS naming the part too, they
said "take 'sim' out of SERQ_DISABLED_PLUGINS to enable it", which enabled nothing. Each message's advice
is followed here, and the command then works: the truth of a message is that its way out is one.
"""

from __future__ import annotations

import pytest
from host_helpers import run_serq

pytestmark = pytest.mark.timeout(120)

PROGRAM = "stage s : delay;\nworkload { arrive batch(2); }\nsession { run s (1); }\nrun { horizon 10; }\n"
NONE = {"SERQ_DISABLED_PLUGINS": "", "SERQ_DISABLE_PLUGIN_AUTOLOAD": ""}  # (blank: as unset)


def test_a_part_autoload_leaves_unloaded_is_said_installed(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    off = {**NONE, "SERQ_DISABLE_PLUGIN_AUTOLOAD": "1"}
    r = run_serq("check", "p.sq", env=off, cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert "install serq-frontend" not in r.stderr, r.stderr
    assert r.stderr.startswith("error: p.sq: no installed part loads .sq files; serq-frontend is installed but "
                               "not loaded"), r.stderr
    assert "unset SERQ_DISABLE_PLUGIN_AUTOLOAD, or set it to 0, to enable it" in r.stderr, r.stderr
    r = run_serq("check", "p.sq", env={**off, "SERQ_DISABLE_PLUGIN_AUTOLOAD": "0"}, cwd=tmp_path)  # the advice
    assert r.returncode == 0, r.stderr
    r = run_serq("run", "p.sq", env=off, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error: the command 'run' is serq-sim's, which is installed but not loaded"), r.stderr


def test_a_part_disabled_and_unloaded_names_both_ways_out(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    both = {"SERQ_DISABLED_PLUGINS": "sim", "SERQ_DISABLE_PLUGIN_AUTOLOAD": "1"}
    r = run_serq("run", "p.sq", "--no-progress", env=both, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert ("take 'sim' out of SERQ_DISABLED_PLUGINS and unset SERQ_DISABLE_PLUGIN_AUTOLOAD to enable it"
            in r.stderr), r.stderr
    # taking 'sim' out of the list alone enables nothing: the message may not say that it does
    r = run_serq("run", "p.sq", "--no-progress", env={**both, "SERQ_DISABLED_PLUGINS": ""}, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    r = run_serq("run", "p.sq", "--no-progress", env=NONE, cwd=tmp_path)  # both ways out taken
    assert r.returncode == 0, r.stderr
