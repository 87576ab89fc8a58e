"""A message about a --set or --def override names it as the caller gave it: ``--set lam`` / ``--def f``
on the command line (serq run, serq check, serq sweep), ``sets['lam']`` / ``defs['f']`` from the Python API
(serq_frontend.compile, serq_frontend.cache.load, serq_sweep.sweep): one rule, serq.loading's option_given
and argument_given, which the compile's context carries (serq_frontend.context.Context.option_name). The
frontend's API said ``--set lam`` to a caller who gave ``sets={"lam": …}``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_frontend.cache as cache
import serq_sweep
from serq.errors import UserError
from serq_frontend import CompileError

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 1;
def svc() = 1;
stage s : delay;
workload { arrive poisson(lam); }
session { run s (svc()); }
run { horizon 5; seed 1; }
"""


@pytest.fixture
def prog(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    return p


@pytest.mark.parametrize("compile_", [serq_frontend.compile, cache.load], ids=["compile", "cache.load"])
def test_the_api_names_its_arguments(prog, compile_):
    with pytest.raises(CompileError) as e:
        compile_(prog, sets={"lan": 2.0})
    assert f"{prog}: error: sets['lan']: the program has no `let lan` (did you mean `lam`?)" == str(e.value)
    with pytest.raises(CompileError) as e:
        compile_(prog, defs={"scv": "2"})
    assert str(e.value) == f"{prog}: error: defs['scv']: the program has no expression definition `scv` (did you mean `svc`?)"
    with pytest.raises(CompileError) as e:
        compile_(prog, defs={"svc": "1 +"})
    assert str(e.value).splitlines()[0] == "defs['svc']:1:4: error: unexpected end of the file: `1 +` at 1:1 is not " \
        "finished, an operand was to follow `+`"


def test_a_sweep_from_python_names_its_arguments(prog):
    with pytest.raises(UserError) as e:
        serq_sweep.sweep(str(prog), sets={"lan": [1, 2]}, workers=0, progress=False)
    assert "sets['lan']: the program has no `let lan`" in str(e.value) and "--set" not in str(e.value)


@pytest.mark.parametrize(("args", "said"), [
    (["run", "p.sq", "--set", "lan=2"], "p.sq: error: --set lan: the program has no `let lan` (did you mean `lam`?)"),
    (["check", "p.sq", "--def", "scv=2"],
     "p.sq: error: --def scv: the program has no expression definition `scv` (did you mean `svc`?)"),
    (["run", "p.sq", "--def", "svc=1 +"], "--def svc:1:4: error: unexpected end of the file: `1 +` at 1:1 is not "
     "finished, an operand was to follow `+`"),
    (["sweep", "p.sq", "--set", "lan=1,2", "--workers", "0"],
     "p.sq: error: --set lan: the program has no `let lan` (did you mean `lam`?) (at the sweep's point lan=1)"),
])
def test_the_commands_name_their_options(prog, args, said):
    r = subprocess.run([SERQ, *args, *([] if args[0] == "check" else ["--no-progress"])], capture_output=True, text=True, cwd=prog.parent, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode != 0
    assert r.stderr.splitlines()[0] == said, r.stderr
