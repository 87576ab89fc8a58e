"""``serq_sim.run``'s horizon and warmup are numbers checked at the call: an int beyond the doubles was an
OverflowError of ``math.isnan`` (and the message quotes such an int by its size, not its thousand digits)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

PROGRAM = "stage s : fifo;\nworkload { arrive poisson(0.5); }\nsession { run s (~exp(1)); }\n"


@pytest.mark.parametrize("kw, exc, said", [
    ({"horizon": 10**400}, ValueError, "horizon must be a positive number (inf: until no event is left), not an "
                                       "integer of 1329 bits"),
    ({"horizon": 10, "warmup": 10**400}, ValueError,
     "warmup must be a finite number at least 0, not an integer of 1329 bits"),
    # the wrong type: a TypeError (serq_sim.run's rule for every argument)
    ({"horizon": "10"}, TypeError, "horizon must be a positive number (inf: until no event is left), not '10'"),
    ({"horizon": 10, "warmup": True}, TypeError, "warmup must be a finite number at least 0, not True"),
])
def test_a_horizon_or_warmup_that_is_no_double_is_one_error(kw, exc, said):
    program = serq_frontend.compile(source=PROGRAM)
    with pytest.raises(exc) as info:
        serq_sim.run(program, **kw)
    assert type(info.value) is exc and str(info.value) == said


def test_an_int_horizon_within_the_doubles_runs():
    program = serq_frontend.compile(source=PROGRAM)
    assert "end=1000 " in repr(serq_sim.run(program, horizon=10**3, warmup=10))
