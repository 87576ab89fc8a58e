"""The parts are separable: with only serq and serq-ir, IR files work and .sq files name the part.

The parts are switched off here by SERQ_DISABLED_PLUGINS, so a command that needs one says it is installed
but disabled, and how to enable it (serq.parts): it said "install serq-frontend" of a part that was
installed, and "no such command 'run'" of serq-sim's command."""

from __future__ import annotations

import json

from host_helpers import mm1_ir, run_serq

ONLY_IR = {"SERQ_DISABLED_PLUGINS": "frontend,sim,report,vllm,sweep"}


def test_only_host_and_ir_check_an_ir_file(tmp_path):
    r = run_serq("check", str(mm1_ir(tmp_path)), env=ONLY_IR)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("OK: 0 pool(s), 1 stage(s)")


def test_only_host_and_ir_name_the_frontend_for_source(tmp_path):
    prog = tmp_path / "prog.sq"
    prog.write_text("stage s : fifo;\n")
    r = run_serq("check", str(prog), env=ONLY_IR)
    assert r.returncode == 1
    assert r.stderr == (f"error: {prog}: no installed part loads .sq files; serq-frontend is installed but "
                        "disabled by SERQ_DISABLED_PLUGINS (take 'frontend' out of SERQ_DISABLED_PLUGINS to enable "
                        "it)\n")


def test_only_host_and_ir_have_no_run_command(tmp_path):
    r = run_serq("run", str(mm1_ir(tmp_path)), env=ONLY_IR)
    assert r.returncode == 2
    assert r.stderr == ("error: the command 'run' is serq-sim's, which is installed but disabled by "
                        "SERQ_DISABLED_PLUGINS (take 'sim' out of SERQ_DISABLED_PLUGINS to enable it) (see 'serq "
                        "--help')\n")
    r = run_serq("nosuch", env=ONLY_IR)  # a command no part has is unknown, as before
    assert r.returncode == 2 and r.stderr.startswith("error: no such command 'nosuch'")


def test_plugins_lists_only_what_is_enabled():
    r = run_serq("plugins", env=ONLY_IR)
    assert {p["name"] for p in json.loads(r.stdout)} == {"host", "ir"}


def test_without_ir_an_ir_file_names_serq_ir(tmp_path):
    r = run_serq("check", str(mm1_ir(tmp_path)), env={"SERQ_DISABLED_PLUGINS": "ir"})
    assert r.returncode == 1
    assert "serq-ir is installed but disabled by SERQ_DISABLED_PLUGINS (take 'ir' out of" in r.stderr


WITH_FRONTEND = {"SERQ_DISABLED_PLUGINS": "sim,report,vllm"}
WITHOUT_REPORT = {"SERQ_DISABLED_PLUGINS": "report,vllm"}
PROGRAM = """stage s : fifo;
workload { arrive poisson(0.5); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 100; }
"""


def test_with_the_frontend_source_checks_but_nothing_runs(tmp_path):
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM)
    r = run_serq("check", str(prog), env=WITH_FRONTEND)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "OK: 0 pool(s), 1 stage(s), 5 attribute(s), 1 block(s)\n"
    assert run_serq("ir", str(prog), env=WITH_FRONTEND).returncode == 0
    r = run_serq("run", str(prog), env=WITH_FRONTEND)
    assert r.returncode == 2 and "the command 'run' is serq-sim's, which is installed but disabled" in r.stderr
    r = run_serq("vllm", "scenarios", env=WITH_FRONTEND)
    assert r.returncode == 2 and "the command 'vllm' is serq-vllm's, which is installed but disabled by " \
        "SERQ_DISABLED_PLUGINS (take 'vllm' out of" in r.stderr
    # a plugin's stage kind, with serq-sim off: the same words
    prog.write_text("stage s : @batch(4);\n")
    r = run_serq("check", str(prog), env=WITH_FRONTEND)
    assert r.returncode == 1 and "serq-sim owns the hook serq_sim_register_stage_kinds; serq-sim is installed " \
        "but disabled by SERQ_DISABLED_PLUGINS (take 'sim' out of SERQ_DISABLED_PLUGINS to enable it)" in r.stderr


def test_the_simulator_without_reports_names_serq_report(tmp_path):
    prog = tmp_path / "prog.sq"
    prog.write_text(PROGRAM)
    r = run_serq("run", str(prog), env=WITHOUT_REPORT)
    assert r.returncode == 1
    assert r.stderr == ("error: no report format is installed; serq-report is installed but disabled by "
                        "SERQ_DISABLED_PLUGINS (take 'report' out of SERQ_DISABLED_PLUGINS to enable it)\n")
