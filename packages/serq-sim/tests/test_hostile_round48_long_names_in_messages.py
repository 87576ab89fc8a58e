"""A run's error at a program of a long file name, and serq fit's errors of a whole step file, name the file
as every message does (serq.errors.shown_path): cut around '…' past 240 characters, a line break escaped.

Before, serq_sim's located errors (serq.errors.located, place) printed span.file whole, so a run's error at a
program in a folder of 600 characters had a first line of 681 characters where serq check's error at the same
file cut it; and serq fit printed its FILE whole (and unescaped) in 'FILE: error: no steps' and the errors
of the fit itself (one step, terms linearly dependent), where its errors at a line cut it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import shown_path

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("stage s : fifo;\nworkload { arrive poisson(1); }\nsession {\n  set x = 1;\n  run s (x - 2);\n  end;\n}\n"
           "run { horizon 10; seed 1; }\n")


def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def _long(tmp_path: Path) -> Path:
    folder = tmp_path / ("y" * 200) / ("z" * 200) / ("w" * 200)
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_a_runs_error_names_a_long_file_cut(tmp_path, tier):
    p = _long(tmp_path) / "p.sq"
    p.write_text(PROGRAM)
    env = {**os.environ, "SERQ_SIM_TIER": tier}
    r = subprocess.run([SERQ, "run", str(p)], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL, env=env)
    assert r.returncode == 1 and r.stdout == ""
    shown = shown_path(p)
    assert len(shown) == 240 and "…" in shown
    # line 5, column 3: the run whose work is 1 - 2
    assert r.stderr.splitlines() == [f"{shown}:5:3: error: at t=0, session 0: the run's work is negative (-1)",
                                     "    run s (x - 2);", "    ^"], r.stderr[:600]


def _steps(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.mark.parametrize(("text", "said"), [
    ("", "no steps"),
    (_steps([{"decoders": 1, "kv_decode": 2, "prefilled": 3, "attention": 9, "time": 0.5}]),
     "1 step cannot determine the 5 coefficients c, d, e, a and b: a fit wants many steps of each kind, over "
     "the batch sizes and contexts to simulate"),
    (_steps([{"decoders": i, "kv_decode": 2 * i, "prefilled": i, "attention": i, "time": 0.1 * i}
             for i in range(1, 9)]),
     "the terms are linearly dependent over these 8 steps (in every step, attention = decoders; "
     "prefilled = decoders; kv_decode = 2 * decoders): the fit is not determined (give steps in which these "
     "terms vary apart)"),
])
def test_fits_errors_of_a_whole_file_name_a_long_file_cut(tmp_path, text, said):
    p = _long(tmp_path) / "steps.jsonl"
    p.write_text(text)
    r = _serq(tmp_path, "fit", str(p))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"{shown_path(p)}: error: {said}\n", r.stderr[:800]


def test_fits_file_with_a_line_break_in_its_name_is_one_line(tmp_path):
    p = tmp_path / "a\nb.jsonl"
    p.write_text("")
    r = _serq(tmp_path, "fit", str(p))
    assert r.returncode == 1
    assert r.stderr == str(p).replace("\n", "\\n") + ": error: no steps\n", r.stderr
