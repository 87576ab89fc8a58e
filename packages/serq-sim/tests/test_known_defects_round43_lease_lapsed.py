"""A ``transfer … from P`` after the session's lease of P ended by its time (``lease P (t)``, t shorter than the
wait for the read) reads KV the lease no longer kept: only cached from the lease's end on, evictable. The run
goes on as written (language.txt is silent on such a read: the transfer is its run, load and release, and a
release of what the session neither holds nor leases releases nothing), and the report now warns with the
count of such transfers per pool (code ``lease-lapsed``, serq_sim.notes.lapsed_reads). Before, the run said
nothing and its first tokens came out as though the KV had been there. On both tiers (a program that leases
runs on the general engine either way)."""

from __future__ import annotations

import serq_frontend
from tiers import same_json

PROGRAM = """\
pool kvP[2] { cap 100; evict lru; }
pool kvD { cap 100; }
stage pre : fifo;
stage link : delay;
stage dec : fifo;

workload {
  arrive poisson(1);
}

session {
  set t0 = now;
  hold kvP[0] (10) {
    run pre (0.1);
  } cache (10) lease kvP[0] (LEASE);
  RENEW
  hold kvD (10) {
    transfer on link (1) from kvP[0] to kvD (10);
    run dec (0.1);
  }
  observe took = now - t0;
}
"""

# the lease lapsed, then a new hold of kvP[0] leases it again, for ever, before the read
RENEW = """run link (2);
  hold kvP[0] (10) {
    run pre (0.1);
  } cache (10) lease kvP[0] (inf);"""


def _report(monkeypatch, lease: str, renew: str = "", src: str = PROGRAM) -> dict:
    prog = serq_frontend.compile(source=src.replace("LEASE", lease).replace("RENEW", renew), sets={}, defs={})
    return same_json(prog, monkeypatch, arrivals=5, warmup=0, seed=3)


def _lapsed(report: dict) -> list[str]:
    return [n for n, c in zip(report["notes"], report["codes"]) if c == "lease-lapsed"]


def test_each_transfer_after_its_lease_is_counted(monkeypatch):
    # the lease of 0.5 s ends during the link's 1 s: all 5 transfers release a kvP[0] they no longer lease
    r = _report(monkeypatch, "0.5")
    assert _lapsed(r) == [
        "warning: 5 transfers read KV after the lease that kept it had ended by its time: from kvP[0] (5); that KV "
        "was only cached from the lease's end on (evictable, or gone without a cache clause), and the transfer's "
        "link and load count as though all of it were there, so the latencies after them (a first token's) are "
        "optimistic; a lease as long as the wait for the read (inf, as a decoder's heartbeats renew it) keeps it"]
    # the run itself is as written: the same times as with a lease that outlasts the read (each session alone
    # in the system or not, 0.1 + 1 + 0.1 at least)
    held = _report(monkeypatch, "2")
    assert r["observes"]["took"] == held["observes"]["took"]
    assert r["observes"]["took"]["count"] == 5


def test_a_lease_that_outlasts_the_read_warns_of_nothing(monkeypatch):
    for lease in ("2", "inf"):
        r = _report(monkeypatch, lease)
        assert _lapsed(r) == []
        assert "lease-lapsed" not in r["codes"]


def test_a_renewed_lease_is_no_lapse(monkeypatch):
    # the first lease (0.001 s) ends during the 2 s wait; the second hold leases kvP[0] again before the read
    assert _lapsed(_report(monkeypatch, "0.001", RENEW)) == []
    # without the second lease the same wait leaves the read after a lapse, once per session
    plain = RENEW.replace(" lease kvP[0] (inf)", "")
    assert len(_lapsed(_report(monkeypatch, "0.001", plain))) == 1


def test_one_transfer_says_one(monkeypatch):
    prog = serq_frontend.compile(source=PROGRAM.replace("LEASE", "0.5").replace("RENEW", ""), sets={}, defs={})
    r = same_json(prog, monkeypatch, arrivals=1, warmup=0, seed=3)
    assert _lapsed(r)[0].startswith("warning: 1 transfer read KV after the lease that kept it had ended by its time: "
                                    "from kvP[0] (1); ")


def test_a_transfer_within_one_family_is_counted_too(monkeypatch):
    # from kvP[0] to kvP[1]: the release the run checks against the load's member (a computed index)
    src = (PROGRAM.replace("hold kvD (10)", "choose j in 2 by (-j);\n  hold kvP[j] (10)")
           .replace("to kvD (10)", "to kvP[j] (10)"))
    r = _report(monkeypatch, "0.5", src=src)
    assert _lapsed(r) and _lapsed(r)[0].startswith("warning: 5 transfers read KV after the lease that kept it had "
                                                   "ended by its time: from kvP[0] (5); ")
