"""``--seeds`` says why a seed it refuses is none in the words ``--seed`` says it with.

``serq run --seed 1e3`` is told ``'1e3' is not a whole number in digits (write 1000)`` and ``--seed ' 3'`` that
``a number has no blanks around it: 3``; ``serq sweep --seeds 1e3`` and ``--seeds ' 3'`` (and ``serq compare``'s)
were told only ``'1e3' is not a seed or a range A..B of seeds``, the one reason the two readers share (Python's
int() reads ``1_0``, ``+1``) kept and the others dropped. Truth: what ``serq run --seed`` says of the same text,
and the seeds each text stands for written by hand."""

from __future__ import annotations

import pytest
from serq.errors import UsageError
from serq.numbers import BLANKS_HINT, WHOLE_HINT
from serq_sweep.axes import parse_seeds

PROGRAM = """stage svc : fifo;
workload { arrive poisson(1); }
session { run svc (1); end; }
run { horizon 1; }
"""


@pytest.fixture
def program(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    return str(p)


@pytest.mark.parametrize(("text", "why"), [
    ("1e3", "in digits: write 1000"),
    ("1.0", "in digits: write 1"),
    (" 3", f"{BLANKS_HINT}: 3"),
    ("3 ", f"{BLANKS_HINT}: 3"),
    ("1_0", WHOLE_HINT),
    ("+1", WHOLE_HINT),
])
def test_a_seed_is_told_what_seed_says(program, serq_in_process, text, why):
    run = serq_in_process("run", program, "--no-progress", "--seed", text)
    assert run.returncode == 2
    # the run's own words of the text: what --seeds must say too
    said = run.stderr.partition("is not a whole number")[2].strip()
    assert said.replace("in digits (write ", "(in digits: write ") == f"({why}) (see 'serq run --help')"
    for command in (("sweep", program), ("compare", program, "--set", "x=1,2")):
        r = serq_in_process(*command, "--no-progress", "--workers", "0", "--seeds", text)
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr == f"error: --seeds {text}: {text!r} is not a seed or a range A..B of seeds ({why})\n"


@pytest.mark.parametrize(("text", "why"), [
    ("2.0..4", "in digits: write 2 for '2.0'"),
    ("2..4e0", "in digits: write 4 for '4e0'"),
    ("2.. 4", f"{BLANKS_HINT}: 4 for ' 4'"),
    ("2..+4", WHOLE_HINT),
])
def test_an_end_of_a_range_is_named(text, why):
    with pytest.raises(UsageError) as e:
        parse_seeds(text)
    assert str(e.value) == f"error: --seeds {text}: {text!r} is not a seed or a range A..B of seeds ({why})"
    # what the hint asks for is taken: the range of 2, 3, 4
    assert parse_seeds("2..4") == [2, 3, 4]


@pytest.mark.parametrize("text", ["x", "1..x", "1e400", "1..2..3"])
def test_text_no_number_gets_no_hint(text):
    with pytest.raises(UsageError) as e:
        parse_seeds(text)
    assert str(e.value) == f"error: --seeds {text}: {text!r} is not a seed or a range A..B of seeds"


def test_a_list_keeps_its_blanks_rule():
    # blanks around a list's commas are the list's (docs/sweep.md): taken, not refused
    assert parse_seeds("1, 5 ,9") == [1, 5, 9]
