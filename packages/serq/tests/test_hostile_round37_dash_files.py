"""A file whose name begins with `-`, given on the command line, is read by click as options (`serq check
-p.sq` is `-p`, `-.`, …): the usage error says the file is there and how to give it, where it was `no such
option '-p'` alone. An option no file is named like is told as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 5; }\n"


def _serq(cwd: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``cwd``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args, command", [(["check", "-p.sq"], "serq check"), (["fmt", "--check", "-p.sq"], "serq fmt"),
                                           (["run", "--no-progress", "-p.sq"], "serq run")])
def test_a_file_named_like_an_option_is_named_with_the_way_to_give_it(tmp_path, serq_in_process, args, command):
    here = None if command == "serq check" else serq_in_process  # (serq check's calls as child processes)
    (tmp_path / "-p.sq").write_text(PROGRAM)
    r = _serq(tmp_path, *args, here=here)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (f"error: no such option '-p'; -p.sq is a file here: give it as ./-p.sq, or after -- "
                        f"(see '{command} --help')\n"), r.stderr
    for way in (["./-p.sq"], ["--", "-p.sq"]):  # both ways the message gives work
        ok = _serq(tmp_path, *[a for a in args if a != "-p.sq"], *way, here=here)
        assert ok.returncode == 0, ok.stderr


def test_an_unknown_option_that_is_no_file_is_told_as_before(tmp_path, serq_in_process):
    r = _serq(tmp_path, "check", "-p.sq", here=serq_in_process)
    assert r.returncode == 2
    assert r.stderr == "error: no such option '-p' (see 'serq check --help')\n", r.stderr
    # an option's whole name that is a file here is told so too
    (tmp_path / "--bogus").write_text("")
    r = _serq(tmp_path, "check", "--bogus", "p.sq", "--", "--bogus", here=serq_in_process)
    assert r.stderr == "error: no such option '--bogus'; --bogus is a file here: give it as ./--bogus, or after -- " \
                       "(see 'serq check --help')\n", r.stderr
