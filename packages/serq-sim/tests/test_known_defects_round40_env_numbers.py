"""The numbers of serQ's environment variables follow serq.numbers' rule (ASCII digits), as every number a
user gives: ``SERQ_MEMORY_SHARE=٠.٥`` (Arabic-Indic digits) was taken as 0.5, because Python's ``float()``
reads other scripts' digits, while ``SERQ_MEMORY_WORKERS=٣`` was refused. Both now refuse such text in one
shape (tier_env.env_error), with serq.numbers' hint at the rule when Python would have read it."""

from __future__ import annotations

import pytest
from serq import numbers
from serq.errors import UserError
from serq_sim.memguard import SHARE, WORKERS_VAR, machine_share, parallel_runs
from serq_sim.tier_env import check_environment


@pytest.mark.parametrize("text", ["٠.٥", "０.５", "1_0", "+0.5", "0.2_5", "Infinity", "nan"])
def test_share_in_other_digits_is_refused(monkeypatch, text):
    monkeypatch.delenv(WORKERS_VAR, raising=False)
    monkeypatch.setenv("SERQ_MEMORY_SHARE", text)
    with pytest.raises(UserError) as e:
        machine_share()
    said = str(e.value)
    assert said.startswith(f"error: the environment variable SERQ_MEMORY_SHARE is {text!r}: it is the share")
    assert said.endswith(f"({numbers.NUMBER_HINT})")
    with pytest.raises(UserError):
        check_environment()


@pytest.mark.parametrize("text", ["٣", "３", "1_0", "+3"])
def test_workers_in_other_digits_is_refused_in_the_same_shape(monkeypatch, text):
    monkeypatch.delenv("SERQ_MEMORY_SHARE", raising=False)
    monkeypatch.setenv(WORKERS_VAR, text)
    with pytest.raises(UserError) as e:
        parallel_runs()
    said = str(e.value)
    assert said.startswith(f"error: the environment variable {WORKERS_VAR} is {text!r}: it is how many runs")
    assert said.endswith(f"({numbers.WHOLE_HINT})")


@pytest.mark.parametrize(("text", "share"), [("0.5", 0.5), (".25", 0.25), ("1e0", 1.0), (" 0.125 ", 0.125),
                                             ("", SHARE)])
def test_share_in_digits_0_9_is_taken(monkeypatch, text, share):
    monkeypatch.delenv(WORKERS_VAR, raising=False)
    monkeypatch.setenv("SERQ_MEMORY_SHARE", text)
    assert machine_share() == share
    monkeypatch.setenv(WORKERS_VAR, "4")
    assert machine_share() == share / 4


@pytest.mark.parametrize("text", ["x", "2", "0", "inf", "-0.5"])
def test_share_that_is_no_number_in_range_has_no_hint(monkeypatch, text):
    # text float() does not read, or a number of the rule out of range: the hint says nothing it needs
    monkeypatch.delenv(WORKERS_VAR, raising=False)
    monkeypatch.setenv("SERQ_MEMORY_SHARE", text)
    with pytest.raises(UserError) as e:
        machine_share()
    assert str(e.value).endswith("or 'off' in any case (no bound but a ulimit's)")
