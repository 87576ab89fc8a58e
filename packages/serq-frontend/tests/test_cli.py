"""The commands: check, ir (with --set, --def, --seed …), fmt, ast; errors are one diagnostic, exit 1."""

from __future__ import annotations

import json

import pytest
from serq.cli import main

PROG = """let lam = 0.5;
def service() = ~exp(1);
stage svc : fifo;
workload { arrive poisson(lam); }
session {
  set t0 = now;
  run svc (service());
  observe response = now - t0;
}
run { horizon 100; }
"""


@pytest.fixture(autouse=True)
def _only_our_parts(monkeypatch):
    # the commands come from the installed parts; keep the run to the host and the frontend
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", "sim,report")


def run(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


def test_check_prints_the_summary(tmp_path, capsys):
    f = tmp_path / "p.sq"
    f.write_text(PROG)
    code, out, err = run(["check", str(f)], capsys)
    assert code == 0 and out.strip() == "OK: 0 pool(s), 1 stage(s), 5 attribute(s), 1 block(s)"


def test_ir_with_overrides(tmp_path, capsys):
    f = tmp_path / "p.sq"
    f.write_text(PROG)
    code, out, err = run(["ir", str(f), "--set", "lam=2", "--def", "service=~det(3)", "--seed", "9",
                          "--horizon", "50", "--no-spans"], capsys)
    assert code == 0, err
    ir = json.loads(out)
    assert ir["workload"]["arrive"]["rate"] == 2.0
    assert ir["session"][1]["work"] == {"kind": "Draw", "dist": "det", "args": [{"kind": "Num", "value": 3.0}]}
    assert ir["run"]["seed"] == 9 and ir["run"]["horizon"] == 50.0
    assert ir["source"] == str(f)


def test_errors_are_one_diagnostic_and_exit_1(tmp_path, capsys):
    f = tmp_path / "p.sq"
    f.write_text(PROG.replace("run svc", "run svx"))
    code, out, err = run(["check", str(f)], capsys)
    assert code == 1
    assert err.splitlines()[0] == f"{f}:7:7: error: unknown stage `svx` (did you mean `svc`?)"
    assert "Traceback" not in err
    code, out, err = run(["check", str(f).replace("p.sq", "p.sq"), "--set", "nope=1"], capsys)
    assert code == 1 and "Traceback" not in err


def test_fmt_and_check(tmp_path, capsys):
    f = tmp_path / "p.sq"
    f.write_text("stage  s:fifo;\nsession{run s(1+2);   // go\n}\n")
    code, out, err = run(["fmt", "--check", str(f)], capsys)
    assert code == 1 and out.strip() == f"would reformat {f}"
    code, out, err = run(["fmt", str(f)], capsys)
    assert code == 0
    assert f.read_text() == "stage s : fifo;\nsession {\n  run s(1 + 2);  // go\n}\n" or "// go" in f.read_text()
    code, out, err = run(["fmt", "--check", str(f)], capsys)
    assert code == 0


def test_ast_command(tmp_path, capsys):
    f = tmp_path / "p.sq"
    f.write_text(PROG)
    code, out, err = run(["ast", str(f)], capsys)
    assert code == 0
    items = json.loads(out)
    assert items[0] == {"node": "Let", "name": "lam", "value": {"node": "Num", "value": 0.5, "pos": "1:11"},
                        "pos": "1:1", "name_pos": "1:5"}
    code, out, err = run(["ast", "--desugar", str(f)], capsys)
    assert code == 0 and "DefItem" not in out and "service" not in out
