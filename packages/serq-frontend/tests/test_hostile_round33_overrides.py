"""``sets=`` and ``defs=`` of the Python API are None or a mapping, whatever the value's truth.

``sets or {}`` took any empty value for none (``sets=""``, ``sets=0``, ``sets=[]``, ``defs=False`` compiled
without a word) and asked a DataFrame, a Series or an array its truth: pandas' and numpy's own ValueError
("The truth value of a DataFrame is ambiguous"), where a mapping of overrides is what is wanted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import serq_frontend
from serq_frontend import cache

MG1 = str(Path(__file__).resolve().parents[3] / "examples" / "single-turn" / "mg1.sq")
SOURCE = Path(MG1).read_text()

CALLS = {
    "compile": lambda **kw: serq_frontend.compile(MG1, **kw),
    "compile source": lambda **kw: serq_frontend.compile(source=SOURCE, **kw),
    "parse": lambda **kw: serq_frontend.parse(MG1, **kw),
    "cache.load": lambda **kw: cache.load(MG1, **kw),
}


class Truthless:
    """What pandas' and numpy's containers are to ``bool()``: no answer."""

    def __bool__(self):
        raise ValueError("The truth value of a Truthless is ambiguous")


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize(("arg", "value", "kind", "shown"), [
    ("sets", "", "numbers", "str"), ("sets", 0, "numbers", "int"), ("sets", [], "numbers", "list"),
    ("defs", False, "strs", "bool"), ("sets", np.array([0.5, 0.6]), "numbers", "ndarray"),
    ("defs", Truthless(), "strs", "Truthless"),
])
def test_a_value_that_is_no_mapping_is_refused_whatever_its_truth(call, arg, value, kind, shown):
    with pytest.raises(TypeError) as e:
        CALLS[call](**{arg: value})
    assert str(e.value) == f"{arg} is a mapping of names to {kind}, not {shown}"


def test_none_and_an_empty_mapping_are_no_override():
    plain = serq_frontend.compile(MG1)
    assert serq_frontend.compile(MG1, sets=None, defs=None) == plain
    assert serq_frontend.compile(MG1, sets={}, defs={}) == plain
    assert serq_frontend.compile(MG1, sets={"lambda": 0.5}) != plain
