"""A run with no end (horizon inf, arrivals that never stop, no --max-events or --max-wall) is refused before it
runs (test_known_defects_round36); when the infinite horizon is the run block's, the refusal points at it, the
source line quoted with a caret, as a run setting's other errors do (serq_sim.errors.setting_error): where its
user changes it. A horizon of ``--horizon inf`` has no place in the source: the refusal names the file."""

from __future__ import annotations

PROGRAM = "stage s : delay;\nworkload { arrive renewal(1); }\nsession { run s (1); }\nrun { horizon inf; }\n"


def test_the_run_blocks_horizon_is_pointed_at(tmp_path, monkeypatch, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    r = serq_in_process("run", "p.sq", "--no-progress")
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0].startswith("p.sq:4:7: error: run { horizon inf; }: the run has no end: horizon inf and arrivals "
                               "that never stop (`arrive renewal`)")
    assert lines[1:] == ["  run { horizon inf; }", "        ^"]


def test_the_options_horizon_names_the_file(tmp_path, monkeypatch, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM.replace("horizon inf", "horizon 10"))
    monkeypatch.chdir(tmp_path)
    r = serq_in_process("run", "p.sq", "--no-progress", "--horizon", "inf")
    assert r.returncode == 1
    assert r.stderr.startswith("p.sq: error: the run has no end: horizon inf and arrivals that never stop")
    # bounded, each runs
    assert serq_in_process("run", "p.sq", "--no-progress", "--horizon", "inf", "--arrivals", "3").returncode == 0
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert serq_in_process("run", "p.sq", "--no-progress", "--max-events", "50").returncode == 3
