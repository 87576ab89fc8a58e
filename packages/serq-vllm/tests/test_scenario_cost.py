"""What `serq vllm scenario` costs before its run: nothing per turn of a session."""

from __future__ import annotations

from serq.plugins import get_plugin_manager
from serq_vllm.scenarios import scenario_program


def scenario(turns: int, sessions: int = 12) -> dict:
    requests = []
    for s in range(sessions):
        for t in range(turns):
            r = {"session": s, "turn": t, "prompt": 10 + 20 * t, "out": 5}
            if t == 0:
                r["arrive"] = s
            else:
                r["think"] = 1
            requests.append(r)
    return {"budget": 64, "max_seqs": 8, "block_size": 16, "num_blocks": 400, "prefix_caching": True,
            "requests": requests}


def python_calls(fn) -> int:
    """How many calls (and generator resumptions) of serQ's own Python code ``fn()`` makes; the garbage
    collector is held off meanwhile, so no finalizer of another test's objects is counted."""
    import gc
    import sys

    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call" and str(frame.f_globals.get("__name__", "")).startswith("serq"):
            count += 1

    enabled = gc.isenabled()
    gc.disable()
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
        if enabled:
            gc.enable()
    return count


def test_checking_and_setting_up_a_scenario_costs_nothing_per_turn():
    # Every pass over the program before the run (serq_ir's checks, the engine's set-up: the record
    # columns, the observables read, the ITL recorder's send slot) walked the sessions' presets value by
    # value; a turn now costs no Python call there, so 12 sessions of 30 turns cost what 12 of one do.
    from serq_ir.validate import validate
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    pm = get_plugin_manager()
    short, _ = scenario_program(scenario(1), pm)
    long, _ = scenario_program(scenario(30), pm)
    assert len(long.workload.presets) == len(short.workload.presets) == 12
    assert sum(len(p.turns) for p in long.workload.presets) == 360
    reg = registries(pm)
    validate(short), Simulation(short, reg)  # what the first ones import is not counted
    assert python_calls(lambda: validate(long)) == python_calls(lambda: validate(short))
    assert python_calls(lambda: Simulation(long, reg)) == python_calls(lambda: Simulation(short, reg))


def test_the_command_checks_a_scenario_once(tmp_path, monkeypatch, capsys):
    # read_scenario checks what it read; `serq vllm scenario` runs it without checking it again (a
    # 1 000-request scenario's check is a few milliseconds)
    import json

    import pytest
    import serq_vllm.scenarios as scenarios
    from serq.cli import main

    path = tmp_path / "sc.json"
    path.write_text(json.dumps(scenario(turns=2, sessions=2)))
    checked = []
    real = scenarios.check_scenario
    monkeypatch.setattr(scenarios, "check_scenario", lambda sc: checked.append(sc) or real(sc))
    with pytest.raises(SystemExit) as e:
        main(["vllm", "scenario", str(path)])
    assert e.value.code == 0 and len(checked) == 1
    assert json.loads(capsys.readouterr().out) == scenarios.run_scenario(json.loads(path.read_text()))
    assert len(checked) == 2  # the Python API checks what it is given
