"""Known defects, round 31, in serq's command line.

7. Ctrl-C or SIGTERM in a plugin's hook under a command: click, turning the interrupt into its Abort, wrote a
   blank line on stderr first, so the message began with it ("\\nserq: interrupted in plugin 'stuck' …").
   The interrupt now passes click's main (serq.cli.Interrupt) and stderr holds serQ's lines alone, as it
   does for an interrupt while the plugins load."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _plugin(tmp_path, body: str):
    site = tmp_path / "site"
    info = site / "stuck-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stuck\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nstuck = stuck_plugin\n")
    (site / "stuck_plugin.py").write_text("import os\nimport signal\n\nfrom serq import hookimpl\n\n\n@hookimpl\n"
                                          "def serq_sim_register_stage_kinds(register):\n" + body)
    (tmp_path / "p.sq").write_text(PROGRAM)
    return site


@pytest.mark.timeout(120)
@pytest.mark.parametrize("body, status, last", [
    ("    raise KeyboardInterrupt  # (Ctrl-C while it spins)\n", 130, "interrupted"),
    ("    os.kill(os.getpid(), signal.SIGTERM)\n    signal.pause()\n", 143, "terminated"),
])
def test_an_interrupt_in_a_plugins_hook_is_said_with_no_blank_line(tmp_path, body, status, last):
    site = _plugin(tmp_path, body)
    r = subprocess.run([sys.executable, "-m", "serq", "run", "p.sq", "--no-progress"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": str(site)})
    assert r.returncode == status, r.stderr
    assert r.stderr == (f"serq: interrupted in plugin 'stuck' (from stuck 1.0): serq_sim_register_stage_kinds at "
                        f"{site / 'stuck_plugin.py'}:9\n{last}\n"), r.stderr
    assert r.stdout == ""
