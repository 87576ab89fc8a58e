"""The status lines that name a file (serq fmt's ``reformatted NAME``, serq sweep's summary, the cache
folder's warning) write its control characters as escapes, as every error message does (0d4bf28): ``serq
fmt *.sq`` in a folder someone sent printed a file name holding an escape sequence as it is, and on a
terminal the sequence drove it (click strips colour codes only off a terminal; a bell it never strips)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")
NAME = "a\x1b]0;pwned\x07\x1b[2J.sq"
SHOWN = "a\\x1b]0;pwned\\x07\\x1b[2J.sq"
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _serq(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL, env=env)


def test_fmt_names_a_file_with_its_control_characters_escaped(tmp_path):
    (tmp_path / NAME).write_text("let   x=1;\n")
    r = _serq(tmp_path, "fmt", "--check", NAME)
    assert r.returncode == 1 and r.stdout == f"would reformat {SHOWN}\n", r.stdout
    r = _serq(tmp_path, "fmt", NAME)
    assert r.returncode == 0 and r.stdout == f"reformatted {SHOWN}\n", r.stdout
    assert (tmp_path / NAME).read_text() == "let x = 1;\n"


def test_the_sweep_summary_names_its_files_with_control_characters_escaped(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = NAME[:-3] + ".csv"
    r = _serq(tmp_path, "sweep", "p.sq", "-o", out, "--workers", "0", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr
    assert r.stderr.endswith(f": {SHOWN[:-3]}.csv; per point: {SHOWN[:-3]}.points.csv\n"), r.stderr


def test_the_cache_warning_names_its_folder_with_control_characters_escaped(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    folder = tmp_path / NAME[:-3]
    folder.mkdir()
    os.chmod(folder, 0o777)  # others may write it: not used, with a warning naming it
    r = _serq(tmp_path, "check", "p.sq", env={**os.environ, "SERQ_CACHE_DIR": str(folder)})
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr
    assert f"not using the cache folder {tmp_path}/{SHOWN[:-3]}: " in r.stderr, r.stderr
