"""A constant that must be above 0 and finite says so: a pool's `block` and `arrive poisson`'s rate. `block
inf` was refused as "must be a positive number", yet inf is positive: the message says what is wanted, a
positive, finite number (of units; of arrivals per second), and what was given. What is accepted is
unchanged: a `cap` of inf and `fifo(inf)` are legal (docs/language.md), a finite block and rate too."""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, refused

pytestmark = pytest.mark.timeout(60)

TAIL = "stage svc : fifo;\nsession { run svc (1); }\n"


@pytest.mark.parametrize(("value", "shown"), [("inf", "inf"), ("0", "0"), ("-2", "-2"), ("1 - 1", "0")])
def test_a_block_that_is_not_positive_and_finite(value, shown):
    refused(f"pool kv {{ cap 100; block ⟨{value}; }}\nworkload {{ arrive poisson(1); }}\n" + TAIL,
            f"the block of pool `kv` must be a positive, finite number of units, not {shown}")


@pytest.mark.parametrize(("value", "shown"), [("inf", "inf"), ("0", "0"), ("-1", "-1")])
def test_an_arrival_rate_that_is_not_positive_and_finite(value, shown):
    refused(f"workload {{ arrive poisson(⟨{value}); }}\n" + TAIL,
            f"the arrival rate must be a positive, finite number of arrivals per second, not {shown}")


def test_what_was_taken_is_taken_still():
    p = compile_src("pool kv { cap inf; block 16; }\nstage w : fifo(inf);\nworkload { arrive poisson(0.5); }\n"
                    + TAIL)
    assert p.pools[0].cap == "inf" and p.pools[0].block == 16.0
    assert p.workload.arrive.rate == 0.5
