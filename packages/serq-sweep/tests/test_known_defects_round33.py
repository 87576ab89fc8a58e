"""Known defects, round 33, in serq-sweep.

1. A figure named by a bare tail, ``p50`` with no dotted prefix, resolved silently to the one observe's
   ``observes.ttft.p50`` beside the request metrics, while ``ttft.p50`` was ambiguous by the median rule (a
   median is one figure by either word, ``p50`` or ``median``). The rule is one for bare and dotted names: a
   name whose last part is a median's word means the figures that end with the name by either word.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep.figures import AmbiguousFigure, UnknownFigure, resolve

SERQ = str(Path(sys.executable).parent / "serq")

#: the columns a program on lib/vllm.sq gives (its observe ttft beside the request metrics)
VLLM_COLUMNS = [f"observes.ttft.{s}" for s in ("count", "mean", "p50", "p90", "p95", "p99")] + [
    f"requests.{m}.{s}" for m in ("ttft", "e2el") for s in ("count", "mean", "median", "p90", "p95", "p99")]


@pytest.mark.parametrize("name, listed", [
    ("p50", "observes.ttft.p50, requests.ttft.median, requests.e2el.median"),
    ("median", "requests.ttft.median, requests.e2el.median, observes.ttft.p50"),
    ("ttft.p50", "observes.ttft.p50, requests.ttft.median"),
])
def test_a_bare_median_is_ambiguous_beside_the_request_metrics_as_a_dotted_one_is(name, listed):
    with pytest.raises(AmbiguousFigure) as e:
        resolve(name, VLLM_COLUMNS)
    assert str(e.value).startswith(f"error: figure {name!r} is ambiguous: {listed} (a median is one figure by "
                                   "either word: "), str(e.value)


def test_a_bare_median_of_one_figure_by_either_word_resolves():
    observes = VLLM_COLUMNS[:6]
    one_metric = [c for c in VLLM_COLUMNS if c.startswith("requests.e2el.")]
    assert resolve("p50", observes) == "observes.ttft.p50"
    assert resolve("median", one_metric) == "requests.e2el.median"
    # the other word of the one median is offered, as `e2el.p50` offers `requests.e2el.median`
    for name, meant in (("p50", "requests.e2el.median"), ("median", "observes.ttft.p50")):
        with pytest.raises(UnknownFigure) as e:
            resolve(name, one_metric if name == "p50" else observes)
        assert f"(did you mean `{meant}`?" in str(e.value), str(e.value)


@pytest.mark.timeout(60)
def test_serq_plot_refuses_a_bare_p50_beside_the_request_metrics(tmp_path):
    table = tmp_path / "t.csv"
    cols = ["c", "seed", "status", "observes.ttft.p50", "requests.ttft.median"]
    table.write_text(",".join(cols) + "\n1,1,ok,0.5,0.6\n2,1,ok,0.7,0.8\n")
    r = subprocess.run([SERQ, "plot", str(table), "-o", str(tmp_path / "x.svg"), "--x", "c", "--y", "p50"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and r.stderr.startswith(
        "error: --y p50: figure 'p50' is ambiguous: observes.ttft.p50, requests.ttft.median ("), r.stderr
    assert not (tmp_path / "x.svg").exists()
