"""The text report of a record table with no ``prompt`` column says so, rather than ``nan input`` and
``total nan tok/s``.

docs/language.md: the totals of input tokens are ``sum(prompt)``, NaN without that column (null in JSON),
and the total-token throughput with them. The text report printed ``(nan input, 12 output tokens)`` and
``total nan tok/s``, numbers that read as a failed computation; it now says the input is not counted and
why, and leaves the total out. The JSON report keeps its nulls.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

# three requests at 0 on a delay stage: first token at 1, last at 2, 4 output tokens each; horizon 10:
# 3 completed over 10 s, 12 output tokens, 0.3 req/s, output 1.2 tok/s (and with prompt = 5 each: 15
# input tokens, total (15 + 12) / 10 = 2.7 tok/s)
PROGRAM = """stage d : delay;
workload {{ arrive batch(3); }}
session {{ set t0 = now; run d (1); set tf = now; run d (1);
  record request {{ sent = t0; first_token = tf; last_token = now; output = 4;{prompt} }} }}
run {{ horizon 10; warmup 0; }}
"""


def _report(prompt: str, fmt: str) -> str:
    from serq_report.json import encode_json
    from serq_report.text import render_text

    r = serq_sim.run(serq_frontend.compile(source=PROGRAM.format(prompt=prompt)))
    return render_text(r) if fmt == "text" else encode_json(r).decode()


def _requests_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("requests ("))


def test_no_prompt_column_is_said_and_no_total_printed():
    line = _requests_line(_report("", "text"))
    assert line == ("requests (request): completed 3 over 10 s  (12 output tokens; input not counted: no prompt "
                    "column, or a prompt of NaN)  0.3 req/s  output 1.2 tok/s")
    assert "nan" not in line


def test_a_prompt_column_gives_its_totals_as_before():
    line = _requests_line(_report(" prompt = 5;", "text"))
    assert line == ("requests (request): completed 3 over 10 s  (15 input, 12 output tokens)  0.3 req/s  "
                    "output 1.2 tok/s  total 2.7 tok/s")


def test_the_json_report_keeps_its_nulls():
    m = json.loads(_report("", "json"))["requests"]
    assert m["total_input_tokens"] is None and m["total_token_throughput"] is None
    assert m["total_output_tokens"] == 12 and m["output_throughput"] == pytest.approx(1.2)
