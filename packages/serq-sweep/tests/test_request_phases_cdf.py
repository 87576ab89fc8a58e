"""serq plot --cdf of vLLM v1's per-request phases from records: queue = admitted - sent, prefill =
first_token - admitted, decode = last_token - first_token, infer = last_token - admitted, of the rows whose
admitted is not negative (a request never admitted has none), as the report's ``requests`` phases."""

from __future__ import annotations

import csv

import pytest
from serq.errors import UserError
from serq_sweep import plots

pytestmark = pytest.mark.timeout(60)


def _records(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["session", "turn", "time", "sent", "admitted", "first_token", "last_token", "output"])
        for i, (s, a, ft, lt, o) in enumerate(rows):
            w.writerow([i, 0, lt, s, a, ft, lt, o])


def test_the_phases_of_a_records_file_by_hand(tmp_path):
    # (sent, admitted, first_token, last_token, output); row 1 was never admitted (-1), row 2 preempted
    # before its first token (first scheduling 2, first token 6)
    path = tmp_path / "r.csv"
    _records(path, [(0.0, 0.5, 1.0, 3.0, 5), (1.0, -1.0, 2.0, 4.0, 3), (2.0, 2.0, 6.0, 6.0, 1),
                    (2.5, 4.0, 4.5, 7.5, 4)])
    data = plots.records_cdf_data(str(path), ["queue", "prefill", "decode", "infer", "ttft"])
    assert data == {("queue", None): [0.0, 0.5, 1.5], ("prefill", None): [0.5, 0.5, 4.0],
                    ("decode", None): [0.0, 2.0, 3.0], ("infer", None): [2.5, 3.5, 4.0],
                    ("ttft", None): [1.0, 1.0, 2.0, 4.0]}  # the never-admitted row keeps its TTFT


def test_a_phase_without_the_admitted_column_is_one_message(tmp_path):
    path = tmp_path / "r.csv"
    with open(path, "w", newline="") as f:
        f.write("sent,first_token,last_token,output\n0,1,2,2\n")
    with pytest.raises(UserError, match="--cdf prefill needs the records' columns admitted, first_token"):
        plots.records_cdf_data(str(path), ["prefill"])
