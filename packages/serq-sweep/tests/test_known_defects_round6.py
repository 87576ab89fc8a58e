"""Known defects, round 6 (serq-sweep).

1. One cut for long text in a sweep point's label: a swept value was cut by the label's own rule (60
   characters, ``...`` and ``(N characters)``) while its name was cut as every message cuts a name
   (serq.errors.clipped: past 120 characters, the first 60 and the last 59 around ``…``). Both are cut by
   clipped now (serq_sweep.core.quoted_label).
"""

from __future__ import annotations

import pytest
from serq.errors import UsageError, UserError
from serq_sweep import sweep
from serq_sweep.core import quoted_label

PROGRAM = """def svc() = 0.5;
let k = 1;
stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (svc() * k); observe y = now - t0; }
run { horizon 10; warmup 0; seed 1; }
"""


def _cut(text: str) -> str:
    """The cut by hand: whole up to 120 characters, else the first 60 and the last 59 around …"""
    return text if len(text) <= 120 else text[:60] + "…" + text[-59:]


def test_a_long_value_is_cut_as_a_long_name_is():
    value = "(" + "a" * 99 + "b" * 100 + ")"  # 201 characters
    name = "n" * 80 + "m" * 80
    label = quoted_label({name: value})
    assert label == "n" * 60 + "…" + "m" * 59 + "=(" + "a" * 59 + "…" + "b" * 58 + ")"
    assert label == f"{_cut(name)}={_cut(value)}"


@pytest.mark.parametrize("n", [119, 120, 121])
def test_the_bound_is_the_names(n):
    value = "1" + " " * (n - 1)
    assert quoted_label({"f": value}) == "f=" + (value if n <= 120 else "1" + " " * 59 + "…" + " " * 59)


def test_the_point_of_an_error_cuts_its_value_as_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    body = "(" + "x" * 300  # does not parse: the error at its point
    with pytest.raises(UserError) as e:
        sweep("p.sq", defs={"svc": [body, "0.5"]}, workers=0, progress=False)
    assert str(e.value).endswith("\n(at the sweep's point svc=(" + "x" * 59 + "…" + "x" * 59 + ")")
    assert "characters)" not in str(e.value)


def test_a_point_given_twice_cuts_its_value_as_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    body = "0.5" + " " * 200  # one value twice
    with pytest.raises(UsageError) as e:
        sweep("p.sq", defs={"svc": [body, body]}, workers=0, progress=False)
    assert str(e.value).startswith("error: the point svc=0.5" + " " * 57 + "…" + " " * 59 + " is given twice")
