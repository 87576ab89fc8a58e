"""A name given twice in one ``--zip`` group is said so; it was "lambda is in two groups" of
``--zip lambda,mu,lambda``, one group. A name in two groups is said so, as before."""

from __future__ import annotations

import pytest
from serq.errors import UserError
from serq_sweep.axes import Axis, points

pytestmark = pytest.mark.timeout(60)

AXES = [Axis("lambda", "set", (0.1, 0.2)), Axis("mu", "set", (1.0, 2.0))]


@pytest.mark.parametrize("zipped, said", [
    ([["lambda", "mu", "lambda"]], "--zip: lambda is given twice in the group lambda,mu,lambda"),
    ([["lambda", "lambda"]], "--zip: lambda is given twice in the group lambda,lambda"),
    ([["lambda", "mu"], ["mu", "lambda"]], "--zip: mu is in two groups"),
])
def test_a_name_given_twice(zipped, said):
    with pytest.raises(UserError) as info:
        points(AXES, zipped)
    assert str(info.value) == f"error: {said}"


def test_a_group_zips_its_names():
    assert points(AXES, [["lambda", "mu"]]) == [{"lambda": 0.1, "mu": 1.0}, {"lambda": 0.2, "mu": 2.0}]
