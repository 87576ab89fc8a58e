"""``serq_vllm.scenarios.compare(answer, expected)`` compares the fields the oracle gives, and says what is
of the wrong type or shape naming the argument: ``compare(None, …)`` was "'NoneType' object is not
subscriptable", an oracle's answer without ``preemptions`` (the fields it gives are compared, the others
not) a KeyError, and an answer without a field the oracle gives a KeyError or an AttributeError."""

from __future__ import annotations

import pytest
from serq_vllm.scenarios import compare

pytestmark = pytest.mark.timeout(60)

ANSWER = {"first": {"0": 1, "1": 3}, "done": {"0": 30, "1": 59}, "preempted": {"0": 0, "1": 1},
          "cached": {"0": 0, "1": 0}, "preemptions": 1}


def test_only_the_fields_the_oracle_gives_are_compared():
    assert compare(ANSWER, {"first": {"0": 1, "1": 3}}) == []
    assert compare(ANSWER, {"done": {"1": 58}}) == ["done[1]: serQ 59, vLLM 58"]
    assert compare(ANSWER, {"preemptions": 2}) == ["preemptions: serQ 1, vLLM 2"]


@pytest.mark.parametrize("answer, expected, kind, said", [
    (None, {"preemptions": 1}, TypeError, "answer must be a dict (run_scenario's answer, or the oracle's "
                                          ".out.json), not NoneType"),
    (ANSWER, "x", TypeError, "expected must be a dict (run_scenario's answer, or the oracle's .out.json), not str"),
    ({}, {"first": {"0": 1}}, ValueError, "answer['first'] must be an object of request indices, not NoneType"),
    (ANSWER, {"done": [30]}, ValueError, "expected['done'] must be an object of request indices, not list"),
    ({"first": {}}, {"preemptions": 0}, ValueError, "answer['preemptions'] is missing (run_scenario's answer "
                                                   "gives it)"),
])
def test_a_wrong_argument_is_said_naming_it(answer, expected, kind, said):
    with pytest.raises(kind) as info:
        compare(answer, expected)
    assert type(info.value) is kind and str(info.value) == said
