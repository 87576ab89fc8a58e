"""Helpers: a plugin manager with the host, the frontend and serq-vllm's library folder only, and the
check of a diagnostic against a marked place in the source."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
import serq_ir

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
LIB = ROOT / "packages" / "serq-vllm" / "src" / "serq_vllm" / "lib"


class LibPaths:
    """serq-vllm's library folder, without importing serq-vllm's plugin (and what it imports)."""

    @serq.hookimpl
    def serq_frontend_library_paths(self):
        return [LIB]


def make_pm(*plugins):
    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, LibPaths(), *plugins])


_PM = None


def compile_src(src: str, **kw):
    return serq_frontend.compile(source=src, pm=kw.pop("pm", None) or _pm(), **kw)


def _pm():
    global _PM
    if _PM is None:
        _PM = make_pm()
    return _PM


def ir_bytes(program) -> bytes:
    import msgspec

    return serq_ir.encode(msgspec.structs.replace(program, source=None), spans=False)


MARK = "⟨"


def located(src: str) -> tuple[str, int, int]:
    """The source without its one ``⟨`` marker, and the line and column the marker stood at."""
    i = src.index(MARK)
    before = src[:i]
    line = before.count("\n") + 1
    col = i - (before.rfind("\n") + 1) + 1
    return src.replace(MARK, "", 1), line, col


def told(src: str, **kw) -> str:
    """Compile ``src`` (with a ``⟨`` where the error must point) and check the diagnostic's first three lines: its
    place, the source line and the caret under the marker. What the error says after ``FILE:LINE:COL: error:``."""
    text, line, col = located(src)
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(text, **kw)
    first, source, caret = str(info.value).splitlines()[:3]
    assert source == "  " + text.splitlines()[line - 1]
    assert caret == " " * (col + 1) + "^"
    prefix = f"<source>:{line}:{col}: error: "
    assert first.startswith(prefix), first
    return first[len(prefix):]


def told_in(base: str, old: str, new: str, **kw) -> str:
    """:func:`told` of ``base`` with ``old``, which it has once, replaced by ``new`` (which has the ``⟨``): the
    message tests' one way of writing a program wrong in one place."""
    assert base.count(old) == 1, f"{old!r} is not in the program once"
    return told(base.replace(old, new), **kw)


def refused(src: str, message: str, **kw) -> serq_frontend.CompileError:
    """Compile ``src`` (with a ``⟨`` where the error must point) and check the diagnostic."""
    text, line, col = located(src)
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(text, **kw)
    e = info.value
    first = str(e).splitlines()[0]
    assert message in first, f"{message!r} not in {first!r}"
    assert (e.line, e.col) == (line, col), f"{first}: expected {line}:{col}"
    assert first.startswith(f"<source>:{line}:{col}: error: ")
    return e


def normalise(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


SERQ = str(Path(sys.executable).parent / "serq")


def commands_refuse_and_leave(tmp_path: Path, data: bytes, first: str, commands=(("check",), ("fmt",))) -> None:
    """Each ``serq`` command of ``commands`` on a file of ``data`` (``p.sq``) exits 1 with ``first`` as
    its first line of error, no traceback, and leaves the file as it was."""
    p = tmp_path / "p.sq"
    p.write_bytes(data)
    for args in commands:
        r = subprocess.run([SERQ, *args, "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 1, (args, r.stdout)
        assert r.stderr.splitlines()[0] == first
        assert "Traceback" not in r.stderr
    assert p.read_bytes() == data


def hold_tail(horizon: str) -> str:
    """The rest of a program whose lets and pools a test writes: a stage `s`, an open workload, a session
    holding `kv (B)` around a run, and the run block of horizon ``horizon`` (test_known_defects_round9's
    `H`, test_hostile_round24_blocksize's 5)."""
    return ("stage s : fifo(1);\n\nworkload {\n  arrive poisson(1);\n}\n\nsession {\n  hold kv (B) {\n    run s (1);\n"
            f"  }}\n}}\n\nrun {{ horizon {horizon}; }}\n")
