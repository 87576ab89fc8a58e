"""A loader is registered under a file suffix (docs/hooks.md, ``serq_register_loaders``): ``.`` followed by
one or more characters, none a path separator. A loader is chosen by the end of a file's name, so ``sq``
(no dot) took ``prog.jsq`` as well as ``p.sq``, ``.`` alone took only names ending in a dot, and a suffix
holding ``/`` never matched a name; each was taken without a word. Now each is refused where it is
registered, one message naming the plugin, as a name that is not printable is."""

from __future__ import annotations

import pytest
from serq import hookimpl
from serq.errors import PluginError
from serq.loading import load_program
from serq.plugins import collect, get_plugin_manager

pytestmark = pytest.mark.timeout(60)


def _load(path, options):
    return None


class Suffix:
    def __init__(self, suffix: str):
        self.suffix = suffix

    @hookimpl
    def serq_register_loaders(self, register):
        register(self.suffix, _load)


OWN = f"{__name__}.Suffix"
HEAD = f"error: plugin {OWN!r} registers a loader for wrongly in serq_register_loaders: the suffix "


@pytest.mark.parametrize(("suffix", "why"), [
    ("sq", "'sq' is not '.' followed by one or more characters (as '.sq')"),
    (".", "'.' is not '.' followed by one or more characters (as '.sq')"),
    ("jobs.", "'jobs.' is not '.' followed by one or more characters (as '.sq')"),
    (".d/x", "'.d/x' holds a path separator: a suffix ends a file's name"),
    ("./", "'./' holds a path separator: a suffix ends a file's name"),
    (".a\\b", "'.a\\\\b' holds a path separator: a suffix ends a file's name"),
])
def test_a_suffix_that_is_not_a_dot_and_characters_is_refused_naming_the_plugin(suffix, why):
    pm = get_plugin_manager(plugins=[Suffix(suffix)])
    with pytest.raises(PluginError) as e:
        collect(pm, "serq_register_loaders", "loader for")
    assert str(e.value).splitlines() == [HEAD + why, "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"]


def test_loading_a_file_with_such_a_plugin_says_so_and_never_loads_by_it(tmp_path):
    (tmp_path / "prog.jsq").write_text("")
    pm = get_plugin_manager(plugins=[Suffix("sq")])
    with pytest.raises(PluginError, match="the suffix 'sq' is not '.' followed by"):
        load_program(pm, tmp_path / "prog.jsq")


@pytest.mark.parametrize("suffix", [".x", ".ir2.json", ".tar.gz"])
def test_a_dot_and_characters_is_a_suffix(suffix):
    pm = get_plugin_manager(plugins=[Suffix(suffix)])
    assert suffix in collect(pm, "serq_register_loaders", "loader for").names()
