"""Mutated examples (tokens deleted, duplicated, swapped; random bytes): compile raises nothing but the
diagnostic, and the CLI never prints a traceback."""

from __future__ import annotations

import re

import pytest
import serq_frontend
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqhelpers import EXAMPLES, LIB, _pm

SOURCES = [p.read_text() for p in sorted(EXAMPLES.rglob("*.sq")) + sorted(LIB.glob("*.sq"))] or [
    "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (~exp(1)); }\n"]
TOKEN = re.compile(r"//[^\n]*|\"[^\"\n]*\"|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|[A-Za-z_]\w*|<=|>=|==|!=|&&|\|\||\S")


def tokens(src: str) -> list[str]:
    return TOKEN.findall(src)


@st.composite
def mutated(draw) -> str:
    src = draw(st.sampled_from(SOURCES))
    toks = tokens(src)
    for _ in range(draw(st.integers(1, 3))):
        if not toks:
            break
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "bytes", "replace"]))
        i = draw(st.integers(0, len(toks) - 1))
        if op == "delete":
            del toks[i]
        elif op == "duplicate":
            toks.insert(i, toks[i])
        elif op == "swap":
            j = draw(st.integers(0, len(toks) - 1))
            toks[i], toks[j] = toks[j], toks[i]
        elif op == "replace":
            toks[i] = draw(st.sampled_from(toks))
        else:
            raw = draw(st.binary(min_size=1, max_size=4)).decode("latin-1")
            toks.insert(i, raw)
    return " ".join(toks)


def check(src: str) -> None:
    try:
        serq_frontend.compile(source=src, pm=_pm())
    except serq_frontend.CompileError as e:
        assert ": error:" in str(e).splitlines()[0] or str(e).startswith("<source>: error:")


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_compile_raises_only_the_diagnostic(src):
    check(src)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(src=mutated())
def test_the_cli_never_prints_a_traceback(src, tmp_path_factory):
    from serq.cli import main

    d = tmp_path_factory.mktemp("m")
    f = d / "p.sq"
    f.write_text(src, encoding="utf-8")
    import contextlib
    import io
    import os

    err = io.StringIO()
    old = os.environ.get("SERQ_DISABLED_PLUGINS")
    os.environ["SERQ_DISABLED_PLUGINS"] = "sim,report"
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            with pytest.raises(SystemExit) as info:
                main(["check", str(f)])
    finally:
        if old is None:
            del os.environ["SERQ_DISABLED_PLUGINS"]
        else:
            os.environ["SERQ_DISABLED_PLUGINS"] = old
    assert info.value.code in (0, 1)
    assert "Traceback" not in err.getvalue()
