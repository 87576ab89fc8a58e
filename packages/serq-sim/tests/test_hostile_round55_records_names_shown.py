"""`serq run --records NAME` refused (a name of no records file's suffix; a program of no records) printed
NAME as given: a line break in it became a space in the usage error (`--records: n l.txt: …`) and split the
other, and a name of 300 characters was said whole. It is printed as every message prints a file's name
(serq.errors.shown_path: `\\n`, a name beyond 240 characters cut around `…`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 10; seed 3; }\n")


def _cut(name: str) -> str:
    return name if len(name) <= 240 else name[:120] + "…" + name[-119:]


@pytest.mark.parametrize("stem", ["n\nl", "x" * 300])
def test_a_refused_records_name_is_shown_as_every_name_is(tmp_path, stem):
    (tmp_path / "p.sq").write_text(PROGRAM)

    def run(name: str) -> subprocess.CompletedProcess:
        return subprocess.run([SERQ, "run", "p.sq", "--no-progress", "--records", name], cwd=tmp_path,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)

    shown = stem.replace("\n", "\\n")
    r = run(f"{stem}.txt")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"error: invalid value for --records: {_cut(shown + '.txt')}: a "
                        "records file ends in .csv or .parquet (see 'serq run --help')\n")
    r = run(f"{stem}.csv")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith(f"error: --records {_cut(shown + '.csv')}: the program "
                               "declares no records (`record NAME { col = expr; … }`")
    assert r.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]
