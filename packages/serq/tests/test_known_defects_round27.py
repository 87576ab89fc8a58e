"""Known defects, round 27 (serq)."""

from __future__ import annotations

import pytest
from serq.errors import number_of


# 7. a count's word in the number it takes, where messages wrote "point(s)" and "session(s)": one function
@pytest.mark.parametrize("n, words", [(0, ("points", "sessions wait")), (1, ("point", "session waits")),
                                      (1.0, ("point", "session waits")), (2, ("points", "sessions wait")),
                                      (0.5, ("points", "sessions wait"))])
def test_the_word_after_a_count(n, words):
    assert (number_of(n, "point"), number_of(n, "session waits", "sessions wait")) == words
