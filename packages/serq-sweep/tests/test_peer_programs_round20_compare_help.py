"""serq compare's help offered --zip, which serq compare refuses (peer programs, round 20: an llm-d engineer
comparing two fleets read `--zip NAME,NAME,...  These swept names move together` in `serq compare --help`,
gave it, and was told `--zip is not for serq compare`). The option is now hidden from serq compare's help,
and still refused with those words when given; serq sweep's help keeps it. compare() of Python took `zip=` (the
docs listed it among its run options) and then refused the arms it grouped as "a grid of arms": it is refused
as the command refuses --zip."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")


def serq(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=60, cwd=cwd,
                          stdin=subprocess.DEVNULL)


def test_compare_help_does_not_offer_zip_and_sweep_help_does():
    r = serq("compare", "--help")
    assert r.returncode == 0 and "--zip" not in r.stdout and "move together" not in r.stdout
    assert "--set NAME=VALUES" in r.stdout and "--figure FIGURE" in r.stdout
    r = serq("sweep", "--help")
    assert r.returncode == 0 and "--zip NAME,NAME,..." in r.stdout


def test_compare_still_refuses_zip(tmp_path):
    (tmp_path / "p.sq").write_text("let a = 1;\nlet b = 1;\nstage s : fifo;\nworkload { arrive poisson(1); }\n"
                                   "session { run s (a * b / 2); }\nrun { horizon 10; }\n")
    r = serq("compare", "p.sq", "--zip", "a,b", "--set", "a=1,2", "--set", "b=1,2", "--no-progress", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("error: --zip is not for serq compare (its arms are the values of one --set or --def name, "
                        "or two or more FILEs) (see 'serq compare --help')\n")


def test_compare_of_python_refuses_zip_as_the_command_does(tmp_path):
    import serq_sweep
    from serq.errors import UsageError

    p = tmp_path / "p.sq"
    p.write_text("let a = 1;\nlet b = 1;\nstage s : fifo;\nworkload { arrive poisson(1); }\n"
                 "session { run s (a * b / 2); }\nrun { horizon 10; }\n")
    with pytest.raises(UsageError) as e:
        serq_sweep.compare(str(p), sets={"a": [1, 2], "b": [1, 2]}, zip=[["a", "b"]], seeds="1..2", workers=0,
                           progress=False)
    assert str(e.value) == ("error: zip is not for compare() (its arms are the values of one name of sets or defs, "
                            "or two or more programs)")
    # an empty zip is no group: the comparison of one name runs
    frame = serq_sweep.compare(str(p), sets={"a": [1, 2]}, zip=[], seeds="1..2", workers=0, progress=False,
                               figures=["events"])
    assert list(frame["figure"]) == ["events"]
