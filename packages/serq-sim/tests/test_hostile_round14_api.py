"""The Python API as a notebook uses it, checked at its arguments.

``serq_sim.run`` takes ``horizon`` and ``warmup`` as any real number (``numbers.Real``, as ``serq.numbers.real``
reads one) but passed the caller's object on to the set-up: a ``Fraction`` horizon, accepted by the check,
was ``TypeError: unsupported format string passed to Fraction.__format__`` deep in it, where a setting's
origin is shown. The settings are now made plain numbers where they are checked, as the bounds are.

``report.pool`` and ``report.stage`` did not follow the rule of the report's other look-ups by name
(serq_sim.report._named): an index ``"0"`` was ``KeyError: no stage engine[0]`` of a stage the program
has, ``True`` was member 1, and a name that is no str a KeyError too."""

from __future__ import annotations

from fractions import Fraction

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

# a deterministic service (0.5) and arrivals every 1 s from t = 1 (the first arrival is one gap in)
PROGRAM = """stage s : fifo;
workload { arrive renewal(1); }
session { set t0 = now; run s (0.5); observe y = now - t0; }
run { horizon 100; warmup 0; seed 1; }
"""


@pytest.fixture(scope="module")
def program():
    return serq_frontend.compile(source=PROGRAM)


def test_a_fraction_horizon_and_warmup_run_as_their_values(program):
    report = serq_sim.run(program, horizon=Fraction(21, 2), warmup=Fraction(1, 2))
    assert report.result.horizon == 10.5 and report.result.warmup == 0.5
    assert type(report.result.horizon) is float and type(report.result.warmup) is float
    # arrivals at 1, 2, ..., 10 (each leaves 0.5 later, by 10.5): ten responses of 0.5
    assert report.stats("y").count == 10 and report.stats("y").mean == 0.5


@pytest.mark.parametrize("call, kind, said", [
    (lambda r: r.stage("s", "0"), TypeError, "the index of a stage's member is an integer or None, not '0'"),
    (lambda r: r.stage("s", True), TypeError, "the index of a stage's member is an integer or None, not True"),
    (lambda r: r.stage("s", 0.0), TypeError, "the index of a stage's member is an integer or None, not 0.0"),
    (lambda r: r.pool("p", "1"), TypeError, "the index of a pool's member is an integer or None, not '1'"),
    (lambda r: r.stage(5), TypeError, "the name of a stage is a str, not int"),
    (lambda r: r.pool(None), TypeError, "the name of a pool is a str, not NoneType"),
    (lambda r: r.stage("nope"), KeyError, "no stage nope (the program has: s)"),
    (lambda r: r.stage("s", 3), KeyError, "no stage s[3] (the program has: s)"),
    (lambda r: r.pool("p"), KeyError, "no pool p (the program has: none)"),
])
def test_a_stage_or_pool_look_up_is_one_message(program, call, kind, said):
    report = serq_sim.run(program, horizon=5)
    with pytest.raises(kind) as info:
        call(report)
    assert type(info.value) is kind and info.value.args == (said,)
    assert report.stage("s").name == "s" and report.stage("s", 0).completions == 4  # arrivals at 1..4


# a record table's rows: arrivals at 1, 2, 3, ... (renewal(1)), each recording, after its 0.5 at s, when it came and 7
RECORDS = """stage s : fifo;
workload { arrive renewal(1); }
session { set t0 = now; run s (0.5); record r { at = t0; n = 7; } }
run { horizon 4.2; warmup 0; seed 1; }
"""


def test_a_report_with_records_pickles():
    # a report is kept or sent (a multiprocessing pool's worker, joblib) by pickle: a table's appender was
    # a local function, which pickle refuses, so a report of a program with records could not be pickled
    import pickle

    report = serq_sim.run(serq_frontend.compile(source=RECORDS))
    again = pickle.loads(pickle.dumps(report))
    for r in (report, again):
        table = r.records("r", kind="numpy")
        # recorded when each leaves s, 0.5 after it came: the session that comes at 4 leaves after 4.2
        assert table["at"].tolist() == [1.0, 2.0, 3.0] and table["n"].tolist() == [7, 7, 7]
        assert table["time"].tolist() == [1.5, 2.5, 3.5]


def test_what_a_report_hands_out_cannot_change_it(program):
    # a report's samples and records are views of the run's buffers, kept and handed out again: written
    # into (seconds to milliseconds in place), the report's next read gave the changed numbers
    report = serq_sim.run(program, horizon=5)
    values = report.observe("y").values
    with pytest.raises(ValueError, match="read-only"):
        values *= 1000
    assert report.observe("y").values.tolist() == [0.5] * 4 and (values * 1000).tolist() == [500.0] * 4
    rec = serq_sim.run(serq_frontend.compile(source=RECORDS))
    with pytest.raises(ValueError, match="read-only"):
        rec.records("r", kind="numpy")["at"][0] = -1.0
    import pandas as pd
    frame = rec.records("r", kind="pandas")
    assert isinstance(frame, pd.DataFrame)
    frame.iloc[0, frame.columns.get_loc("at")] = -1.0  # the caller's own frame, edited in place
    assert frame["at"].tolist() == [-1.0, 2.0, 3.0]
    assert rec.records("r", kind="pandas")["at"].tolist() == [1.0, 2.0, 3.0]
    assert rec.records("r", kind="numpy")["at"].tolist() == [1.0, 2.0, 3.0]
