"""A table's or records file's name of no table's suffix (`serq sweep -o`, `serq compare -o`, `--records`,
`serq plot SOURCE`) in the message that refuses it: printed as given, so a line break in it split the
message (`error: --out n`, then `l.txt: a table is .parquet or .csv`) and a name of 300 characters was said
whole. It is printed as every message prints a file's name (serq.errors.shown_path)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; record req { w = now - t0; } }\n"
           "run { horizon 10; seed 3; }\n")
LONG = "x" * 300 + ".txt"
SWEEP = ["sweep", "p.sq", "--set", "rate=1", "--workers", "0", "--no-progress"]


def _cut(name: str) -> str:
    return name if len(name) <= 240 else name[:120] + "…" + name[-119:]


@pytest.mark.parametrize("name", ["n\nl.txt", LONG])
def test_a_name_of_no_tables_suffix_is_shown_as_every_name_is(tmp_path, name):
    (tmp_path / "p.sq").write_text(PROGRAM)
    shown = _cut(name.replace("\n", "\\n"))
    for args, status, said in (
        ([*SWEEP, "-o", name], 2, f"--out {shown}: a table is .parquet or .csv"),
        (["compare", "p.sq", "--set", "rate=1,2", "--workers", "0", "-o", name], 2,
         f"--out {shown}: a table is .parquet or .csv"),
        ([*SWEEP, "-o", "t.csv", "--records", name], 2, f"--records {shown}: a records file is .parquet or .csv"),
    ):
        r = subprocess.run([SERQ, *args], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=120)
        assert (r.returncode, r.stdout, r.stderr) == (status, "", f"error: {said}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]
