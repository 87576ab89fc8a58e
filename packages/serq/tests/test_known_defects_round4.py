"""Known defects of the host's run settings (serq.loading.apply_run_overrides).

A run setting given from outside the program is named in a message as it was given: on the command line its
option (``--horizon 10``), through the Python API its argument (``horizon=10``). The words were the option's
whoever gave the value, so ``serq_sweep.sweep(horizon=10**5000)`` said ``--horizon (...)``. One function
makes them, told the name to use (``option_given``, the default, or ``argument_given``)."""

from __future__ import annotations

import pytest
import serq_frontend
from serq.errors import UserError
from serq.loading import apply_run_overrides, argument_given, option_given

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage f : fifo;
workload { arrive poisson(1); }
session { run f (1); }
run { horizon 10; }
"""


@pytest.fixture(scope="module")
def program():
    return serq_frontend.compile(source=PROGRAM)


def test_the_two_names_of_a_setting():
    assert (option_given("horizon", "10"), option_given("arrivals")) == ("--horizon 10", "--arrivals")
    assert (argument_given("horizon", "10"), argument_given("arrivals")) == ("horizon=10", "arrivals")


@pytest.mark.parametrize("kw, option, argument", [
    ({"horizon": -1}, "--horizon -1", "horizon=-1"),
    ({"warmup": float("nan")}, "--warmup nan", "warmup=nan"),
    ({"arrivals": 0}, "--arrivals 0", "arrivals=0"),
    ({"arrivals": 2**60}, "--arrivals", "arrivals"),
    ({"seed": -1}, "--seed -1", "seed=-1"),
])
def test_a_refused_setting_is_named_as_given(program, kw, option, argument):
    for given, head in ((None, option), (argument_given, argument)):
        with pytest.raises(UserError) as info:
            apply_run_overrides(program, **kw, **({} if given is None else {"given": given}))
        said = str(info.value)
        assert said.startswith(f"error: {head}: "), said
        # the other spelling is nowhere in it
        assert ("--" in said) == (given is None), said


def test_the_origin_a_run_time_error_names_is_as_given(program):
    for given, origin in ((option_given, "--arrivals 5"), (argument_given, "arrivals=5")):
        p = apply_run_overrides(program, arrivals=5, horizon=20.0, given=given)
        assert p.run.span.arrivals == origin
        assert p.run.span.horizon == ("--horizon 20" if given is option_given else "horizon=20")  # (a whole float is shown whole)
