"""serq_report.render(report, fmt) of an unknown format of 100 000 characters quoted the name whole: a message
of 100 056 characters, where `serq run --format NAME` clips the name (serq.errors.clipped). The API's message
clips it too: its first and last characters around a `…`, the list of known formats after it."""

from __future__ import annotations

import pytest
from serq.errors import QUOTED_WIDTH, UserError


@pytest.fixture(scope="module")
def report():
    import serq_frontend
    import serq_sim

    program = serq_frontend.compile(source="stage s : fifo;\nworkload { arrive poisson(1); }\n"
                                           "session { set t0 = now; run s (0.5); observe r = now - t0; }\n"
                                           "run { horizon 100; seed 1; }\n")
    return serq_sim.run(program)


def test_an_unknown_format_of_a_long_name_is_quoted_clipped(report):
    import serq_report

    name = "a" * 50_000 + "b" * 50_000
    with pytest.raises(UserError) as e:
        serq_report.render(report, name)
    half = QUOTED_WIDTH // 2
    quoted = "a" * half + "…" + "b" * (half - 1)
    assert str(e.value) == f"error: unknown report format {quoted!r} (known: csv, json, text)"


def test_a_short_unknown_name_is_quoted_whole(report):
    import serq_report

    with pytest.raises(UserError) as e:
        serq_report.render(report, "jsn")
    assert str(e.value) == "error: unknown report format 'jsn' (known: csv, json, text) (did you mean `json`?)"
    assert serq_report.render(report, "json") == serq_report.render(report, "json")  # rendered twice alike
