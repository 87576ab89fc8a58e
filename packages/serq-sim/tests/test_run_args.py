"""``serq_sim.run``'s arguments are checked before anything is built, and ``--trace`` on a program with no
trace to replace is refused rather than ignored."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import serq_sim

SRC = "workload { arrive poisson(1); }\nsession { }\nrun { horizon 50; }\n"


def _program():
    import serq_frontend

    return serq_frontend.compile(source=SRC)


# one rule: the wrong type is a TypeError, a value of the right type out of range a ValueError
@pytest.mark.parametrize(("kw", "exc", "says"), [
    ({"horizon": "x"}, TypeError, "horizon must be a positive number"),
    ({"horizon": [1]}, TypeError, "horizon must be a positive number"),
    ({"horizon": math.nan}, ValueError, "horizon must be a positive number"),
    ({"horizon": -1.0}, ValueError, "horizon must be a positive number"),
    ({"horizon": True}, TypeError, "horizon must be a positive number"),
    ({"warmup": -1.0}, ValueError, "warmup must be a finite number at least 0"),  # ran as if 0
    ({"warmup": math.inf}, ValueError, "warmup must be a finite number at least 0"),
    ({"warmup": "5"}, TypeError, "warmup must be a finite number at least 0"),
    ({"arrivals": 1.5}, TypeError, "arrivals must be a positive integer"),  # ran as "arrivals 1.5"
    ({"arrivals": True}, TypeError, "arrivals must be a positive integer"),  # ran as 1 arrival
    ({"arrivals": "3"}, TypeError, "arrivals must be a positive integer"),
    ({"arrivals": 0}, ValueError, "arrivals must be a positive integer, not 0"),
    # a bad seed was a SimError (the class of a run's errors) raised by the run's set-up
    ({"seed": -1}, ValueError, "seed must be an integer from 0 to 2**64 - 1 (18446744073709551615), not -1"),
    ({"seed": 2**64}, ValueError, "seed must be an integer from 0 to 2**64 - 1 (18446744073709551615), not an "
                                  "integer of 65 bits"),
    ({"seed": "7"}, TypeError, "seed must be an integer from 0 to 2**64 - 1 (18446744073709551615), not '7'"),
    ({"seed": 7.0}, TypeError, "seed must be an integer from 0 to 2**64 - 1 (18446744073709551615), not 7.0"),
    ({"seed": False}, TypeError, "seed must be an integer from 0 to 2**64 - 1 (18446744073709551615), not False"),
    ({"max_events": "5"}, TypeError, "max_events must be a positive integer, not '5'"),
    ({"max_events": 0}, ValueError, "max_events must be a positive integer, not 0"),
    ({"max_wall": "1"}, TypeError, "max_wall must be a positive, finite number of seconds, not '1'"),
    ({"max_wall": -1}, ValueError, "max_wall must be a positive, finite number of seconds, not -1"),
    ({"trace": 5}, TypeError, "trace must be a path"),
    ({"trace": ""}, ValueError, "trace must name a file, not the empty path"),  # ran the workload's own trace
])
def test_a_bad_argument_is_one_clear_exception(kw, exc, says):
    with pytest.raises(exc) as e:
        serq_sim.run(_program(), **kw)
    assert type(e.value) is exc and says in str(e.value)


@pytest.mark.parametrize("bad", [None, "prog.sq", {"run": {}}, 5])
def test_a_program_that_is_not_a_program(bad):
    # was AttributeError: 'str' object has no attribute 'source'
    with pytest.raises(TypeError, match=r"program must be a serq_ir.Program .*, not " + type(bad).__name__):
        serq_sim.run(bad)


def test_good_arguments_still_run():
    r = serq_sim.run(_program(), horizon=20, warmup=0, arrivals=5, seed=3)
    assert r.result.arrivals == 5


def test_a_trace_for_a_program_without_one_is_refused(tmp_path):
    # --trace FILE on a program whose workload reads no trace ran the program as if it were not given
    with pytest.raises(serq_sim.SimError, match="the program's workload reads no trace"):
        serq_sim.run(_program(), trace=str(tmp_path / "t.csv"), horizon=5)
    prog = tmp_path / "p.sq"
    prog.write_text(SRC)
    out = tmp_path / "r.txt"
    r = subprocess.run([sys.executable, "-c", "from serq.cli import main; main()", "run", str(prog),
                        "--trace", str(tmp_path / "nope.csv"), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"--trace {tmp_path / 'nope.csv'}: the program's workload reads no trace" in r.stderr
    assert not out.exists()


@pytest.mark.parametrize("name", ["", "xml"])
def test_a_report_format_that_is_not_installed_is_refused(tmp_path, name):
    # --format "" named no format and was taken as the default, text
    prog = tmp_path / "p.sq"
    prog.write_text(SRC)
    r = subprocess.run([sys.executable, "-c", "from serq.cli import main; main()", "run", str(prog),
                        "--format", name], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == ""  # a usage error
    shown = name or "''"
    assert r.stderr == f"error: --format {shown}: unknown report format (installed: text, json, csv)\n"
