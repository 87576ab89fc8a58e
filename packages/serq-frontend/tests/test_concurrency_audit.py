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
