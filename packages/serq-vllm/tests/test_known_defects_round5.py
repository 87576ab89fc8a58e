"""A shipped scenario's name is exactly a ``GROUP/NAME`` that ``serq vllm scenarios`` lists
(serq_vllm.scenarios.scenario_path): the oracle's folder joined to any text was taken, so
``generated//chunk_many`` and ``../oracle/generated/chunk_many``, which the listing does not have, ran the
scenario ``generated/chunk_many``. Any other text is a path, and an error when no such file exists."""

from __future__ import annotations

import pytest
from serq import UserError
from serq_vllm.scenarios import list_scenarios, scenario_path

pytestmark = pytest.mark.timeout(60)


def test_every_listed_name_is_its_listed_file():
    listed = list_scenarios()
    assert len(listed) > 20
    for sc in listed:
        assert scenario_path(sc.name) == str(sc.path)


@pytest.mark.parametrize("name", [
    "generated//chunk_many", "../oracle/generated/chunk_many", "./generated/chunk_many", "generated/chunk_many/",
    "generated/./chunk_many", "generated/../generated/chunk_many", "/generated/chunk_many", "generated/chunk_many.out",
    "generated/chunk_many.target", "generated", "chunk_many",
])
def test_a_name_the_listing_has_not_is_a_path(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (no file of these names here)
    assert name not in {sc.name for sc in list_scenarios()}
    with pytest.raises(UserError) as info:
        scenario_path(name)
    assert str(info.value).startswith(f"error: {name}: no such scenario file or shipped scenario"), str(info.value)


def test_a_path_that_exists_is_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "chunk_many").write_text("{}")
    assert scenario_path("generated//chunk_many") == "generated/chunk_many"
