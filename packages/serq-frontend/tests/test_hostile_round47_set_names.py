"""``--set NAME`` of a name that is a pool, a stage, a queue or a gauge says what the name is.

``--set`` gives a ``let`` its value. Given the name of a stage (``serq run mg1.sq --set svc=1``) it said
``the program has no `let svc` (did you mean `service`, an expression definition given with --def
service?)``, a hint that led away from the stage, and of a pool (``--set kv=100``) no word beyond that there
is no such let. It now says what the name is, and how such a declaration's setting is given: through a let
it reads. A name of no declaration keeps the hint of a close one, as before.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """def service() = ~exp(1);

let c = 1;

pool kv { cap 10; }
stage svc : fifo(c);
stage d : delay;

gauge level = busy(svc);

workload {
  arrive poisson(0.5);
}

session {
  hold kv (1) {
    run svc (service());
  };
  end;
}

run { horizon 10; seed 1; }
"""


def _said(kind: str, name: str, example: str) -> str:
    return (f"error: --set {name}: the program has no `let {name}`; `{name}` is a {kind}, not a `let`, whose value "
            f"alone is given so: a {kind}'s setting is given through a let it reads ({example})")


@pytest.mark.parametrize("name, words", [
    ("kv", _said("pool", "kv", "`let blocks = 100;` and `cap blocks;`")),
    ("svc", _said("stage", "svc", "`let c = 2;` and `fifo(c)`")),
    ("level", "error: --set level: the program has no `let level`; `level` is a gauge, not a `let`, whose value "
              "alone is given so: a gauge is measured"),
    # (no declaration of the name: the hint of a close one, as before)
    ("servic", "error: --set servic: the program has no `let servic` (did you mean `service`, an expression "
               "definition given with --def service?)"),
])
def test_the_command_line_says_what_the_name_is(tmp_path, serq_in_process, monkeypatch, name, words):
    # the pool's case as `serq` child processes, as a shell runs them; the others call serq.cli.main in the
    # test's process (serq_in_process), in the same folder, which says the same
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    for command in (["run", "p.sq", "--no-progress"], ["sweep", "p.sq", "--no-progress", "--workers", "0"]):
        if name == "kv":
            r = subprocess.run([SERQ, *command, "--set", f"{name}=1"], cwd=tmp_path, capture_output=True,
                               text=True, timeout=50)
        else:
            r = serq_in_process(*command, "--set", f"{name}=1")
        assert (r.returncode, r.stdout) == (1, ""), r.stderr
        point = f" (at the sweep's point {name}=1)" if command[0] == "sweep" else ""
        assert r.stderr == f"p.sq: {words}{point}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_a_queue_of_a_shipped_program():
    folder = Path(__file__).resolve().parents[3] / "examples" / "pd-disaggregation"
    r = subprocess.run([SERQ, "check", "llmd_nixl_pull.sq", "--set", "gw=1"], cwd=folder, capture_output=True,
                       text=True, timeout=50)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f"llmd_nixl_pull.sq: {_said('queue', 'gw', '`let n = 2;` and `queue q[n]`')}\n"


def test_the_api_names_its_keyword(tmp_path):
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=PROGRAM, sets={"svc": 2})
    assert str(e.value).endswith("sets['svc']: the program has no `let svc`; `svc` is a stage, not a `let`, whose "
                                 "value alone is given so: a stage's setting is given through a let it reads (`let c "
                                 "= 2;` and `fifo(c)`)")


def test_the_program_runs_with_its_let_set(tmp_path):
    # (the way the message gives: the stage's setting through its let)
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "--set", "c=2", "--json"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=50)
    assert r.returncode == 0, r.stderr
