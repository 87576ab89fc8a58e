"""Standard output that cannot take what a command writes: a full device, a closed descriptor, a pipe
whose reader went away. One line on stderr (or, for the pipe, none) and a non-zero status, never a
traceback; and a file that cannot be written whole is named."""

from __future__ import annotations

import os
import resource
import subprocess

import pytest
from host_helpers import BIN, REPO

MG1 = str(REPO / "examples" / "single-turn" / "mg1.sq")
VLLM = str(REPO / "examples" / "multi-turn" / "vllm.sq")

#: every kind of command: a report, a summary line, a large JSON text, the host's own, click's help
COMMANDS = {
    "run": ("run", MG1, "--no-progress", "--horizon", "200", "--warmup", "0"),
    "check": ("check", MG1),
    "ir": ("ir", VLLM),
    "plugins": ("plugins",),
    "help": ("--help",),
}


def serq(args, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("env", {**os.environ, "SERQ_COMPILE_CACHE": "0"})
    return subprocess.run([str(BIN / "serq"), *args], text=True, timeout=120, **kw)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_full_device_is_one_error(name):
    with open("/dev/full", "w") as full:
        r = serq(COMMANDS[name], stdout=full)
    assert r.returncode == 1
    assert r.stderr == "error: cannot write to standard output: No space left on device\n"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_closed_stdout_is_one_error(name):
    r = serq(COMMANDS[name], preexec_fn=lambda: os.close(1))
    assert r.returncode == 1
    assert r.stderr == "error: cannot write to standard output: Bad file descriptor\n"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_pipe_without_reader_ends_quietly_with_141(name):
    rd, wr = os.pipe()
    os.close(rd)  # the reader is gone before the first write: every write is EPIPE
    try:
        r = serq(COMMANDS[name], stdout=wr)
    finally:
        os.close(wr)
    assert (r.returncode, r.stderr) == (141, "")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_reader_that_goes_away_mid_write_ends_the_command_with_141(unbuffered):
    # docs/architecture.md: `serq ir x.sq | head -c1` ends quietly with status 141. The IR (93 812 bytes)
    # is more than a pipe holds (64 KiB), so the command is inside its write when the reader takes one
    # byte and goes; under PYTHONUNBUFFERED=1 the raw write's partial count was dropped, status 0
    env = {**os.environ, "SERQ_COMPILE_CACHE": "0", "PYTHONUNBUFFERED": unbuffered}
    with subprocess.Popen([str(BIN / "serq"), "ir", VLLM], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env) as p:
        assert os.read(p.stdout.fileno(), 1) == b"{"
        p.stdout.close()
        err = p.stderr.read()
        assert (p.wait(timeout=60), err) == (141, b"")


def test_a_closed_stdout_is_no_error_when_nothing_is_written_there(tmp_path):
    out = tmp_path / "report.txt"
    r = serq(COMMANDS["run"] + ("-o", str(out), "--dump", str(tmp_path / "d")),
             preexec_fn=lambda: os.close(1))
    assert (r.returncode, r.stderr) == (0, "")
    assert out.read_text().startswith("run: horizon 200  end 200")
    assert (tmp_path / "d" / "response.csv").read_text().startswith("time,session,turn,value\n")


def _limit_file_size():
    # the report (751 bytes of JSON) and the dump (6 670 bytes) are larger; Python ignores SIGXFSZ, so a
    # write beyond the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (500, 500))


def test_a_dump_that_cannot_be_written_whole_names_the_file(tmp_path):
    r = serq(COMMANDS["run"] + ("--dump", str(tmp_path / "d")), stdout=subprocess.DEVNULL,
             preexec_fn=_limit_file_size)
    path = tmp_path / "d" / "response.csv"
    assert r.returncode == 1
    assert r.stderr == f"error: {path}: File too large\n"
    assert not (tmp_path / "d").exists()  # the temporary file went too, and the folder the dump made


def test_a_report_file_that_cannot_be_written_whole_names_the_file(tmp_path):
    out = tmp_path / "ir.json"
    r = serq(COMMANDS["run"] + ("--json", "-o", str(out)), stdout=subprocess.DEVNULL,
             preexec_fn=_limit_file_size)
    assert r.returncode == 1
    assert r.stderr == f"error: {out}: File too large\n"
    assert not out.exists()
