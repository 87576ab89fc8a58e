"""``serq run -o FILE`` and ``--dump DIR`` never write over a file the run read: the program, a library it
uses, the trace it names, the ``--trace`` file (by any path); they write through to a device."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

LIB = "def twice(x) = 2 * x;\n"
PROG = ('use "lib.sq";\nstage s : fifo;\nworkload {{ {arrive} }}\nsession {{ set t0 = now; run s (twice(1)); '
        'observe response = now - t0; }}\nrun {{ horizon 20; }}\n')
TRACE = "session,turn,new,out,think,forced\n0,0,1,1,0,0\n1,0,2,1,0,0\n"


def serq(*args: str, cwd, here=None) -> subprocess.CompletedProcess:
    """``serq run --no-progress ARGS`` in ``cwd``, as a child process; given ``here`` (serq_in_process),
    serq.cli.main in the test's process, in that folder (a test of what is said and of the files written
    or left as they were, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here("run", "--no-progress", *args)
    return subprocess.run([sys.executable, "-m", "serq", "run", "--no-progress", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "lib.sq").write_text(LIB)
    (tmp_path / "p.sq").write_text(PROG.format(arrive="arrive batch(2);"))
    (tmp_path / "t.sq").write_text(PROG.format(arrive='arrive batch(2); trace "response.csv";'))
    (tmp_path / "response.csv").write_text(TRACE)
    (tmp_path / "other.csv").write_text(TRACE)
    return tmp_path


def snapshot(folder):
    return {p: (folder / p).read_bytes() for p in sorted(os.listdir(folder)) if (folder / p).is_file()}


@pytest.mark.parametrize("args, victim", [
    (["p.sq", "-o", "p.sq"], "p.sq"),                                  # the program
    (["p.sq", "-o", "lib.sq"], "lib.sq"),                              # a library it uses
    (["t.sq", "-o", "response.csv"], "response.csv"),                  # the trace it names
    (["p.sq", "--trace", "other.csv", "-o", "other.csv"], "other.csv"),  # the --trace file
    (["t.sq", "--dump", "."], "response.csv"),                         # the observe `response` over the trace
    # --trace replaces the trace the program names, which is still kept from being written over
    (["t.sq", "--trace", "other.csv", "--dump", "."], "response.csv"),
])
def test_an_input_is_refused(folder, serq_in_process, args, victim):
    before = snapshot(folder)
    here = None if victim == "p.sq" else serq_in_process  # (the first case as a child process)
    r = serq(*args, cwd=folder, here=here)
    assert r.returncode == 1, r.stderr
    assert "refusing to write over an input of this run" in r.stderr and victim in r.stderr
    assert "Traceback" not in r.stderr
    assert snapshot(folder) == before


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_an_input_by_another_name_is_refused(folder, serq_in_process):
    os.symlink("p.sq", folder / "alias.txt")
    before = snapshot(folder)
    r = serq("p.sq", "-o", "alias.txt", cwd=folder, here=serq_in_process)
    assert r.returncode == 1 and "refusing" in r.stderr and "(it is" in r.stderr
    assert snapshot(folder) == before


@pytest.mark.skipif(os.name != "posix", reason="/dev/stdout")
def test_a_device_is_written_through(folder):
    # `-o` names a link to /dev/stdout (a pipe here): the report goes through it, the link stays
    os.symlink("/dev/stdout", folder / "out")
    r = serq("p.sq", "-o", "out", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("run: horizon 20")
    assert os.readlink(folder / "out") == "/dev/stdout"


def test_a_new_file_is_written(folder, serq_in_process):
    r = serq("p.sq", "-o", "report.txt", "--dump", "out", cwd=folder, here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert (folder / "report.txt").read_text().startswith("run: horizon 20")
    assert (folder / "out" / "response.csv").read_text().startswith("time,session,turn,value\n")


@pytest.mark.parametrize("flag", ["-o", "--dump"])
def test_the_refusal_comes_before_the_run(folder, serq_in_process, flag):
    # this program's run fails at t=0; the refusal is reported instead, so it was decided first
    (folder / "bad.sq").write_text('stage s : fifo;\nworkload { arrive batch(1); trace "response.csv"; }\n'
                                   "session { set g = ~uniform(0.2, 0.8); branch (g) { } turn; "
                                   "observe response = now; }\nrun { horizon 20; }\n")
    r = serq("bad.sq", flag, "response.csv" if flag == "-o" else ".", cwd=folder, here=serq_in_process)
    assert r.returncode == 1
    assert "refusing to write over an input of this run" in r.stderr and "branch guard" not in r.stderr


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
@pytest.mark.parametrize("entry", ["response.csv", "gauge"])
def test_a_link_inside_the_dump_folder_is_refused(folder, serq_in_process, entry):
    # the user names the folder, not its files: a link planted in it (to a file or to a folder elsewhere)
    # is refused before anything is written, and its target is untouched
    (folder / "elsewhere").mkdir()
    victim = folder / "elsewhere" / "victim.txt"
    victim.write_text("keep me\n")
    out = folder / "out"
    out.mkdir()
    if entry == "gauge":
        (folder / "g.sq").write_text("gauge waiting = queue(s);\n" + PROG.format(arrive="arrive batch(2);"))
        (out / "gauge").symlink_to(folder / "elsewhere", target_is_directory=True)
        prog = "g.sq"
    else:
        (out / "response.csv").symlink_to(victim)
        prog = "p.sq"
    before = snapshot(folder / "elsewhere")
    r = serq(prog, "--dump", "out", cwd=folder, here=serq_in_process)
    assert r.returncode == 1, r.stderr
    assert "is a symbolic link" in r.stderr and "Traceback" not in r.stderr
    assert snapshot(folder / "elsewhere") == before
    assert sorted(os.listdir(out)) == [entry]


@pytest.mark.skipif(os.name != "posix", reason="FIFOs, symbolic links and /dev/null")
@pytest.mark.parametrize("dump, said", [
    ("p.sq/out", "p.sq/out: cannot be made a folder: p.sq is a file"),
    ("p.sq", "'p.sq' is a file"),  # click's own refusal (a usage error)
    ("fifo", "fifo: is a FIFO; files are written into a folder here"),
    ("fifo/out", "fifo/out: cannot be made a folder: fifo is a FIFO"),
    ("dangling", "dangling: is a symbolic link to nothing; files are written into a folder here"),
    ("dangling/out", "dangling/out: cannot be made a folder: dangling is a symbolic link to nothing"),
    ("/dev/null", "/dev/null: is a device; files are written into a folder here"),
    ("/dev/null/out", "/dev/null/out: cannot be made a folder: /dev/null is a device"),
    ("gauged/out", "gauged/out/gauge: is a symbolic link"),
])
def test_a_dump_folder_that_cannot_be_one_is_refused_before_the_run(folder, serq_in_process, dump, said):
    # the dump's folder was made only after the run, so a long run ended with its report printed and then
    # "Not a directory" (or "File exists"): now the program whose run fails at t=0 is not run at all
    os.mkfifo(folder / "fifo")
    os.symlink("nowhere/at/all", folder / "dangling")
    (folder / "gauged" / "out").mkdir(parents=True)
    os.symlink("..", folder / "gauged" / "out" / "gauge")
    (folder / "bad.sq").write_text('gauge q = queue(s);\nstage s : fifo;\nworkload { arrive batch(1); }\n'
                                   "session { set g = ~uniform(0.2, 0.8); branch (g) { } "
                                   "observe response = now; }\nrun { horizon 20; }\n")
    before = snapshot(folder)
    here = None if dump == "p.sq/out" else serq_in_process  # (the first case as a child process)
    r = serq("bad.sq", "--dump", dump, cwd=folder, here=here)
    assert r.returncode in (1, 2), r.stderr
    assert said in r.stderr and "branch guard" not in r.stderr, r.stderr
    assert r.stdout == "" and "Traceback" not in r.stderr
    assert snapshot(folder) == before and not (folder / "nowhere").exists()


def test_a_dump_over_a_regular_file_in_the_folder_replaces_it(folder, serq_in_process):
    # an earlier dump's (a file no dump wrote there is refused: test_hostile_round32_dump_over_files.py)
    (folder / "out").mkdir()
    (folder / "out" / "response.csv").write_text("time,session,turn,value\n1.0,0,0,5.0\n")
    r = serq("p.sq", "--dump", "out", cwd=folder, here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert (folder / "out" / "response.csv").read_text().startswith("time,session,turn,value\n")


REC = ('stage s : fifo;\nworkload { arrive batch(2); }\nsession { set t0 = now; run s (1); observe response = now - t0; '
       'record req { sent = t0; done = now; } }\nrun { horizon 20; }\n')


@pytest.mark.parametrize("args, named", [
    (["-o", "r.csv", "--records", "r.csv"], "-o and --records"),              # the report, then the records over it
    (["-o", "out/response.csv", "--dump", "out"], "-o and --dump"),           # a dump file over the report
    (["--records", "out/response.csv", "--dump", "out"], "--records and --dump"),
    (["-o", "alias", "--records", "r.csv"], "-o and --records"),              # by another name (a link)
])
def test_two_outputs_that_are_one_file_are_refused(folder, serq_in_process, args, named):
    # each output of a run is a file of its own: two that are one file (the second written over the
    # first, the report lost) are refused before the run, and nothing is written
    (folder / "rec.sq").write_text(REC)
    (folder / "out").mkdir()
    (folder / "r.csv").write_text("old\n")
    os.symlink("r.csv", folder / "alias")
    before = snapshot(folder)
    here = None if args[1] == "r.csv" else serq_in_process  # (the first case as a child process)
    r = serq("rec.sq", *args, cwd=folder, here=here)
    assert r.returncode == 2, r.stderr  # a usage error: the command line alone is wrong
    assert f"named by both {named}" in r.stderr and "Traceback" not in r.stderr
    assert snapshot(folder) == before and os.listdir(folder / "out") == []


@pytest.mark.parametrize("args, message", [
    (["-o", "nowhere/report.txt", "--records", "r.csv"], "nowhere/report.txt: no folder nowhere"),
    (["-o", "report.txt", "--records", "nowhere/r.csv"], "nowhere/r.csv: no folder nowhere"),
    (["-o", "report.txt", "--records", "dangling.csv"], "dangling.csv: no folder"),  # a link into one
])
def test_an_output_that_cannot_be_written_is_refused_before_the_run(folder, serq_in_process, args, message):
    # a file in a folder that does not exist is refused before the run (which may take hours), not after
    # it with the report written and the records lost
    (folder / "rec.sq").write_text(REC)
    os.symlink("nowhere/r.csv", folder / "dangling.csv")
    before = snapshot(folder)
    here = None if args[1] == "nowhere/report.txt" else serq_in_process  # (the first case as a child process)
    r = serq("rec.sq", *args, cwd=folder, here=here)
    assert r.returncode == 1, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr
    assert snapshot(folder) == before and not (folder / "report.txt").exists()


def test_distinct_outputs_are_all_written(folder):
    (folder / "rec.sq").write_text(REC)
    r = serq("rec.sq", "-o", "report.txt", "--records", "r.csv", "--dump", "out", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert (folder / "report.txt").read_text().startswith("run: horizon 20")
    assert (folder / "r.csv").read_text().startswith("session,turn,time,sent,done\n")
    assert (folder / "out" / "response.csv").read_text().startswith("time,session,turn,value\n")


def test_outputs_into_the_folder_the_dump_makes_are_written(folder, serq_in_process):
    # --dump makes its folder (and the parents it lacks): the report and the records may go into it
    (folder / "rec.sq").write_text(REC)
    r = serq("rec.sq", "-o", "out/report.txt", "--records", "out/r.csv", "--dump", "out/samples", cwd=folder,
             here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert (folder / "out" / "report.txt").read_text().startswith("run: horizon 20")
    assert (folder / "out" / "r.csv").read_text().startswith("session,turn,time,sent,done\n")
    assert (folder / "out" / "samples" / "response.csv").read_text().startswith("time,session,turn,value\n")
    # a folder the dump does not make is still refused before the run, and nothing is made
    r = serq("rec.sq", "-o", "new/other/report.txt", "--dump", "new", cwd=folder, here=serq_in_process)
    assert r.returncode == 1 and "new/other/report.txt: no folder new/other" in r.stderr
    assert not (folder / "new").exists()
