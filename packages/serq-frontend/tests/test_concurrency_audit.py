"""Compiles in several threads of one process, and ``serq`` processes sharing one compile cache (the
concurrency audit): each result is what the same call gives alone, and what a call changes in the process
is back as it was once every call has ended."""

from __future__ import annotations

import sys
import threading

import pytest

PROG = """let lam = 0.5;
def service() = ~exp(1);
stage svc : fifo;
workload { arrive poisson(lam); }
session {
  set t0 = now;
  run svc (service());
  observe response = now - t0;
}
run { horizon 100; }
"""


@pytest.mark.timeout(60)
def test_overlapping_compiles_put_the_recursion_limit_back_and_keep_it_raised_while_they_walk(monkeypatch):
    # a compile raises the recursion limit while its passes walk the program and put back the limit it
    # found: A begins, B begins (finding A's raised limit), A ends (putting back the low limit while B
    # still walks its program), B ends (putting back A's raised limit for good). Events make that order
    # every time: before the fix both assertions failed on every run.
    import serq_frontend
    import serq_ir

    alone = serq_ir.encode(serq_frontend.compile(source=PROG))
    desugar = serq_frontend._desugar
    a_in, b_in, a_done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, int] = {}

    def paced(module, ctx, layer_list):
        if threading.current_thread().name == "A":
            a_in.set()
            assert b_in.wait(10)
        else:
            b_in.set()
            assert a_done.wait(10)
            seen["B"] = sys.getrecursionlimit()  # what B's passes run under once A has ended
        return desugar(module, ctx, layer_list)

    got: dict[str, bytes | BaseException] = {}

    def work(name: str) -> None:
        try:
            if name == "B":
                assert a_in.wait(10)
            got[name] = serq_ir.encode(serq_frontend.compile(source=PROG))
        except BaseException as e:  # noqa: BLE001 - compared below
            got[name] = e
        finally:
            if name == "A":
                a_done.set()

    monkeypatch.setattr(serq_frontend, "_desugar", paced)
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # below what a compile raises it to (8 * MAX_NESTING)
    try:
        threads = [threading.Thread(target=work, args=(n,), name=n) for n in ("A", "B")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        after = sys.getrecursionlimit()
    finally:
        sys.setrecursionlimit(before)
    assert got == {"A": alone, "B": alone}
    assert seen["B"] >= 8 * serq_frontend.MAX_NESTING
    assert after == 1000


@pytest.mark.timeout(60)
def test_ctrl_c_as_a_cache_entry_is_written_leaves_no_file_behind(tmp_path, monkeypatch):
    # an entry is written to a temporary file renamed over it; Ctrl-C's KeyboardInterrupt raised as that
    # file had just been made (the signal handled when its creation returned) left it in the cache folder
    # for good, where the pruning (compile-*.bin only) never removes it. Before the fix it was left on
    # every run.
    import signal

    import serq.files
    import serq_frontend
    import serq_ir
    from serq_frontend import cache

    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    prog = tmp_path / "p.sq"
    prog.write_text(PROG)
    alone = serq_ir.encode(serq_frontend.compile(prog))
    make = serq.files._create_temp

    def interrupted(*args):
        made = make(*args)
        signal.raise_signal(signal.SIGINT)  # delivered as the call returns
        return made

    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(serq.files, "_create_temp", interrupted)
        with pytest.raises(KeyboardInterrupt):
            cache.load(prog)
    finally:
        signal.signal(signal.SIGINT, handler)
    monkeypatch.setattr(serq.files, "_create_temp", make)
    assert [p.name for p in (tmp_path / "cache").iterdir() if p.name.endswith(".tmp") or "compile-" in p.name] == []
    assert serq_ir.encode(cache.load(prog)) == alone  # compiled again and stored
    stored = sorted(p.name for p in (tmp_path / "cache").iterdir() if "compile-" in p.name)
    assert len(stored) == 1 and stored[0].startswith("compile-") and stored[0].endswith(".bin")
    assert serq_ir.encode(cache.load(prog)) == alone  # and read back


@pytest.mark.timeout(120)
def test_two_serq_runs_compiling_one_new_program_into_one_empty_cache(tmp_path):
    # two processes that miss at once both compile and both store the entry (and the grammar's tables):
    # each writes a file of its own renamed over the name, so what is there is always one whole entry, and
    # both runs, and a later one that hits, print what a run without any cache prints
    import os
    import subprocess
    from pathlib import Path

    serq = str(Path(sys.executable).parent / "serq")
    prog = tmp_path / "p.sq"
    prog.write_text(PROG)
    env = {k: v for k, v in os.environ.items() if k != "SERQ_COMPILE_CACHE"}
    cmd = [serq, "run", str(prog), "--seed", "3"]
    alone = subprocess.run(cmd, capture_output=True, timeout=60, env={**env, "SERQ_CACHE_DIR": ""})
    assert alone.returncode == 0 and alone.stderr == b"", alone.stderr.decode()
    folder = tmp_path / "cache"
    shared = {**env, "SERQ_CACHE_DIR": str(folder)}
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=shared) for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == [(alone.stdout, b"")] * 2
    names = sorted(p.name for p in folder.iterdir())
    assert [n for n in names if n.endswith(".tmp")] == []
    assert len([n for n in names if n.startswith("compile-") and n.endswith(".bin")]) == 1, names
    hit = subprocess.run(cmd, capture_output=True, timeout=60, env=shared)
    assert (hit.returncode, hit.stdout, hit.stderr) == (0, alone.stdout, b"")
    assert sorted(p.name for p in folder.iterdir()) == names


