"""A user installs only the parts they need: each part, installed from its own distribution with only the
dependencies it declares, works, and a command of a part that is not installed names that part.

The other separability tests switch parts off with SERQ_DISABLED_PLUGINS in the development environment,
where every part is installed (test_separable.py). Here two real environments are made with uv, as a user's
``pip install`` makes them (the parts built as wheels from packages/*, not linked to the sources): the host
and serq-ir alone, and every part but serq-report. A command no installed part registers said only "no such
command 'sweep'", and click guessed a neighbour ("no such command 'fmt'. Did you mean 'fit'?" with serq-sim
installed); it now says whose command it is and how to have it (serq.parts.OWN_COMMANDS)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BIN = "Scripts" if os.name == "nt" else "bin"
MG1 = REPO / "examples" / "single-turn" / "mg1.sq"


def _uv() -> str:
    """The uv that ``python3 dev.py setup`` uses: on PATH, else the one it installs into .tools/uv."""
    found = shutil.which("uv")
    if found:
        return found
    exe = REPO / ".tools" / "uv" / BIN / "uv"
    assert exe.exists(), "no uv on PATH and none in .tools/uv: run `python3 dev.py setup` first"
    return str(exe)


def _environment(where: Path, parts: list[str]) -> Path:
    """A virtual environment at ``where`` with the parts ``parts`` (and what they declare) installed from
    packages/*; from uv's cache when it has every wheel (``python3 dev.py setup`` filled it), else from the
    package index. Its ``serq`` command's path."""
    uv = _uv()
    env = {**os.environ, "VIRTUAL_ENV": str(where)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    r = subprocess.run([uv, "venv", "-q", str(where), "--python", sys.executable], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    install = [uv, "pip", "install", "-q", "--python", str(where / BIN / "python"),
               *(str(REPO / "packages" / p) for p in parts)]
    r = subprocess.run([*install, "--offline"], capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:  # a wheel uv's cache does not have: from the index
        r = subprocess.run(install, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    return where / BIN / "serq"


@pytest.fixture(scope="module")
def installs(tmp_path_factory):
    root = tmp_path_factory.mktemp("installs")
    only_ir = _environment(root / "ir", ["serq", "serq-ir"])
    no_report = _environment(root / "noreport", ["serq", "serq-ir", "serq-frontend", "serq-sim", "serq-vllm",
                                                 "serq-sweep"])
    ir_file = root / "mg1.ir.json"
    r = subprocess.run([str(Path(sys.executable).parent / "serq"), "ir", str(MG1)], capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    ir_file.write_bytes(r.stdout)
    return only_ir, no_report, ir_file


def serq(exe: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERQ_")}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_the_table_of_own_commands_is_what_the_parts_register():
    """OWN_COMMANDS says which part registers each command: the parts' own serq_register_commands hooks,
    every part installed here, register exactly those (the host's check, ir and plugins are its own)."""
    from importlib import metadata

    from serq.parts import OWN_COMMANDS
    from serq.plugins import FIRST_PARTY, normalize_name

    ours = {normalize_name(n): n for n in FIRST_PARTY}
    registered: dict[str, str] = {}
    for ep in metadata.entry_points(group="serq"):
        dist = ours.get(normalize_name(ep.dist.name))
        if dist is None or dist == "serq":
            continue
        hook = getattr(ep.load(), "serq_register_commands", None)
        if hook is not None:
            names: list = []
            hook(names.append)
            registered.update((c.name, dist) for c in names)
    assert registered == OWN_COMMANDS


def test_the_host_and_ir_alone(installs, tmp_path):
    only_ir, _no_report, ir_file = installs
    r = serq(only_ir, "--help")
    assert r.returncode == 0
    listed = r.stdout.split("Commands:")[1].split()
    assert [w for w in listed if w in ("check", "ir", "plugins", "run", "fmt", "sweep", "vllm")] \
        == ["check", "ir", "plugins"]
    r = serq(only_ir, "check", str(ir_file))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("OK: 0 pool(s), 1 stage(s)")
    r = serq(only_ir, "check", str(MG1))
    assert r.returncode == 1
    assert r.stderr == (f"error: {MG1}: no installed part loads .sq files; install serq-frontend (pip install "
                        "serq-frontend, or serq[all])\n")
    for command, part in [("run", "serq-sim"), ("fmt", "serq-frontend"), ("sweep", "serq-sweep"),
                          ("metrics", "serq-sweep"), ("vllm", "serq-vllm")]:
        r = serq(only_ir, command, str(ir_file))
        assert r.returncode == 2
        assert r.stderr == (f"error: the command {command!r} is {part}'s, which is not installed (pip install "
                            f"{part}, or serq[all]) (see 'serq --help')\n")
    r = serq(only_ir, "nosuch")  # a command of no part of serQ's is unknown, as before
    assert r.returncode == 2 and r.stderr.startswith("error: no such command 'nosuch'")


def test_every_part_but_the_report(installs, tmp_path):
    """serq-sim, serq-vllm and serq-sweep do not need serq-report to be imported or to run: the scenarios
    shipped in serq-vllm's wheel run, a sweep writes its table, and only what prints a report names it."""
    _only_ir, no_report, ir_file = installs
    r = serq(no_report, "vllm", "scenario", "vllm/preempt")
    assert r.returncode == 0, r.stderr
    r = serq(no_report, "run", str(ir_file))
    assert r.returncode == 1
    assert r.stderr == "error: no report format is installed; install serq-report (pip install serq-report)\n"
    out = tmp_path / "t.csv"
    r = serq(no_report, "sweep", str(MG1), "--set", "lambda=0.5", "--seeds", "1..2", "--workers", "0",
             "--horizon", "3000", "--no-progress", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert len(out.read_text().splitlines()) == 3  # the header and a row per seed
    r = serq(no_report, "fmt", "--check", str(MG1))
    assert r.returncode == 0, r.stderr
