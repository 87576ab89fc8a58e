"""`serq run --records OUT.csv` of a program of several record tables writes OUT.NAME.csv per table, NAME
the table's: an IR file's table named `x/y` was written into the folder OUT.x (when there was one), and
one named `/../../elsewhere/f` through OUT. to any folder, though nothing a program or an IR file says may
name a file serq writes (docs/security.md). NAME is now made a file name by serq.files.file_names, as a
dump's files are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sim.records import record_files

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("stage s : delay;\nworkload { arrive poisson(1); }\n"
           "session { run s (1); record req { a = 1; } record sub { b = 2; } }\nrun { horizon 5; }\n")


@pytest.mark.parametrize("name, file", [("x/y", "out.x%2Fy.csv"), ("..", "out.%2E..csv"),
                                        ("/../../escaped", "out.%2F..%2F..%2Fescaped.csv")])
def test_a_table_name_is_a_file_name_beside_the_records_file(tmp_path, name, file):
    (tmp_path / "p.sq").write_text(PROGRAM)
    ir = json.loads(subprocess.run([SERQ, "ir", "p.sq"], capture_output=True, text=True, cwd=tmp_path,
                                   timeout=60).stdout)
    ir["records"][1]["name"] = name
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "p.ir.json").write_text(json.dumps(ir))
    (tmp_path / "run" / "out.x").mkdir()  # a folder the name would have written into
    (tmp_path / "run" / "out.").mkdir()
    r = subprocess.run([SERQ, "run", "p.ir.json", "--records", "out.csv", "--no-progress"], capture_output=True,
                       text=True, cwd=tmp_path / "run", timeout=60)
    assert r.returncode == 0, r.stderr
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.csv"))
    assert written == sorted(["run/out.req.csv", f"run/{file}"]), written
    assert (tmp_path / "run" / file).read_text().startswith("session,turn,time,b\n")


def test_identifiers_keep_their_names():
    assert record_files("d/reqs.csv", ["request", "sub"]) == {"request": "d/reqs.request.csv",
                                                              "sub": "d/reqs.sub.csv"}
    assert record_files("d/reqs.csv", ["only"]) == {"only": "d/reqs.csv"}
