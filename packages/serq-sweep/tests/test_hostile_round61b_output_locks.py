"""One lock an output, taken by every command that writes it (serq.files.output_held, ``OUT.journal``): ``serq
run``'s ``-o`` and ``--records`` took none (a dump's and a set of record tables' folder lock only), so a run and a
sweep writing one file at once (``serq run --records r.csv`` beside ``serq sweep … --records r.csv``) each wrote
it whole at their end, the last over the first, neither told. A run now holds each file's lock while it writes
it, and looks before its run: held by a sweep or a comparison, it is refused before anything runs, in the words
every writer's refusal has; taken after its run began, the run waits for it and then refuses its report and
records, none written. And a journal that is a folder or a hard link was passed over by ``serq compare -o`` and
``--find -o`` (table_held swallowed open_own_append's refusal): they ran unlocked and said nothing; it is now
refused, as a sweep refuses it. The other command's lock is held here by the test, as its process holds it."""

from __future__ import annotations

import contextlib
import fcntl
import os

import pytest
from serq_sweep import api

pytestmark = pytest.mark.skipif(not hasattr(fcntl, "flock"), reason="a file system with advisory locks")

PROGRAM = ("let a = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (a); record req { wait = now - t0; } }\nrun { horizon 5; seed 1; }\n")
RUN = ["run", "p.sq", "--no-progress", "-o", "rep.csv", "--records", "r.csv"]
COMPARE = ["compare", "p.sq", "--set", "a=1,2", "--seeds", "1..2", "--workers", "0", "--no-progress", "-o", "t.csv"]
FIND = ["sweep", "p.sq", "--find", "mean_live <= 2", "--over", "a", "0.5:4", "--workers", "0", "--no-progress",
        "-o", "t.csv"]
SWEEP = ["sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", "-o", "t.csv"]
TAKEN = ("another serq command (a run, a sweep or a comparison) is writing this file now (its journal {j} is "
         "locked); let it end, or give another {opt}")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    import serq_sim.cli

    monkeypatch.setattr(serq_sim.cli, "OUTPUT_LOOK", 0.05)  # (the other command holds it for the whole test)
    monkeypatch.setattr(serq_sim.cli, "OUTPUT_WAIT", 0.05)
    return tmp_path


def _names(folder):
    return sorted(p.name for p in folder.iterdir())


def test_a_run_is_refused_a_file_a_sweep_writes_before_it_runs(folder, serq_in_process):
    """A sweep under way with --records r.csv (its Records opened, as run_plan opens them): serq run --records
    r.csv is refused before its run, nothing written, the sweep's journal as it was."""
    import serq_sweep

    plan = serq_sweep.core.plan("p.sq", seeds="1..2")
    records = api.Records("r.csv")
    records.check(plan, "t.csv", [])
    records.open(fresh=False)
    try:
        r = serq_in_process(*RUN)
        assert _names(folder) == ["p.sq", "r.csv.journal"]
    finally:
        records.close(failed=True)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("error: --records r.csv: " + TAKEN.format(j="r.csv.journal", opt="--records")
                        + " (nothing was run)\n")
    assert _names(folder) == ["p.sq"]
    # and -o: the table of a comparison under way
    with api.table_held("rep.csv"):
        r = serq_in_process(*RUN)
    assert r.stderr == "error: -o rep.csv: " + TAKEN.format(j="rep.csv.journal", opt="-o") + " (nothing was run)\n"
    assert _names(folder) == ["p.sq"]
    r = serq_in_process(*RUN)  # free: written, no lock left behind
    assert r.returncode == 0, r.stderr
    assert _names(folder) == ["p.sq", "r.csv", "rep.csv"]


def test_a_file_taken_during_the_run_is_waited_for_then_refused_whole(folder, serq_in_process, monkeypatch):
    """A sweep that began writing r.csv while the run ran: the run waits for it (OUTPUT_WAIT), then writes
    neither its report nor its records (a report without the records it speaks of is not written alone)."""
    import serq_sim.api

    real = serq_sim.api.run
    later = contextlib.ExitStack()

    def run_then_taken(*args, **kwargs):
        report = real(*args, **kwargs)
        later.enter_context(api.table_held("r.csv", beside=True))  # (the sweep that began meanwhile)
        return report

    monkeypatch.setattr(serq_sim.api, "run", run_then_taken)  # (serq run imports it as it runs)
    with later:
        r = serq_in_process(*RUN)
    assert r.returncode == 1
    assert r.stderr == ("error: --records r.csv: " + TAKEN.format(j="r.csv.journal", opt="--records")
                        + " (the run's report and records were not written)\n")
    assert _names(folder) == ["p.sq"]


def test_a_run_under_way_holds_its_files_from_every_other_writer(folder, serq_in_process):
    """The other way round: a run writing r.csv and rep.csv (their locks held as the run holds them) refuses a
    sweep, a comparison and a search into either, before they run anything."""
    from serq.files import output_held

    for args, out in ((SWEEP, "rep.csv"), (COMPARE, "r.csv"), (FIND, "rep.csv")):
        with output_held(out, "another -o"):
            r = serq_in_process(*(args[:-1] + [out]))
            assert _names(folder) == ["p.sq", f"{out}.journal"]
        assert (r.returncode, r.stderr) == (1, f"error: {out}: " + TAKEN.format(j=f"{out}.journal", opt="--out")
                                            + "\n"), args
        assert _names(folder) == ["p.sq"]


