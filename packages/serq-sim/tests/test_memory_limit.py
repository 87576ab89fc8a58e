"""A run under a memory limit (``ulimit -v``) that its program outgrows stops with its partial report
(reason ``memory``, exit status 3) while it can still make it: never a traceback, a ``SystemError`` from
the interpreter or a crawl near the limit (serq_sim/memguard.py). The programs here admit sessions far
faster than they leave (a rate of 1e9 a second against one server of 1 s: the sessions pile up; a rate
of 1e308, whose gaps are subnormal numbers, now meets the no-progress guard first, test_zeno_clock.py),
each in both tiers, at a stage queue and at a pool's queue."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sim import memguard

resource = pytest.importorskip("resource")

SERQ = str(Path(sys.executable).parent / "serq")
LIMIT = 700 * 2**20  # bytes of address space: room for the interpreter, its libraries and the run

AT_A_STAGE = """
stage s : fifo(1);
workload { arrive poisson(1e9); }
session { run s (1); }
run { horizon 10; warmup 0; seed 1; }
"""

AT_A_POOL = """
pool p { cap 1; }
stage d : delay;
workload { arrive poisson(1e9); }
session { hold p (1) { run d (1); } observe w = now; }
run { horizon 10; warmup 0; seed 1; }
"""


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="the guard reads /proc (Linux)")
@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("src", [AT_A_STAGE, AT_A_POOL], ids=["stage", "pool"])
@pytest.mark.timeout(150)
def test_a_run_outgrowing_its_memory_limit_stops_with_its_report(tmp_path, src, tier):
    prog = tmp_path / "p.sq"
    prog.write_text(src)
    out = tmp_path / "out.json"
    env = {**os.environ, "SERQ_SIM_TIER": tier}
    r = subprocess.run([SERQ, "run", str(prog), "--no-progress", "--json", "-o", str(out)], env=env,
                       capture_output=True, text=True, timeout=120, preexec_fn=_limit)
    assert "Traceback" not in r.stderr and "Error" not in r.stderr, r.stderr
    assert r.returncode == 3, (r.returncode, r.stderr)
    import json

    res = json.loads(out.read_text())
    assert res["partial"] == "memory"
    assert res["interrupted"] is True
    note = [n for n in res["notes"] if "memory limit" in n]
    assert len(note) == 1 and "address space (ulimit -v)" in note[0], res["notes"]
    # it stopped with half the room it had: well below the limit, and having done a real share of work
    assert 10_000 < res["arrivals"] and res["end"] < 10


def test_the_guard_stops_past_its_bound_only(monkeypatch, tmp_path):
    # a statm of our own: size 1000 pages, data 400 pages; page 4096
    statm = tmp_path / "statm"
    monkeypatch.setattr(memguard, "_STATM", str(statm))
    guard = memguard.MemoryGuard([(0, 1000 * 4096, 2000 * 4096, "address space (ulimit -v)"),
                                  (5, 500 * 4096, 2000 * 4096, "data segment (ulimit -d)")], 4096)
    statm.write_text("1000 10 10 10 0 400 0\n")
    assert guard.over() is None  # at the bounds, not past them
    statm.write_text("1001 10 10 10 0 400 0\n")
    assert guard.over().startswith("stopped near the memory limit: 4 MiB of the 8 MiB address space")
    statm.write_text("900 10 10 10 0 501 0\n")
    assert "data segment (ulimit -d)" in guard.over()
    statm.unlink()  # unreadable: no stop
    assert guard.over() is None


def test_the_bound_is_half_the_room_left_when_the_run_begins(monkeypatch, tmp_path):
    statm = tmp_path / "statm"
    statm.write_text("1000 10 10 10 0 400 0\n")
    monkeypatch.setattr(memguard, "_STATM", str(statm))
    monkeypatch.setattr(memguard.os, "sysconf", lambda name: 4096)
    limits = {resource.RLIMIT_AS: (3000 * 4096, resource.RLIM_INFINITY),
              resource.RLIMIT_DATA: (resource.RLIM_INFINITY, resource.RLIM_INFINITY)}
    monkeypatch.setattr(resource, "getrlimit", lambda rl: limits.get(rl, (resource.RLIM_INFINITY,) * 2))
    monkeypatch.setattr(memguard, "available", lambda: None)
    guard = memguard.memory_guard()
    assert guard.limits == [(0, 2000 * 4096, 3000 * 4096, "address space (ulimit -v)")]
    # the memory available bounds the resident memory (statm's second field, 10 pages) as well, ulimit or not
    monkeypatch.setattr(memguard, "available", lambda: (800 * 4096, memguard.MACHINE))
    assert memguard.memory_guard().limits[1:] == [(1, 410 * 4096, 810 * 4096, memguard.MACHINE)]
    limits[resource.RLIMIT_AS] = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    assert memguard.memory_guard().limits == [(1, 410 * 4096, 810 * 4096, memguard.MACHINE)]
    monkeypatch.setattr(memguard, "available", lambda: None)
    assert memguard.memory_guard() is None  # no limit and nothing known of the machine: no guard


def test_the_memory_available_is_the_machines_or_less_its_control_groups(monkeypatch, tmp_path):
    meminfo, limit, used = tmp_path / "meminfo", tmp_path / "memory.max", tmp_path / "memory.current"
    meminfo.write_text("MemTotal:       2000 kB\nMemFree:         100 kB\nMemAvailable:   1000 kB\n")
    monkeypatch.setattr(memguard, "_MEMINFO", str(meminfo))
    monkeypatch.setattr(memguard, "_CGROUPS", ((str(limit), str(used)),))
    assert memguard.available() == (1000 * 1024, memguard.MACHINE)  # no control group file
    limit.write_text("max\n")
    used.write_text("5000\n")
    assert memguard.available() == (1000 * 1024, memguard.MACHINE)  # a group without a limit
    limit.write_text("105000\n")
    assert memguard.available() == (100_000, memguard.CGROUP)  # its room is less than the machine's
    limit.write_text(f"{10**12}\n")
    assert memguard.available() == (1000 * 1024, memguard.MACHINE)
    meminfo.unlink()
    assert memguard.available() == (10**12 - 5000, memguard.CGROUP)


def _machine(monkeypatch, tmp_path) -> None:
    """No ulimit, 10 pages of 4 096 bytes resident, 800 pages available on the machine."""
    statm = tmp_path / "statm"
    statm.write_text("1000 10 10 10 0 400 0\n")
    monkeypatch.setattr(memguard, "_STATM", str(statm))
    monkeypatch.setattr(memguard.os, "sysconf", lambda name: 4096)
    monkeypatch.setattr(resource, "getrlimit", lambda rl: (resource.RLIM_INFINITY,) * 2)
    monkeypatch.setattr(memguard, "available", lambda: (800 * 4096, memguard.MACHINE))


def test_the_machines_share_is_serq_memory_share(monkeypatch, tmp_path):
    # SERQ_MEMORY_SHARE sets the share of the memory available at the run's start that its resident memory may
    # grow by (10 pages resident, 800 available): 0.5 by default, 0.8 and 1 when given, none with 'off'
    _machine(monkeypatch, tmp_path)
    for value, share in (("", 0.5), (" ", 0.5), ("0.8", 0.8), ("1", 1.0), ("1e-3", 0.001)):
        monkeypatch.setenv("SERQ_MEMORY_SHARE", value)
        bound = 10 * 4096 + int(800 * 4096 * share)
        assert memguard.memory_guard().limits == [(1, bound, 810 * 4096, memguard.MACHINE)], value
    monkeypatch.setenv("SERQ_MEMORY_SHARE", "OFF")
    assert memguard.memory_guard() is None  # no ulimit either: no guard
    from serq.errors import UserError

    for bad in ("0", "-0.5", "1.5", "nan", "inf", "half", "0,5"):
        monkeypatch.setenv("SERQ_MEMORY_SHARE", bad)
        with pytest.raises(UserError, match=r"SERQ_MEMORY_SHARE is '.*': it is the share of the memory available"):
            memguard.memory_guard()


def test_a_bad_serq_memory_share_is_one_line_at_the_cli(tmp_path):
    program = tmp_path / "p.sq"
    program.write_text("stage s : fifo(1);\nworkload { arrive poisson(1); }\nsession { run s (0.5); }\n"
                       "run { horizon 10; }\n")
    env = {**os.environ, "SERQ_MEMORY_SHARE": "2"}
    r = subprocess.run([SERQ, "run", str(program), "--no-progress"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.startswith("error: the environment variable SERQ_MEMORY_SHARE is '2': ")
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_runs_in_parallel_divide_the_machines_share(monkeypatch, tmp_path):
    # a sweep's N local workers each read the same memory available when their runs begin: each may grow by the
    # share divided by N (SERQ_MEMORY_WORKERS, which the sweep starts them with), so that together they grow by
    # the share at most (each by half of it ran the machine out: the kernel's OOM killer)
    _machine(monkeypatch, tmp_path)
    for share_env, workers, share in (("", "", 0.5), ("", "1", 0.5), ("", "4", 0.125), ("0.8", "2", 0.4),
                                      ("1", " 8 ", 0.125)):
        monkeypatch.setenv("SERQ_MEMORY_SHARE", share_env)
        monkeypatch.setenv(memguard.WORKERS_VAR, workers)
        bound = 10 * 4096 + int(800 * 4096 * share)
        assert memguard.memory_guard().limits == [(1, bound, 810 * 4096, memguard.MACHINE)], (share_env, workers)
    monkeypatch.setenv("SERQ_MEMORY_SHARE", "off")
    assert memguard.memory_guard() is None  # 'off' stays off in a worker
    monkeypatch.setenv("SERQ_MEMORY_SHARE", "")
    from serq.errors import UserError

    for bad in ("0", "-1", "1.5", "two", "4097", "٣"):
        monkeypatch.setenv(memguard.WORKERS_VAR, bad)
        with pytest.raises(UserError, match=r"SERQ_MEMORY_WORKERS is '.*': it is how many runs run at once"):
            memguard.memory_guard()
