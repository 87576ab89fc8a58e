"""A name or a text the sweep API takes as a str of a subclass (numpy's ``str_``, a user's) is the plain str
it holds: ``sets={numpy.str_("lambda"): …}`` put ``np.str_('lambda')`` in the frame's ``attrs["axes"]``,
and ``find(over=(numpy.str_("lambda"), …))`` keyed its rows and named its column by it, where every other
name is a str (a name read from a numpy array of names, or from a DataFrame's column, is one).

And the API's faults in the API's words: an empty ``slo={}``; find()'s condition that does not read, which
was named ``--find '…'``, and compare()'s one seed, ``serq compare needs…``, to a caller of neither."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from serq_sweep import sweep
from serq_sweep.search import find

MG1 = str(Path(__file__).resolve().parents[3] / "examples" / "single-turn" / "mg1.sq")
RUN = {"horizon": 200, "warmup": 0, "workers": 0, "progress": False}


class Name(str):
    pass


def test_a_swept_name_given_as_numpy_text_is_a_str_in_the_frame():
    frame = sweep(MG1, sets={np.str_("lambda"): [0.3, 0.5]}, **RUN)
    assert frame.attrs["axes"] == ["lambda"]
    assert [type(n) for n in frame.attrs["axes"]] == [str]
    assert list(frame["lambda"]) == [0.3, 0.5]


def test_zip_and_defs_names_of_a_subclass_are_strs():
    frame = sweep(MG1, sets={Name("lambda"): [0.3, 0.5]}, defs={np.str_("service"): ["~exp(1)", "~det(1)"]},
                  zip=[[Name("lambda"), np.str_("service")]], **RUN)
    assert frame.attrs["axes"] == ["lambda", "service"]
    assert {type(n) for n in frame.attrs["axes"]} == {str}
    assert len(frame) == 2  # (zipped: two points, not the grid's four)


def test_a_search_over_a_numpy_name_keys_its_rows_by_a_str():
    columns, rows = find(MG1, np.str_("response.mean <= 3"), (np.str_("lambda"), np.str_("0.1:0.9")), **RUN)
    plain_columns, plain_rows = find(MG1, "response.mean <= 3", ("lambda", "0.1:0.9"), **RUN)
    assert columns == plain_columns and rows == plain_rows
    assert type(columns[0]) is str and all(type(k) is str for row in rows for k in row)


def test_an_empty_slo_is_refused_before_any_run():
    # as serq sweep --slo '' is, and report.set_slo({}) (serq_sim.metrics.check_slo): it was a goodput of every
    # request, its report listing no metric met
    from serq.errors import UserError

    with pytest.raises(UserError, match=r"^error: slo: no metric given: an SLO is seconds by metric"):
        sweep(MG1, slo={}, **RUN)


EXPECTED = "expected FIGURE OP NUMBER, OP one of <= < >= > == != (e.g. 'ttft.p99 <= 1')"


@pytest.mark.parametrize(("condition", "why"), [
    ("response.mean <=", EXPECTED),
    ("response.mean =< 3", f"`=<` is no operator (did you mean `<=`?); {EXPECTED}"),
])
def test_finds_condition_is_named_as_the_api_was_given_it(condition, why):
    # the caller of find() gave conditions=, no --find (the command line's words are kept: test_strict_lists)
    from serq.errors import UsageError

    with pytest.raises(UsageError) as e:
        find(MG1, condition, ("lambda", "0.1:0.9"), **RUN)
    assert str(e.value) == f"error: conditions: {condition!r}: {why}"


def test_compare_with_one_seed_names_the_function():
    from serq.errors import UsageError
    from serq_sweep import compare

    with pytest.raises(UsageError) as e:
        compare(MG1, sets={"lambda": [0.3, 0.5]}, seeds=[1], **RUN)
    assert str(e.value) == "error: compare() needs two or more seeds (seeds=1..10) for its CIs"
