"""Third-party plugins are registered in an order that does not depend on the file system.

The scanner, like importlib.metadata, lists a site folder's ``*.dist-info`` in the order ``os.listdir``
gives, which is the file system's (hash order on ext4, creation order on others): two machines with the
same plugins installed listed them in different orders, and the order of registration is the order hooks
are called in (the library folders a ``use`` searches first, the order sugar layers apply). They are
registered in the order of their distributions' names, after serQ's own."""

from __future__ import annotations

import os
import sys

import pytest
from serq import plugins

GROUP = "serq"

PLUGIN = """from serq import hookimpl


@hookimpl
def serq_frontend_library_paths():
    return [{folder!r}]
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    for dist in ("zulu", "alpha", "mike"):
        info = site / f"{dist}_plug-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}-plug\nVersion: 1.0\n")
        # two entry points in one distribution keep the order its file lists them in
        (info / "entry_points.txt").write_text(f"[{GROUP}]\n{dist}_b = {dist}_b\n{dist}_a = {dist}_a\n")
        for mod in (f"{dist}_b", f"{dist}_a"):
            (site / f"{mod}.py").write_text(PLUGIN.format(folder=str(tmp_path / mod)))
    monkeypatch.syspath_prepend(str(site))
    yield site
    for dist in ("zulu", "alpha", "mike"):
        for mod in (f"{dist}_b", f"{dist}_a"):
            sys.modules.pop(mod, None)


def registered(monkeypatch, order) -> tuple[list[str], list[str]]:
    """The third-party plugins registered, and the library folders the hook gives, with the folders listed
    in ``order`` (a function of the names os.listdir gives)."""
    listdir = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path=".": order(listdir(path)))
    try:
        pm = plugins.get_plugin_manager()
    finally:
        monkeypatch.setattr(os, "listdir", listdir)
    names = [n for n, _ in pm.list_name_plugin() if "_plug" not in n and n.endswith(("_a", "_b"))]
    folders = [os.path.basename(str(f)) for paths in pm.hook.serq_frontend_library_paths() for f in paths
               if os.path.basename(str(f)).endswith(("_a", "_b"))]
    return names, folders


def test_the_order_of_registration_is_not_the_file_systems(site, monkeypatch):
    forward = registered(monkeypatch, sorted)
    backward = registered(monkeypatch, lambda names: sorted(names, reverse=True))
    assert forward == backward
    names, folders = forward
    assert names == ["alpha_b", "alpha_a", "mike_b", "mike_a", "zulu_b", "zulu_a"]
    assert folders == list(reversed(names))  # pluggy calls the last registered first
    # serQ's own parts still come first, in their order
    pm = plugins.get_plugin_manager()
    order = [n for n, _ in pm.list_name_plugin()]
    assert order.index("host") < order.index("sim") < order.index("alpha_b")