def test_a_run_beside_an_interrupted_sweeps_journal_is_refused(folder, serq_in_process):
    """A journal of runs at r.csv.journal that no command holds: a sweep's records there that did not end, which
    that sweep resumes; serq run --records r.csv would have written r.csv beside it, as a comparison would."""
    entry = '{"key": "0123456789abcdef01234567", "status": "ok"}\n'
    (folder / "r.csv.journal").write_text(entry)
    r = serq_in_process(*RUN)
    assert (r.returncode, r.stderr) == (1, "error: --records r.csv: its journal r.csv.journal holds the runs of a "
                                           "sweep that did not end there (it was killed); run that sweep again to "
                                           "resume it, or remove the journal, or give another --records (nothing "
                                           "was run)\n")
    assert (folder / "r.csv.journal").read_text() == entry and _names(folder) == ["p.sq", "r.csv.journal"]


@pytest.mark.parametrize("args", [COMPARE, FIND, RUN[:-2]], ids=["compare", "find", "run"])
@pytest.mark.parametrize("kind", ["folder", "hard link"])
def test_a_journal_that_is_no_file_of_its_own_is_refused(folder, serq_in_process, args, kind):
    """OUT.journal a folder or a hard link (a user's file linked there): refused before anything runs, as a
    sweep refuses it; the command ran unlocked and said nothing."""
    out = args[-1]
    journal = folder / f"{out}.journal"
    if kind == "folder":
        journal.mkdir()
        (journal / "mine").write_text("kept\n")
        said = "is a folder; serq names this file itself and writes it only as a new or regular file"
    else:
        (folder / "notes.txt").write_text("my notes\n")
        os.link(folder / "notes.txt", journal)
        said = "is a hard link, one file with 2 names; serq names this file itself and writes it in place only"
    r = serq_in_process(*args)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith(f"error: {out}.journal: {said}") and r.stderr.count("\n") == 1, r.stderr
    assert not (folder / out).exists()
    if kind == "folder":
        assert (journal / "mine").read_text() == "kept\n"
    else:
        assert (folder / "notes.txt").read_text() == "my notes\n" and journal.read_text() == "my notes\n"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="the waiter seen waiting through /proc")
def test_a_lock_waited_for_is_held_on_the_file_at_its_name(folder):
    """A run waiting for a file's lock while the sweep holding it ends: the sweep removes its journal, then its
    lock goes. The waiter took the lock of the removed file, which no longer named the output: a sweep started
    then made a new journal there and held it too, both writing the file. It now takes the lock of the file
    at the name (serq.files.journal_locked): a third command is refused while it holds it."""
    import threading

    from serq.files import output_held

    sweep = open("t.csv.journal", "a")  # (the sweep's journal, locked as it locks it)
    fcntl.flock(sweep.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    got, done = threading.Event(), threading.Event()
    seen = []

    def waiter():
        with output_held("t.csv", "another -o", seconds=20) as journal:
            seen.append(os.fstat(journal.fileno()).st_ino)
            got.set()
            done.wait(20)

    def opened() -> int:  # (how many descriptors of this process name the journal)
        target = str(folder / "t.csv.journal")
        n = 0
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                n += os.readlink(f"/proc/self/fd/{fd}") == target
        return n

    t = threading.Thread(target=waiter)
    t.start()
    try:
        for _ in range(2000):  # until the waiter has the journal open and waits for its lock
            if opened() >= 2:
                break
            threading.Event().wait(0.005)
        threading.Event().wait(0.05)
        os.unlink("t.csv.journal")  # (the sweep, ended complete, removes its journal while it holds it)
        sweep.close()
        assert got.wait(20)
        assert os.stat("t.csv.journal").st_ino == seen[0]  # the file locked is the one at the name
        with open("t.csv.journal", "a") as third, pytest.raises(BlockingIOError):
            fcntl.flock(third.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        done.set()
        t.join(20)
    assert _names(folder) == ["p.sq"]  # (removed again, empty, by the waiter)


def test_an_empty_lock_a_killed_run_left_goes_with_the_next_writer(folder, serq_in_process):
    """A run killed as it wrote its files (kill -9) leaves its empty locks; the next run writes and removes them
    (a lock of its own files: without a word), and a comparison into such a file says what it found."""
    (folder / "rep.csv.journal").write_text("")
    (folder / "r.csv.journal").write_text("")
    r = serq_in_process(*RUN)
    assert (r.returncode, r.stderr) == (0, "")
    assert _names(folder) == ["p.sq", "r.csv", "rep.csv"]
    (folder / "t.csv.journal").write_text("")
    r = serq_in_process(*COMPARE)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("serq: t.csv.journal: an empty journal no command holds (a command killed there left "
                               "it: a sweep or a comparison before its first run ended, a run as it wrote this file); "
                               "it holds no run, and is removed\n")
    assert _names(folder) == ["p.sq", "r.csv", "rep.csv", "t.csv"]
