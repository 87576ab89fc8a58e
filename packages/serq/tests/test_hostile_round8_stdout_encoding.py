"""Standard output is UTF-8 whatever the locale says: what a command prints is what it writes to a file.

Under ``PYTHONIOENCODING=ascii`` (or ``latin-1``, a C locale with ``PYTHONUTF8=0``, a Windows code page for a
redirected output) every text report ended in a ``UnicodeEncodeError`` traceback at its ``±``, and every
report, IR or table naming something outside that encoding (an IR file's names are any printable text)
did too; in Latin-1, ``serq ir p.ir.json > q.ir.json`` wrote a file ``serq check`` refused as not UTF-8.
serq.cli makes standard output encode UTF-8 while a command runs (and gives the stream its encoding back
after it, for a program that calls ``main`` and goes on), so ``serq run p.sq > r.txt`` and ``serq run p.sq -o
r.txt`` are the same bytes.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """stage svc : fifo;
workload { arrive poisson(0.5); }
session { set t0 = now; run svc (~exp(1)); observe resp_x = now - t0; end; }
run { horizon 400; seed 1; }
"""


def _serq(cwd: Path, *args: str, encoding: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if encoding is not None:
        env["PYTHONIOENCODING"] = encoding
    return subprocess.run([SERQ, *args], capture_output=True, cwd=cwd, env=env, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    ir = _serq(tmp_path, "ir", "p.sq").stdout.decode("utf-8")
    # an IR file's names are any printable text: a stage and an observe named in Chinese
    (tmp_path / "wide.ir.json").write_text(ir.replace("resp_x", "响应").replace('"svc"', '"服务"'),
                                           encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "cp1252"])
@pytest.mark.parametrize("args", [("run", "p.sq", "--no-progress"), ("run", "wide.ir.json", "--no-progress"),
                                  ("run", "wide.ir.json", "--no-progress", "--json")])
def test_a_report_on_standard_output_is_the_reports_file(folder, encoding, args):
    r = _serq(folder, *args, encoding=encoding)
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")[-2000:]
    assert _serq(folder, *args, "-o", "r.out").returncode == 0
    assert r.stdout == (folder / "r.out").read_bytes()
    assert "±" in r.stdout.decode("utf-8") or b"{" in r.stdout


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_the_ir_and_a_table_printed_read_back(folder, encoding):
    r = _serq(folder, "ir", "wide.ir.json", encoding=encoding)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    (folder / "again.ir.json").write_bytes(r.stdout)
    check = _serq(folder, "check", "again.ir.json")
    assert check.returncode == 0 and check.stdout.startswith(b"OK:"), check.stderr
    r = _serq(folder, "sweep", "wide.ir.json", "--workers", "0", "--no-progress", "--horizon", "200",
              encoding=encoding)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    assert "observes.响应.mean" in r.stdout.decode("utf-8")
    r = _serq(folder, "sweep", "wide.ir.json", "--workers", "0", "--no-progress", "--horizon", "200",
              "--show", "observes.响应.mean", encoding=encoding)
    assert r.returncode == 0 and "响应" in r.stdout.decode("utf-8"), r.stderr.decode(errors="replace")[-2000:]


def test_main_gives_the_stream_its_encoding_back(folder, monkeypatch):
    from serq.cli import main

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="latin-1", errors="strict")
    monkeypatch.setattr(sys, "stdout", stream)
    monkeypatch.chdir(folder)
    with pytest.raises(SystemExit) as e:
        main(["run", "wide.ir.json", "--no-progress", "--horizon", "200"])
    assert e.value.code == 0
    assert sys.stdout is stream and stream.encoding == "latin-1" and stream.errors == "strict"
    stream.flush()
    assert "服务" in raw.getvalue().decode("utf-8")
