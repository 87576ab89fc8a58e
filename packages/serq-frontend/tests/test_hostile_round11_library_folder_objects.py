"""``serq_frontend_library_paths`` returning a folder that is an ``os.PathLike`` whose ``__fspath__`` gives
bytes, or raises: it passed the check of what the hook returns (``isinstance(x, os.PathLike)``) and was a
``TypeError`` traceback from pathlib (or the plugin's own exception) when the folders were spelled, at
every load of a ``.sq`` file. Each is one message naming the plugin (docs/hooks.md, "When a plugin
misbehaves")."""

from __future__ import annotations

import pytest
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_frontend.cache import library_paths

pytestmark = pytest.mark.timeout(60)


class BytesPath:
    def __fspath__(self):
        return b"/tmp"


class RaisingPath:
    def __fspath__(self):
        raise ValueError("no path today")


class Folders:
    def __init__(self, folder):
        self.folder = folder

    @hookimpl
    def serq_frontend_library_paths(self):
        return [self.folder]


OWN = f"{__name__}.Folders"


@pytest.mark.parametrize(("folder", "why"), [
    (BytesPath(), "it returned the folder an object of type BytesPath, whose __fspath__ gave an object of type "
                  "bytes, not a str"),
    (RaisingPath(), "it returned the folder an object of type RaisingPath, whose __fspath__ raised ValueError: no "
                    "path today"),
])
def test_a_path_object_that_gives_no_str_is_named(folder, why):
    pm = get_plugin_manager(plugins=[Folders(folder)])
    with pytest.raises(PluginError) as e:
        library_paths(pm)
    assert str(e.value).splitlines() == [
        f"error: plugin {OWN!r} failed in serq_frontend_library_paths: {why}",
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"]
