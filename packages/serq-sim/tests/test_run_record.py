"""The JSON report of `serq run` says what it is: the serq version, the program's path as given, the
SHA-256 of its bytes and of the IR simulated, and every --set and --def."""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version

import pytest
import serq_frontend
import serq_sim
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
run { horizon 50; }
"""


def serq(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main([*argv, "--no-progress"] if argv[0] == "run" else argv)
    out = capsys.readouterr()
    assert info.value.code == 0, out.err
    return out.out


def run_json(capsys, *argv):
    return json.loads(serq(["run", *argv, "--json"], capsys))


def test_the_report_records_what_was_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SERQ_COMPILE_CACHE", "0")
    f = tmp_path / "p.sq"
    f.write_text(PROG)
    monkeypatch.chdir(tmp_path)
    r = run_json(capsys, "p.sq", "--set", "lam=0.25", "--def", "service=~det(1)", "--seed", "3")
    assert r["report_version"] == 7
    assert r["serq_version"] == version("serq")
    info = r["program"]
    assert info["path"] == "p.sq"
    assert info["sha256"] == hashlib.sha256(PROG.encode()).hexdigest()
    assert info["sets"] == {"lam": 0.25} and info["defs"] == {"service": "~det(1)"}
    assert list(r)[:3] == ["report_version", "serq_version", "program"]

    # the IR's hash: the program as simulated, wherever it came from and however it is laid out
    g = tmp_path / "other.sq"
    g.write_text("// the same program, laid out otherwise\n" + PROG.replace("  ", "    "))
    same = run_json(capsys, str(g), "--set", "lam=0.25", "--def", "service=~det(1)", "--seed", "3")
    assert same["program"]["sha256"] != info["sha256"] and same["program"]["path"] == str(g)
    assert same["program"]["ir_sha256"] == info["ir_sha256"]
    # … and an IR file of it, compiled with the same --set and --def
    (tmp_path / "p.ir.json").write_text(serq(["ir", "p.sq", "--set", "lam=0.25", "--def", "service=~det(1)"],
                                             capsys))
    from_ir = run_json(capsys, "p.ir.json", "--seed", "3")
    assert from_ir["program"]["ir_sha256"] == info["ir_sha256"]
    assert from_ir["program"]["sets"] == {} and from_ir["program"]["defs"] == {}
    # another --set, another --def or another seed is another IR
    for argv in (["--set", "lam=0.3", "--def", "service=~det(1)", "--seed", "3"],
                 ["--set", "lam=0.25", "--def", "service=~det(2)", "--seed", "3"],
                 ["--set", "lam=0.25", "--def", "service=~det(1)", "--seed", "4"]):
        assert run_json(capsys, "p.sq", *argv)["program"]["ir_sha256"] != info["ir_sha256"]
    # nothing but the record differs from the same run's report
    del r["program"], same["program"], from_ir["program"]
    assert r == same == from_ir


def test_a_report_of_the_api_has_no_program_record():
    report = serq_sim.run(serq_frontend.compile(source=PROG), seed=1)
    assert report.result.program is None
    assert report.result.serq_version == version("serq")
