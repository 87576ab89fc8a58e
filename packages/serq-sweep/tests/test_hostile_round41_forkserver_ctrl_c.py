"""Ctrl-C while a sweep's local pool starts (serq_sweep.engines._start_forkserver_deaf_to_ctrl_c, _signals_held).

Ctrl-C reaches the whole process group. multiprocessing's fork server ignores SIGINT once its loop begins, and a
worker once its initializer ran; but the signal came while the server imported the modules it preloads
(serq_sim.engine, serq_sim.fast: half a second), and the server printed its ``KeyboardInterrupt`` traceback
under the sweep's ``interrupted`` (3 of 15 ``serq sweep --workers 2`` stopped at a random moment of their first
2.5 s). The server is now started with SIGINT ignored, which it keeps through its preload: a module of its
preload here writes down the SIGINT handler it runs under.

multiprocessing starts a worker by handing the fork server its pipes over a socket; a Ctrl-C that raised
KeyboardInterrupt in the middle of that (a sweep of the Python API stopped as its workers started) left the
server a message cut short: it ended with an ``EOFError`` traceback, and the next sweep of the process, called at
once, was ``ConnectionRefusedError``. SIGINT and SIGTERM are now held while a worker is started, and come once it
is."""

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
        # the probe, then the module the sweep preloads last (the others take half a second)
        given(self, ["probe", names[-1]])

    def report_handler():
        import signal
        with open("child", "w") as f:
            f.write(repr(signal.getsignal(signal.SIGINT)))

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
        import multiprocessing as mp
        child = mp.get_context("forkserver").Process(target=report_handler)  # (someone else's process)
        child.start()
        child.join()
        with open("seen") as f, open("child") as g:
            print(f.read(), g.read(), signal.getsignal(signal.SIGINT) is signal.default_int_handler)

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
    # in the server's preload (it was Python's default_int_handler: a Ctrl-C there was a traceback); a process the
    # server starts afterwards for someone else takes Python's handler, as it did; the sweep's own keeps its own
    assert done.stdout.split() == ["<Handlers.SIG_IGN:", "1>", "<built-in", "function", "default_int_handler>", "True"], \
        done.stdout


# a sweep Ctrl-C stops as its second process (its first worker) is handed to the fork server, then another
SWEEP_TWICE = textwrap.dedent("""
    import os, signal, sys, time
    from multiprocessing import reduction
    import serq_sim

    KW = dict(sets={"lambda": [0.5, 0.6]}, seeds="1..2", horizon=300, warmup=0, progress=False, workers=2)

    def main():
        given, calls = reduction.sendfds, [0]

        def send(sock, fds):
            calls[0] += 1
            if calls[0] == 2:  # (the first: the process that checks a worker can start)
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)  # (the signal is handled here, unless held)
            return given(sock, fds)

        reduction.sendfds = send
        try:
            serq_sim.sweep(sys.argv[1], **KW)
            print("not stopped")
        except KeyboardInterrupt:
            print("stopped")
        reduction.sendfds = given
        frame = serq_sim.sweep(sys.argv[1], **KW)
        print(len(frame), sorted(set(frame["status"])))

    if __name__ == "__main__":
        main()
""")


def test_a_sweep_stopped_as_a_worker_starts_leaves_the_next_one_its_workers(tmp_path):
    from pathlib import Path

    program = Path(__file__).resolve().parents[3] / "examples" / "single-turn" / "mg1.sq"
    (tmp_path / "sweep.py").write_text(SWEEP_TWICE)
    done = subprocess.run([sys.executable, "sweep.py", str(program)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    # the second sweep ran its 4 runs (it was ConnectionRefusedError), and the server never saw a message cut short
    assert done.stdout.splitlines() == ["stopped", "4 ['ok']"], done.stdout
    assert "EOFError" not in done.stderr and "Traceback" not in done.stderr, done.stderr
