"""The names of a sweep's and a comparison's files in their messages, printed as every message prints a
file's name (serq.errors.shown_path: a line break written `\\n`, a name longer than 240 characters cut to
its first 120 and last 119 around `…`). `--out` or `--records` in a folder that does not exist, a file at
`--out` or at its points table that is no sweep's, and a dump folder without the observe `serq plot --cdf`
names printed the name as given: `serq sweep -o $'n\\nl/x.csv'` said `error: n`, then `l/x.csv: no folder n`,
then `l to write it in`, three lines of one message, and a name of 5 000 characters was said whole, twice
(`serq run -o` said both as the rule has it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; record req { w = now - t0; } }\n"
           "run { horizon 10; seed 3; }\n")
SWEEP = ["sweep", "p.sq", "--set", "rate=1", "--workers", "0", "--no-progress"]
COMPARE = ["compare", "p.sq", "--set", "rate=1,1.2", "--workers", "0", "--no-progress"]
LONG = "/".join(["d" * 200] * 25)  # 5 024 characters, in folders that do not exist


def _cut(name: str) -> str:
    """A name as a message shows it: at most 240 characters, the first 120 and the last 119 around `…`."""
    return name if len(name) <= 240 else name[:120] + "…" + name[-119:]


def _serq(cwd: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``cwd``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said and written, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here(*args)
    return subprocess.run([SERQ, *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("folder", ["n\nl", LONG])
@pytest.mark.parametrize("command", ["sweep -o", "sweep --records", "compare -o"])
def test_an_output_in_no_folder_names_it_as_every_message_does(tmp_path, serq_in_process, folder, command):
    here = None if folder == "n\nl" else serq_in_process  # (the first folder's commands as child processes)
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = f"{folder}/x.csv"
    shown, where = _cut(out.replace("\n", "\\n")), _cut(folder.replace("\n", "\\n"))
    if command == "sweep -o":
        r, head = _serq(tmp_path, *SWEEP, "-o", out, here=here), ""
    elif command == "sweep --records":
        r, head = _serq(tmp_path, *SWEEP, "-o", "t.csv", "--records", out, here=here), "--records "
    else:
        r, head = _serq(tmp_path, *COMPARE, "-o", out, here=here), ""
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f"error: {head}{shown}: no folder {where} to write it in\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_a_table_or_points_table_of_another_kind_names_it_as_every_message_does(tmp_path, serq_in_process):
    # (serq.cli.main in this process; the first test's names with a line break keep their child processes)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "n\nl.csv").write_text("a,b\n1,2\n")
    r = _serq(tmp_path, *SWEEP, "-o", "n\nl.csv", here=serq_in_process)
    assert (r.returncode, r.stderr) == (1, "error: n\\nl.csv: not a sweep's table (no column key); remove it or "
                                           "give --fresh\n")
    (tmp_path / "n\nl.csv").unlink()
    (tmp_path / "n\nl.points.csv").write_text("a,b\n1,2\n")
    r = _serq(tmp_path, *SWEEP, "-o", "n\nl.csv", here=serq_in_process)
    assert (r.returncode, r.stderr) == (1, "error: n\\nl.points.csv: not a sweep's points table (no column point "
                                           "and runs); a sweep into n\\nl.csv writes its table of points there: "
                                           "remove it, give --out another name, or give --fresh\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n\nl.points.csv", "p.sq"]
    assert (tmp_path / "n\nl.points.csv").read_text() == "a,b\n1,2\n"


def test_a_dump_folder_without_the_observe_names_it_as_every_message_does(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _serq(tmp_path, "run", "p.sq", "--no-progress", "--dump", "d\nd", here=serq_in_process)
    assert r.returncode == 0 and (tmp_path / "d\nd" / "y.csv").is_file()
    r = _serq(tmp_path, "plot", "d\nd", "--cdf", "z", "-o", "c.svg", here=serq_in_process)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith("error: d\\nd: no observe z in the dump (observes there: y)")
    assert "\n" not in r.stderr.rstrip("\n")
    assert not (tmp_path / "c.svg").exists()
