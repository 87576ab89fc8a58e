"""``serq fit``'s step trace is JSON Lines. A file whose lines end with a carriage return alone was told
"not a JSON object: Extra data", and a byte-order mark at the start of a later line "Unexpected UTF-8 BOM
(decode using utf-8-sig)", Python's words; each is now told in the file's terms, at its place. Lines ended
by \\r\\n, and a byte-order mark as the file's first character, are read as before."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

pytestmark = pytest.mark.timeout(60)


def _steps(n: int = 30) -> list[str]:
    rnd = random.Random(3)
    out = []
    for _ in range(n):
        d, p, kv, at = rnd.randint(0, 30), rnd.randint(0, 500), rnd.randint(0, 5000), rnd.randint(0, 100000)
        out.append(json.dumps({"decoders": d, "kv_decode": kv, "prefilled": p, "attention": at,
                               "time": 0.01 + 1e-4 * d + 5e-5 * p + 1e-7 * kv + rnd.random() * 1e-4}))
    return out


def _fit(tmp_path, data: bytes):
    (tmp_path / "s.jsonl").write_bytes(data)
    return subprocess.run([SERQ, "fit", "s.jsonl"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_lines_ended_by_a_carriage_return_alone_are_told_so(tmp_path):
    lines = _steps()
    r = _fit(tmp_path, "\r".join(lines).encode() + b"\r")
    assert r.returncode == 1 and r.stdout == ""
    col = len(lines[0]) + 1
    head, quoted, caret = r.stderr.splitlines()[:3]
    assert head == (f"s.jsonl:1:{col}: error: a carriage return alone ends a line here: a step trace is JSON "
                    "Lines, one step a line, each ended by \\n (or \\r\\n)")
    # (the quoted part of the one long line: the caret under the carriage return, shown as \x0d)
    assert quoted[caret.index("^"):].startswith("\\x0d") and lines[0][-40:] + "\\x0d" in quoted
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("at", [1, 7, 29])
def test_a_byte_order_mark_inside_the_file_is_told_at_its_line(tmp_path, at):
    lines = _steps()
    lines[at] = "\ufeff" + lines[at]
    r = _fit(tmp_path, ("\n".join(lines) + "\n").encode())
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines()[0] == (f"s.jsonl:{at + 1}:1: error: a byte-order mark (U+FEFF) here: only the "
                                        "file's first character may be one")


def test_crlf_lines_and_a_leading_byte_order_mark_fit_as_plain_lines(tmp_path):
    lines = _steps()
    plain = _fit(tmp_path, ("\n".join(lines) + "\n").encode())
    assert plain.returncode == 0, plain.stderr
    crlf = _fit(tmp_path, ("\r\n".join(lines) + "\r\n").encode())
    bom = _fit(tmp_path, ("\ufeff" + "\n".join(lines) + "\n").encode())
    assert crlf.returncode == 0 and bom.returncode == 0, (crlf.stderr, bom.stderr)
    assert crlf.stdout == plain.stdout == bom.stdout
    assert plain.stdout.startswith("fit: 30 steps")


def test_other_faults_keep_json_s_words(tmp_path):
    lines = _steps()
    lines[4] = lines[4][:-1]  # a missing }
    r = _fit(tmp_path, ("\n".join(lines) + "\n").encode())
    assert r.returncode == 1
    assert r.stderr.splitlines()[0].startswith("s.jsonl:5:") and "not a JSON object: " in r.stderr
