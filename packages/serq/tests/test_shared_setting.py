"""serq.shared.SharedSetting: a process setting raised by calls that overlap (the recursion limit of
compiles, the collector's threshold of runs: serq_frontend.deeper_recursion, serq_sim.api.collector_for_runs).
The first to begin notes it, each raises it as it needs, the last to end puts back the first's note."""

from __future__ import annotations

import pytest
from serq.shared import SharedSetting

pytestmark = pytest.mark.timeout(30)


def _setting(value):
    box = [value]
    return box, SharedSetting(lambda: box[0], lambda v: box.__setitem__(0, v))


def test_overlapping_calls_put_back_what_was_there_before_the_first():
    box, s = _setting(10)
    a = s.raised(lambda v: 50 if v < 50 else None)
    b = s.raised(lambda v: 80 if v < 80 else None)
    a.__enter__()
    assert box[0] == 50
    b.__enter__()
    assert box[0] == 80
    a.__exit__(None, None, None)
    assert box[0] == 80  # still raised while b is under way (each putting back what it found lowered it)
    b.__exit__(None, None, None)
    assert box[0] == 10 and s.count == 0


def test_a_setting_already_high_enough_is_left_and_put_back_as_it_was():
    box, s = _setting(500)
    with s.raised(lambda v: 50 if v < 50 else None):
        assert box[0] == 500
    assert box[0] == 500


def test_an_exception_inside_puts_it_back():
    box, s = _setting(1)
    with pytest.raises(RuntimeError), s.raised(lambda v: 2):
        assert box[0] == 2
        raise RuntimeError
    assert box[0] == 1 and s.count == 0
