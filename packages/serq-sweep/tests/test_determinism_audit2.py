"""A sweep's table does not depend on what ran before it in the process, nor on which duplicate of a run
finished last (the determinism audit).

A run's key is the hash of the IR without spans and source, so two programs that differ only in their text
(a program and a copy one comment line longer; a program and its kernel twin) share their runs. The
workers kept decoded programs by that hash, so the program decoded first ran the other's runs too: under
``workers=0`` (the sweep's own process) a sweep of ``a.sq`` after one of ``b.sq`` reported ``a.sq``'s
run-time error at ``b.sq``'s file and line. And a key two points share was run once per point, the result
that came last kept for both.
"""

from __future__ import annotations

import pytest
import serq_sweep
from serq_sweep import engines

# a run-time error on line 4, column 91 (a negative work once the clock passes 30)
A = """let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; branch (now > 30) { run s (0 - t0); } }
run { horizon 100; seed 1; }
"""
B = "// the same program, one line lower\n" + A  # its error on line 5


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sq").write_text(A)
    (tmp_path / "b.sq").write_text(B)
    return "a.sq", "b.sq"


def test_a_sweep_in_the_same_process_after_another_names_its_own_file(files):
    a, b = files
    first = serq_sweep.sweep(b, seeds=[1], workers=0, progress=False)
    then = serq_sweep.sweep(a, seeds=[1], workers=0, progress=False)
    assert first["message"][0].startswith("b.sq:5:91: error: at t=")
    assert then["message"][0].startswith("a.sq:4:91: error: at t=")


def test_points_that_share_a_key_share_one_run(files, monkeypatch):
    calls = []
    real = engines.run_task

    def counted(*args, **kw):
        calls.append(args[2])  # the point's file (run_task(ir, ir_hash, name, seed, …))
        return real(*args, **kw)

    monkeypatch.setattr(engines, "run_task", counted)
    table = serq_sweep.sweep(["a.sq", "b.sq"], seeds=[1, 2], workers=0, progress=False)
    assert list(table["key"][:2]) == list(table["key"][2:])  # one IR: one key per seed
    assert calls == ["a.sq", "a.sq"]  # each key run once, by the first point that has it
    assert list(table["message"][:2]) == list(table["message"][2:])
    assert all(m.startswith("a.sq:4:91: error: at t=") for m in table["message"])


def test_a_resumed_parquet_table_is_the_table_of_a_sweep_run_whole(files, tmp_path):
    # point 0 fails (its run-time error at t > 30), point 1 does not: the failed run's row read back from
    # Parquet brought None for the text and flag columns (interrupted, partial), taken for figures it had,
    # which then came first among the resumed table's columns
    pytest.importorskip("pyarrow")
    (tmp_path / "t.sq").write_text(A.replace("branch (now > 30)", "branch (now > T)").replace(
        "let lam = 0.5;", "let lam = 0.5;\nlet T = 1000;"))
    kw = {"sets": {"T": [30, 1000]}, "workers": 0, "progress": False}
    serq_sweep.sweep("t.sq", seeds=[1], out="r.parquet", **kw)
    resumed = serq_sweep.sweep("t.sq", seeds=[1, 2], out="r.parquet", **kw)  # seed 1 of both points resumed
    whole = serq_sweep.sweep("t.sq", seeds=[1, 2], out="w.parquet", **kw)
    assert list(resumed["status"]) == ["error", "error", "ok", "ok"]
    cols = list(whole.columns)
    assert cols[:9] == ["point", "T", "seed", "status", "message", "warnings", "key", "horizon", "end"]  # the report's order
    assert list(resumed.columns) == cols
    assert (tmp_path / "r.parquet").read_bytes() == (tmp_path / "w.parquet").read_bytes()


def test_two_threads_of_a_worker_that_drop_the_oldest_program_at_once(monkeypatch):
    # a Dask worker of several threads runs tasks at once: two that decoded a new program when the worker
    # kept as many as it keeps both dropped the oldest, the same one, and the second pop was a KeyError
    import threading

    import serq_frontend
    import serq_ir
    from serq_sweep import worker

    irs = [serq_ir.encode(serq_frontend.compile(source=A.replace("0.5", str(0.5 + i / 8)))) for i in range(4)]
    meet = threading.Barrier(2, timeout=0.3)

    class Kept(dict):
        def pop(self, key, *default):
            try:  # the two evictions meet here, each with the key it found oldest (one waits out the timeout
                meet.wait()  # when they cannot both be here at once)
            except threading.BrokenBarrierError:
                pass
            return super().pop(key, *default)

    monkeypatch.setattr(worker, "_KEEP", 2)
    monkeypatch.setattr(worker, "_programs", Kept({("x.sq", irs[0]): None, ("x.sq", irs[1]): None}))
    errors = []

    def decode(i: int) -> None:
        try:
            worker._program(irs[i], "h", "x.sq")
        except Exception as e:  # noqa: BLE001 - the failure itself is what is looked for
            errors.append(e)

    threads = [threading.Thread(target=decode, args=(i,)) for i in (2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(k[1] for k in worker._programs) == sorted(irs[2:])
