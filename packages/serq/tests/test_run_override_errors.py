"""A run setting the command line overrides (``--arrivals``, ``--warmup``, ``--horizon``) whose value is well
formed but does not fit the program is named by the one rule of the errors run settings cause
(serq_ir.rules.setting_message; serq_sim.errors.setting_error at the simulator's set-up): headed by the
setting the error concerns as it was given (an option as written, or the run block's setting, pointed at
with the line and a caret), the other options it involves after the message. serq.loading's own words said
"(--warmup, --horizon)" of a run given --horizon alone (naming an option never given, and not the run
block's warmup), and "arrivals N needs … (--arrivals)" where serq_sim.run said "arrivals=5: needs …".
Status 1 (serq.errors.UserError, not a usage error): the value is well formed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sim
from serq.errors import UsageError, UserError
from serq.loading import apply_run_overrides, load_program
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
OPEN = ("stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n"
        "run { horizon 100; warmup 10; }\n")
CLOSED = "stage s : fifo;\nworkload { arrive closed(2); }\nsession { run s (1); }\nrun { horizon 100; }\n"
RUN_LINE = "  run { horizon 100; warmup 10; }"
CARET = " " * RUN_LINE.index("warmup 10") + "^"  # under `warmup`, column 20 of the line
#: what works instead of a count of arrivals for CLOSED's `arrive closed(2)`, said after the refusal
CLOSED_2 = ("; `arrive closed(2)` starts a session again as each one ends, so no count of arrivals ends it: remove "
            "the count and bound the run by its horizon (`--horizon T`, `run { horizon T; }`), or run M sessions, "
            "2 at a time, as `arrive batch(M);` behind a pool of 2 slots (`pool slots { cap 2; }`, the session "
            "inside `hold slots (1) { … }`; `--horizon inf` runs them to the end), or keep the count and make the "
            "workload open (`arrive poisson(RATE);` with a horizon)")


def _refused(tmp_path, source, **overrides) -> str:
    (tmp_path / "p.sq").write_text(source)
    program = load_program(get_plugin_manager(), tmp_path / "p.sq")
    with pytest.raises(UserError) as e:
        apply_run_overrides(program, **overrides, name="p.sq")
    assert not isinstance(e.value, UsageError)  # a value that does not fit the program: status 1
    return str(e.value)


def test_a_horizon_below_the_run_blocks_warmup_points_at_the_warmup_and_names_the_horizon(tmp_path):
    got = _refused(tmp_path, OPEN, horizon=5.0)
    assert got == (f"{tmp_path / 'p.sq'}:4:20: error: run {{ warmup 10; }}: warmup 10 is not below the horizon 5 "
                   f"(--horizon 5)\n{RUN_LINE}\n{CARET}")


def test_a_warmup_option_heads_the_message_and_the_horizon_the_run_block_gave_is_not_an_option(tmp_path):
    assert _refused(tmp_path, OPEN, warmup=200.0) == \
        "p.sq: error: --warmup 200: warmup 200 is not below the horizon 100"
    assert _refused(tmp_path, OPEN, warmup=7.0, horizon=5.0) == \
        "p.sq: error: --warmup 7: warmup 7 is not below the horizon 5 (--horizon 5)"


def test_the_command_line_and_the_simulator_say_the_same_of_arrivals(tmp_path):
    assert _refused(tmp_path, CLOSED, arrivals=5) == \
        "p.sq: error: --arrivals 5: needs an open workload (arrive poisson or renewal)" + CLOSED_2
    program = load_program(get_plugin_manager(), tmp_path / "p.sq")
    with pytest.raises(serq_sim.SimError) as e:  # the same words, the setting named as it was given there
        serq_sim.run(program, arrivals=5)
    assert str(e.value).endswith("error: arrivals=5: needs an open workload (arrive poisson or renewal)" + CLOSED_2)


def test_serq_ir_exits_1_with_the_one_line(tmp_path):
    (tmp_path / "p.sq").write_text(CLOSED)
    r = subprocess.run([SERQ, "ir", "p.sq", "--arrivals", "5"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "p.sq: error: --arrivals 5: needs an open workload (arrive poisson or renewal)" + CLOSED_2 + "\n"


def test_what_the_refusal_of_arrivals_offers_instead_does_what_it_says(tmp_path):
    # CLOSED_2's other way: M = 5 sessions, 2 at a time, as a batch behind a pool of 2 slots, run to the end
    # with --horizon inf: each run of 1 s, so three waves, the last ending at t = ceil(5 / 2) * 1 = 3
    (tmp_path / "b.sq").write_text("pool slots { cap 2; }\nstage s : delay;\nworkload { arrive batch(5); }\n"
                                   "session { hold slots (1) { run s (1); } }\n")
    program = load_program(get_plugin_manager(), tmp_path / "b.sq")
    res = serq_sim.run(program, horizon=float("inf")).result
    assert (res.arrivals, res.ended, res.end) == (5, 5, 3.0)
