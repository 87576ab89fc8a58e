"""``serq metrics --duration`` is read by the type of every option in seconds (serq.options.SECONDS), where
serq_sweep.served._duration parsed it with words of its own (``--duration soon: 'soon' is not a number``,
``--duration 0: the run's window is …``); its usage errors are now the other options' (``invalid value for
'--duration': 0 is not a positive, finite number of seconds``). ``serq_sweep.metrics(duration=…)`` holds the
argument to the same check, with the same words after its name (``duration: 0 is not …``). The values taken
are the same: a positive, finite number, in serQ's number syntax."""

from __future__ import annotations

from fractions import Fraction

import click
import pytest
from serq.cli import build_cli
from serq.errors import UsageError
from serq.options import SECONDS
from serq.plugins import get_plugin_manager
from serq_sweep import metrics

HEADER = "session,turn,time,sent,admitted,first_token,last_token,prompt,output,cached,preemptions,engine\n"
ROW = "0,1,5,0,0.5,1,5,100,5,50,0,2\n"  # sent 0, last token 5: one request, 5 output tokens


@pytest.fixture
def records(tmp_path):
    p = tmp_path / "req.csv"
    p.write_text(HEADER + ROW)
    return p


def test_the_option_is_the_shared_type():
    cli = build_cli(get_plugin_manager())
    cmd = cli.get_command(click.Context(cli), "metrics")
    (opt,) = [p for p in cmd.params if "--duration" in p.opts]
    assert opt.type is SECONDS


@pytest.mark.parametrize("value, said", [
    ("0", "0 is not a positive, finite number of seconds"),
    ("-1", "-1 is not a positive, finite number of seconds"),
    ("inf", "inf is not a positive, finite number of seconds"),
    ("nan", "nan is not a positive, finite number of seconds"),
    ("soon", "'soon' is not a number"),
    ("1e400", "'1e400' is beyond the range of a double"),
])
def test_both_paths_say_the_same(records, serq_in_process, value, said):
    r = serq_in_process("metrics", str(records), "--duration", value)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"error: invalid value for '--duration': {said}"), r.stderr
    # the same words as --max-wall's, the other option in seconds
    r = serq_in_process("run", str(records), "--max-wall", value)
    assert r.stderr.startswith(f"error: invalid value for '--max-wall': {said}"), r.stderr
    with pytest.raises(UsageError) as e:
        metrics(records, duration=value)
    assert str(e.value).startswith(f"error: duration: {said}"), str(e.value)


@pytest.mark.parametrize("value", [0, -2.5, float("inf"), float("nan")])
def test_a_number_out_of_range_in_the_api(records, value):
    with pytest.raises(UsageError) as e:
        metrics(records, duration=value)
    assert str(e.value) == f"error: duration: {value:g} is not a positive, finite number of seconds"


@pytest.mark.parametrize("value", [True, [1], "x"])
def test_what_is_no_number_in_the_api(records, value):
    with pytest.raises(UsageError) as e:
        metrics(records, duration=value)
    assert str(e.value) == f"error: duration: {value!r} is not a number"


@pytest.mark.parametrize("value", ["10", "1e1", 10, 10.0, Fraction(10)])
def test_the_same_values_are_taken(records, serq_in_process, value):
    """A window of 10 s: 1 request in it, 0.1 req/s, 5 output tokens, 0.5 tok/s (by hand)."""
    (row,) = metrics(records, duration=value)
    assert row.requests.duration == 10.0
    assert row.requests.completed == 1
    if isinstance(value, str):
        r = serq_in_process("metrics", str(records), "--duration", value, "--json")
        assert r.returncode == 0 and '"duration": 10.0' in r.stdout