@pytest.mark.timeout(60)
def test_ctrl_c_as_a_compile_puts_its_tee_over_standard_error_gives_standard_error_back(tmp_path, monkeypatch):
    # a compile through the cache puts a tee over sys.stderr (what the compile writes is kept with the
    # entry) and takes it off in a `finally`; the `try` began after the tee was on, so Ctrl-C's
    # KeyboardInterrupt, handled as the swap's lock was let go, left the tee as the process's standard
    # error for good, keeping every later write. Before the fix it was left on every run.
    import signal

    from serq_frontend import cache

    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    prog = tmp_path / "p.sq"
    prog.write_text(PROG)
    real = cache._SWAP

    class InterruptedOnce:
        """The swap's lock; Ctrl-C is delivered as it is let go the first time."""

        fired = False

        def __enter__(self):
            return real.__enter__()

        def __exit__(self, *exc):
            real.__exit__(*exc)
            if not InterruptedOnce.fired:
                InterruptedOnce.fired = True
                signal.raise_signal(signal.SIGINT)

    before = sys.stderr
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(cache, "_SWAP", InterruptedOnce())
        with pytest.raises(KeyboardInterrupt):
            cache.load(prog)
        assert InterruptedOnce.fired
        left = sys.stderr
    finally:
        signal.signal(signal.SIGINT, handler)
        while isinstance(sys.stderr, cache._Tee):  # (put back for the tests after this one)
            sys.stderr = sys.stderr._stream
    assert left is before


class _InterruptedOnce:
    """A lock that Ctrl-C (SIGINT, Python's own handler) reaches as it is let go the first time."""

    def __init__(self, lock):
        self.lock, self.fired = lock, False

    def __enter__(self):
        return self.lock.__enter__()

    def __exit__(self, *exc):
        self.lock.__exit__(*exc)
        if not self.fired:
            self.fired = True
            import signal

            signal.raise_signal(signal.SIGINT)


@pytest.mark.timeout(60)
def test_ctrl_c_as_a_compile_raises_the_recursion_limit_leaves_it_as_it_was(monkeypatch):
    # the compiles under way are counted, and the last to end puts the limit back; the count was taken
    # before the `try` whose `finally` gives it back, so Ctrl-C handled as the count's lock was let go left
    # a compile counted for good, and the limit raised. Before the fix it was left raised on every run.
    import signal

    import serq_frontend

    before = sys.getrecursionlimit()
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    lock = _InterruptedOnce(serq_frontend._RECURSION.lock)
    sys.setrecursionlimit(1000)
    try:
        monkeypatch.setattr(serq_frontend._RECURSION, "lock", lock)
        with pytest.raises(KeyboardInterrupt), serq_frontend.deeper_recursion(8 * serq_frontend.MAX_NESTING):
            pass
        assert lock.fired
        after = sys.getrecursionlimit()
        with serq_frontend.deeper_recursion(8 * serq_frontend.MAX_NESTING):  # the next one puts back its own
            pass
        again = sys.getrecursionlimit()
    finally:
        signal.signal(signal.SIGINT, handler)
        sys.setrecursionlimit(before)
    assert (after, again) == (1000, 1000)
