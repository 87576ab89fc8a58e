"""A run block's seed beyond 2**53 is the seed written, read from its digits (serq_frontend.link seed).

The language's numbers are doubles, which hold every whole number only up to 2**53: ``run { seed
9007199254740993; }`` ran the seed 9007199254740992 (silently another run than written; ``--seed
9007199254740993`` ran the one asked for), and ``seed 18446744073709551615;``, the largest seed the docs name
(2**64 - 1), was refused as "not 18446744073709551616", a number the user had not written. A seed that size
computed (a let, an expression) is refused at it: its value is not exact.
"""

from __future__ import annotations

import pytest
import serq_frontend

PROGRAM = """let big = 9007199254740993;
stage s : fifo;
workload {{ arrive poisson(1); }}
session {{ run s (~exp(2)); end; }}
run {{ horizon 10; seed {seed}; }}
"""


def _seed(text: str) -> int:
    return serq_frontend.compile(source=PROGRAM.format(seed=text)).run.seed


@pytest.mark.parametrize(("text", "seed"), [
    ("9007199254740993", 2**53 + 1), ("18446744073709551615", 2**64 - 1),
    ("1.8446744073709551615e19", 2**64 - 1), ("12345678901234567891", 12345678901234567891),
    ("9007199254740992", 2**53), ("7", 7), ("1e3", 1000),
])
def test_a_seed_is_the_number_written(text, seed):
    assert _seed(text) == seed


@pytest.mark.parametrize(("text", "said"), [
    ("18446744073709551616", "the seed is at most 2**64 - 1 (18446744073709551615), not 18446744073709551616"),
    ("1e40", "the seed is at most 2**64 - 1 (18446744073709551615), not 1e40"),
    ("9007199254740993.5", "the seed must be an integer of at least 0, not 9007199254740993.5"),
    ("big", "the seed is computed as 9007199254740992, beyond 2**53, where a number is not exact"),
    ("9007199254740993 + 0", "the seed is computed as 9007199254740992, beyond 2**53"),
])
def test_a_seed_not_written_exactly_is_refused_at_it(text, said):
    with pytest.raises(serq_frontend.CompileError) as e:
        _seed(text)
    first, quoted, caret = str(e.value).splitlines()
    assert first.startswith("<source>:5:24: error: " + said), first
    assert caret == "  " + " " * 23 + "^"
