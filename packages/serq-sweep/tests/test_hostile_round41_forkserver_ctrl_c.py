"""Ctrl-C at a terminal while a sweep's local pool starts (serq_sweep.engines._start_forkserver_deaf_to_ctrl_c).

Ctrl-C reaches the whole process group. multiprocessing's fork server ignores SIGINT once its loop begins, and a
worker once its initializer ran; but the signal came while the server imported the modules it preloads
(serq_sim.engine, serq_sim.fast: half a second), and the server printed its ``KeyboardInterrupt`` traceback
under the sweep's ``interrupted`` (3 of 15 ``serq sweep --workers 2`` stopped at a random moment of their first
2.5 s). The server is now started with SIGINT ignored, which it keeps through its preload: a module of its
preload here writes down the SIGINT handler it runs under."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# a pool started as a sweep starts it, with the probe for its preload
SCRIPT = textwrap.dedent("""
    import os, sys, time
    import multiprocessing.context as context

    given = context.BaseContext.set_forkserver_preload

    def with_probe(self, names):
        given(self, ["probe"])  # (the probe alone: the preload of the sweep is half a second)

    context.BaseContext.set_forkserver_preload = with_probe

    def main():
        import signal
        from serq_sweep.engines import LocalPool

        pool = LocalPool(1)
        pool._start(1)
        for _ in range(600):
            if os.path.exists("seen"):
                break
            time.sleep(0.05)
        pool.__exit__(None, None, None)
        with open("seen") as f:
            print(f.read(), signal.getsignal(signal.SIGINT) is signal.default_int_handler)

    if __name__ == "__main__":
        main()
""")

PROBE = """import signal
with open("seen.part", "w") as f:
    f.write(repr(signal.getsignal(signal.SIGINT)))
import os
os.replace("seen.part", "seen")
"""


def test_the_fork_server_preloads_ignoring_sigint(tmp_path):
    (tmp_path / "pool.py").write_text(SCRIPT)
    (tmp_path / "probe.py").write_text(PROBE)
    done = subprocess.run([sys.executable, "pool.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # in the server's preload (it was Python's default_int_handler: a Ctrl-C there was a traceback); the sweep's
    # own process keeps its handler
    assert done.stdout.split() == ["<Handlers.SIG_IGN:", "1>", "True"], done.stdout
