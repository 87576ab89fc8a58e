"""A count of arrivals is a whole number from 1 to 2**53 - 1 (serq_ir.rules.MAX_ARRIVALS, one rule for the run
block, an IR file, ``--arrivals`` and ``serq_sim.run``), below 2**53, where a double tells whole numbers apart.

No bound was held: ``serq_sim.run(p, arrivals=10**5000)`` (and ``serq_sweep.sweep(..., arrivals=10**5000)``)
ran to the horizon and then failed in Python's words, ``Exceeds the limit (4300 digits) for integer string
conversion``, as the message that the arrivals were not reached quoted the count; one of 300 digits was
quoted in every digit. ``run { arrivals 9007199254740993; }`` ran 2**53 arrivals, silently another count
than written (the run block's numbers are doubles), and an IR file's ``"arrivals": 10**30`` passed ``serq
check``. Each is now refused before anything runs, the count shown as a message shows a number.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq.errors import UserError

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { run s (0.5); end; }
run { horizon 100000; seed 1; }
"""
RULE = "a whole number from 1 to 2**53 - 1 (9007199254740991, where a double tells whole numbers apart)"


@pytest.fixture(scope="module")
def program():
    return serq_frontend.compile(source=PROGRAM)


@pytest.mark.parametrize("n, shown", [
    (10**5000, "an integer of 16610 bits"),  # 5000 * log2(10) = 16609.6: 16610 bits
    (10**300, "1e+300"),
    (2**53, "9007199254740992"),
], ids=["10**5000", "10**300", "2**53"])
def test_the_api_refuses_a_count_beyond_the_bound_before_the_run(program, n, shown):
    started = time.process_time()
    with pytest.raises(ValueError) as info:
        serq_sim.run(program, arrivals=n)
    assert str(info.value) == f"arrivals must be {RULE}, not {shown}"
    assert time.process_time() - started < 2  # (the run of 100 000 s was simulated before, then failed)


def test_the_largest_count_runs(program):
    report = serq_sim.run(program, arrivals=2**53 - 1, max_events=10)
    assert report.partial == "max-events" and report.result.events == 10


def test_a_sweep_refuses_it_in_one_message(tmp_path):
    import serq_sweep

    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError) as info:
        serq_sweep.sweep(str(tmp_path / "p.sq"), arrivals=10**5000, workers=0, progress=False)
    # the API's argument named as given to it (serq.loading.argument_given), not the command line's --arrivals
    assert str(info.value) == f"error: arrivals: arrivals is {RULE}, not an integer of 16610 bits"


@pytest.mark.parametrize("written, shown", [("1e30", "1e+30"), ("9007199254740993", "9007199254740992"),
                                            ("0.5", "0.5"), ("0", "0")])
def test_the_run_block_refuses_it_at_the_count(written, shown):
    from serq_frontend.diagnostics import CompileError

    source = PROGRAM.replace("seed 1;", f"seed 1; arrivals {written};")
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=source)
    line = source.splitlines()[3]
    col = line.index(f"arrivals {written}") + len("arrivals ") + 1
    assert str(info.value) == (f"<source>:4:{col}: error: arrivals is {RULE}, not {shown}\n  {line}\n  "
                               + " " * (col - 1) + "^")


def test_an_ir_file_beyond_the_bound_is_refused_by_check(tmp_path, program):
    doc = json.loads(serq_ir.encode(program))
    doc["run"]["arrivals"] = 10**30
    (tmp_path / "p.ir.json").write_text(json.dumps(doc, indent=1))
    r = subprocess.run([sys.executable, "-m", "serq", "check", "p.ir.json"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    assert r.returncode == 1
    assert r.stderr.splitlines()[0].endswith(f": error: arrivals is {RULE}, not 1e+30 - at '$.run.arrivals'")


def test_the_option_refuses_it_as_a_usage_error(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    for n in ("9007199254740992", str(10**400)):
        r = subprocess.run([sys.executable, "-m", "serq", "run", "p.sq", "--arrivals", n], capture_output=True,
                           text=True, cwd=tmp_path, timeout=60)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert "is not a positive whole number of arrivals below 2**53 (see 'serq run --help')" in r.stderr
