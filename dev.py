#!/usr/bin/env python3
"""Set up and drive the serQ workspace with nothing but python3 (3.11+) and the package index.

    python3 dev.py example   # set up, then run an example end to end
    python3 dev.py test      # set up, then run the whole test suite (ruff included)
    python3 dev.py setup     # set up only: .venv/ with every part installed

Set-up installs uv into .tools/uv (a private venv) when no uv is on PATH, then runs
``uv sync --all-packages --frozen --compile-bytecode --python PYTHON``, PYTHON the interpreter running this
file (so ``python3.13 dev.py test`` tests on 3.13; uv's own choice was the first Python it found), which
makes ``.venv/`` with the seven parts and the dev tools, their modules compiled to bytecode: uv installs none by default, and a process that may not
write it (PYTHONDONTWRITEBYTECODE, a read-only environment) compiled pandas, matplotlib and dask from
source at every import (``serq plot`` spent 1.45 s of CPU instead of 0.6 s, and so did each command the
tests start). The parts' own modules (packages/*/src, installed as links) are compiled by compileall.
Once compiled, the check costs a fraction of a second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
TOOLS = ROOT / ".tools" / "uv"
BIN = "Scripts" if os.name == "nt" else "bin"


def sh(*cmd: str | Path) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    r = subprocess.run([str(c) for c in cmd], cwd=ROOT)
    if r.returncode != 0:
        sys.exit(r.returncode)


def uv() -> str:
    found = shutil.which("uv")
    if found:
        return found
    exe = TOOLS / BIN / "uv"
    if not exe.exists():
        print(f"+ installing uv into {TOOLS.relative_to(ROOT)}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(TOOLS)
        sh(TOOLS / BIN / "python", "-m", "pip", "install", "--quiet", "uv>=0.5")
    return str(exe)


def setup() -> None:
    sh(uv(), "sync", "--all-packages", "--frozen", "--compile-bytecode", "--python", sys.executable)
    # the parts are installed as links to packages/*/src, which uv leaves alone: compile their modules that
    # changed since (a module that does not compile is left for ruff and the tests to report)
    subprocess.run([venv_bin("python"), "-m", "compileall", "-q", *sorted(str(p) for p in ROOT.glob("packages/*/src"))],
                   cwd=ROOT, stdout=subprocess.DEVNULL)


def venv_bin(name: str) -> str:
    return str(ROOT / ".venv" / BIN / name)


def main(argv: list[str]) -> None:
    what = argv[1] if len(argv) > 1 else "help"
    if what == "setup":
        setup()
    elif what == "test":
        setup()
        sh(venv_bin("ruff"), "check", ".")
        # the tests in parallel, one worker per processor (pytest-xdist; long tests taken first from a
        # worker's queue by the others), unless the command line says otherwise (-n 0: in one process)
        spread = [] if any(a == "-n" or a.startswith(("-n", "--numprocesses")) for a in argv[2:]) else \
            ["-n", "auto", "--dist", "worksteal"]
        sh(venv_bin("python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", *spread, *argv[2:])
    elif what == "example":
        setup()
        example = argv[2] if len(argv) > 2 else "examples/single-turn/mg1.sq"
        sh(venv_bin("serq"), "run", example, *argv[3:])
    else:
        print(__doc__)
        sys.exit(0 if what == "help" else 2)


if __name__ == "__main__":
    main(sys.argv)
