"""A reporter (``reporter(report, out)``) given an ``out`` that is no text stream says so, before the report
is made: ``json_reporter(report, None)`` was an AttributeError ('NoneType' object has no attribute 'write')
and a binary stream (``io.BytesIO``) "a bytes-like object is required", each after the report was made."""

from __future__ import annotations

import io

import pytest
import serq_frontend
import serq_report
import serq_sim

SOURCE = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (~exp(2)); observe w = 1; }\n"


@pytest.fixture(scope="module")
def report():
    return serq_sim.run(serq_frontend.compile(source=SOURCE), seed=1, horizon=20, warmup=0)


@pytest.mark.parametrize("name", ["json", "text", "csv"])
@pytest.mark.parametrize("out", [None, io.BytesIO(), "r.json"], ids=["None", "BytesIO", "str"])
def test_an_out_that_is_no_text_stream_is_a_type_error(report, name, out):
    reporter = getattr(serq_report, f"{name}_reporter")
    with pytest.raises(TypeError) as e:
        reporter(report, out)
    assert str(e.value) == (f"{name}_reporter: out is a text stream (sys.stdout, io.StringIO(), a file opened "
                            f"with 'w'), not {type(out).__name__}")


@pytest.mark.parametrize("name", ["json", "text", "csv"])
def test_a_text_stream_takes_the_report_as_render_gives_it(report, name):
    out = io.StringIO()
    getattr(serq_report, f"{name}_reporter")(report, out)
    assert out.getvalue() == serq_report.render(report, name)
