"""A median named by the other section's word (serq_sweep.figures.resolve): the request metrics name it
`median` (vLLM's benchmark), the observes `p50`. `--figure requests.e2el.p50` was offered
`requests.e2el.p95`, the nearest spelling, a figure of another quantile; it is offered
`requests.e2el.median`, and `observes.ttft.median` `observes.ttft.p50`, each saying why."""

from __future__ import annotations

import pytest
from serq_sweep.figures import UnknownFigure, resolve

# the columns a program on lib/vllm.sq gives (its observe ttft beside the request metrics)
COLUMNS = [f"observes.ttft.{s}" for s in ("count", "mean", "p50", "p90", "p95", "p99")] + [
    f"requests.{m}.{s}" for m in ("ttft", "e2el") for s in ("count", "mean", "median", "p90", "p95", "p99")]


@pytest.mark.parametrize("name, meant", [
    ("requests.e2el.p50", "requests.e2el.median"),
    ("e2el.p50", "requests.e2el.median"),          # a tail: the one figure it can mean
    ("observes.ttft.median", "observes.ttft.p50"),
    ("requests.ttft.p50", "requests.ttft.median"),
])
def test_the_median_of_the_other_word_is_offered(name, meant):
    with pytest.raises(UnknownFigure) as e:
        resolve(name, COLUMNS)
    assert str(e.value).startswith(f"error: no figure {name!r} in the results (did you mean `{meant}`? a request "
                                   "metric's median is `median`"), str(e.value)
    assert "p95" not in str(e.value).split("?")[0]


def test_the_names_that_are_figures_resolve_as_before():
    assert resolve("requests.e2el.median", COLUMNS) == "requests.e2el.median"
    assert resolve("e2el.median", COLUMNS) == "requests.e2el.median"


def test_a_median_no_figure_has_by_either_word_keeps_the_spelling_hint():
    with pytest.raises(UnknownFigure) as e:
        resolve("requests.e2l.p50", COLUMNS)
    assert "a request metric's median" not in str(e.value)
    # (ttft.p50 and ttft.median name two medians there, each by its word: test_known_defects_round31)
