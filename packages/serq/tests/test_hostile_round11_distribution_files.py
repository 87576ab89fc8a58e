"""The metadata files of the distributions on ``sys.path`` (``entry_points.txt`` of every one, ``METADATA``
of a plugin a message names), which every ``serq`` command reads at its start, are no trusted input: one
whose bytes are not UTF-8, a FIFO, a device or a loop of symbolic links in their place, or one of
gigabytes, is one message naming the distribution and status 1 (or, where serQ has nothing to read there,
nothing at all), never a ``UnicodeDecodeError`` traceback, a start that waits for ever on the FIFO, or one
that reads ``/dev/zero`` until memory runs out (docs/hooks.md)."""

from __future__ import annotations

import os
import sys

import pytest
from host_helpers import run_serq
from serq import plugins
from serq.errors import PluginError

pytestmark = pytest.mark.timeout(60)

INFO = "other-1.0.dist-info"


def _site(tmp_path, entry_points: bytes | None = b"", metadata: bytes = b"Name: other\nVersion: 1.0\n"):
    site = tmp_path / "site"
    info = site / INFO
    info.mkdir(parents=True)
    (info / "METADATA").write_bytes(b"Metadata-Version: 2.1\n" + metadata)
    if entry_points is not None:
        (info / "entry_points.txt").write_bytes(entry_points)
    return site


def _scan(monkeypatch, site):
    monkeypatch.setattr(sys, "path", [str(site)])
    return plugins.entry_points()


def _refused(monkeypatch, site, why: str) -> None:
    with pytest.raises(PluginError) as e:
        _scan(monkeypatch, site)
    path = site / INFO / "entry_points.txt"
    assert str(e.value).splitlines() == [f"error: the entry points of other 1.0 cannot be read ({path}): {why}",
                                         "(run without it: uninstall other)"]


def test_bytes_not_utf8_in_another_group_are_not_serqs_to_judge(tmp_path, monkeypatch):
    site = _site(tmp_path, b"[console_scripts]\ncaf\xe9 = caf\xe9:main\n")
    assert _scan(monkeypatch, site) == []


def test_a_serq_line_not_utf8_names_the_distribution_and_the_byte(tmp_path, monkeypatch):
    site = _site(tmp_path, b"[serq]\ncaf\xe9 = mod\n")
    _refused(monkeypatch, site, "the line 'caf\\xe9 = mod' of its [serq] section is not UTF-8 text (byte 0xE9)")


def test_a_fifo_in_place_of_entry_points_is_refused_without_waiting(tmp_path, monkeypatch):
    site = _site(tmp_path, None)
    os.mkfifo(site / INFO / "entry_points.txt")
    _refused(monkeypatch, site, "it is a FIFO (a named pipe), not a file")


def test_a_device_in_place_of_entry_points_is_not_read_for_ever(tmp_path, monkeypatch):
    site = _site(tmp_path, None)
    (site / INFO / "entry_points.txt").symlink_to("/dev/zero")
    _refused(monkeypatch, site, "it is a character device, not a file")


def test_a_loop_of_links_in_place_of_entry_points_is_refused(tmp_path, monkeypatch):
    site = _site(tmp_path, None)
    (site / INFO / "entry_points.txt").symlink_to("entry_points.txt")
    with pytest.raises(PluginError) as e:
        _scan(monkeypatch, site)
    assert str(e.value).startswith(f"error: the entry points of other 1.0 cannot be read ({site / INFO}")


def test_entry_points_of_gigabytes_are_refused_unread(tmp_path, monkeypatch):
    site = _site(tmp_path, None)
    with open(site / INFO / "entry_points.txt", "wb") as f:
        f.truncate(2**30)  # sparse: no disk taken
    _refused(monkeypatch, site, "it is more than 16 MB")


def test_metadata_not_utf8_shows_its_bytes_in_the_plugins_message(tmp_path):
    site = _site(tmp_path, b"[serq]\nbad = bad_mod\n", metadata=b"Name: caf\xe9\nVersion: 1.0\n")
    (site / "bad_mod.py").write_text("raise RuntimeError('no')\n")
    r = run_serq("--version", env={"PYTHONPATH": str(site)})
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [
        f"error: plugin 'bad' (from caf\\xe9 1.0) cannot be loaded (bad_mod): RuntimeError: no at "
        f"{site / 'bad_mod.py'}:1", "(run without it: SERQ_DISABLED_PLUGINS=bad, or uninstall caf\\xe9)"]


def test_a_fifo_in_place_of_metadata_names_no_distribution_and_does_not_wait(tmp_path):
    site = _site(tmp_path, None)
    os.remove(site / INFO / "METADATA")
    os.mkfifo(site / INFO / "METADATA")
    assert plugins.Distribution(str(site / INFO)).project_name is None


def test_the_command_starts_past_a_fifo_with_one_message(tmp_path):
    site = _site(tmp_path, None)
    os.mkfifo(site / INFO / "entry_points.txt")
    r = run_serq("--version", env={"PYTHONPATH": str(site)})
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[0].endswith("entry_points.txt): it is a FIFO (a named pipe), not a file")
