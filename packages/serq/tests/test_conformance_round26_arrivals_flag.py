"""program-reference.txt's `run` block: "arrivals | const, a positive integer" and "--horizon, --warmup, --seed
and --arrivals override them". The run block reads `arrivals 1e3;` as the literal 1000; the flag reads a whole
number in digits (serq.numbers.whole), and `--arrivals 1e3` said "'1e3' is not a whole number", which 1000 is.
It now says what the flag takes and what to write: "'1e3' is not a whole number in digits (write 1000)",
status 2, one line; a value that is not whole (`1.5`) or beyond what it names (`1e400`) is said as before."""

from __future__ import annotations

import json

import pytest
from host_helpers import run_serq

PROGRAM = """stage d : delay;
workload { arrive renewal(~det(1)); }
session { run d (0.5); }
run { horizon 1e9; ARRIVALS }
"""


def _program(tmp_path, arrivals: str = "") -> str:
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM.replace("ARRIVALS", arrivals))
    return str(p)


@pytest.mark.parametrize("value, shown", [("1e3", "1000"), ("1.0", "1"), ("2E1", "20")])
@pytest.mark.parametrize("opt", ["--arrivals", "--seed"])
def test_a_whole_value_in_another_notation_says_what_to_write(tmp_path, serq_in_process, opt, value, shown):
    # (the first value of each flag as a child process, the others on serq.cli.main in this process)
    serq = run_serq if value == "1e3" else serq_in_process
    r = serq("run", _program(tmp_path), opt, value)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.strip() == (f"error: invalid value for '{opt}': '{value}' is not a whole number in digits "
                                f"(write {shown}) (see 'serq run --help')")


@pytest.mark.parametrize("value", ["1.5", "1e400", "abc"])
def test_other_values_are_said_as_before(tmp_path, serq_in_process, value):
    serq = run_serq if value == "1.5" else serq_in_process  # (the first as a child process)
    r = serq("run", _program(tmp_path), "--arrivals", value)
    assert r.returncode == 2
    assert r.stderr.strip() == (f"error: invalid value for '--arrivals': '{value}' is not a whole number "
                                "(see 'serq run --help')")


def test_the_run_blocks_literal_and_the_flag_in_digits_are_one_run(tmp_path, serq_in_process):
    """Arrivals at 1, 2, …, 1000, each ending 0.5 later: the run ends at 1000.5 either way."""
    a = run_serq("run", _program(tmp_path, "arrivals 1e3;"), "--format", "json", "--no-progress")
    # (the flag's run on serq.cli.main in this process)
    b = serq_in_process("run", _program(tmp_path), "--arrivals", "1000", "--format", "json", "--no-progress")
    assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
    ra, rb = json.loads(a.stdout), json.loads(b.stdout)
    assert (ra["arrivals"], ra["end"]) == (rb["arrivals"], rb["end"]) == (1000, 1000.5)
