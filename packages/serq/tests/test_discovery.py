"""Finding the plugins without importlib.metadata: the scanner of ``sys.path`` keeps its rules."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import zipfile

import pluggy
import pytest
import serq
from host_helpers import run_serq
from hypothesis import given, settings
from hypothesis import strategies as st
from serq import plugins
from serq.builtin import plugin_info
from serq.plugins import Distribution, _Unusual, entry_points, get_plugin_manager, load_entry_points

GROUP = "serq_discovery_test"


def reference(group: str) -> list[tuple[str, str, str]]:
    """What importlib.metadata finds: name, value and distribution name of each entry point."""
    return [(ep.name, ep.value, ep.dist.metadata["Name"]) for ep in importlib.metadata.entry_points(group=group)]


def scanned(group: str) -> list[tuple[str, str, str]]:
    return [(name, value, dist.metadata["Name"]) for name, value, dist in entry_points(group)]


def test_the_scanner_finds_what_importlib_metadata_finds_in_this_environment():
    got = scanned("serq")
    assert got == reference("serq")
    assert {name for name, _, _ in got} >= {"host", "ir", "frontend", "sim", "report", "vllm"}
    assert scanned("console_scripts") == reference("console_scripts")


def test_the_version_comes_from_the_metadata():
    assert serq.__version__ == importlib.metadata.version("serq")


def dist_info(site, folder: str, name: str, version: str, entry_points: str | None) -> None:
    d = site / folder
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: x\n\nbody\n")
    if entry_points is not None:
        (d / "entry_points.txt").write_text(entry_points)


@pytest.fixture
def sites(tmp_path, monkeypatch):
    """Two site folders ahead of sys.path, holding fake distributions (two of one name) and their modules."""
    one, two = tmp_path / "site-one", tmp_path / "site-two"
    one.mkdir()
    two.mkdir()
    dist_info(one, "demo_pkg-1.0.dist-info", "demo-pkg", "1.0",
              f"[console_scripts]\ndemo = demo_first:main\n\n[{GROUP}]\n# a comment\ndemo = demo_first\n"
              f"tool = demo_first:Tool.inner\nbarred = demo_barred\n")
    (one / "demo_first.py").write_text("class Tool:\n    class inner:\n        pass\n")
    (one / "demo_barred.py").write_text("raise RuntimeError('a blocked plugin is never imported')\n")
    # the same distribution further along the path (another spelling): importlib.metadata skips it whole
    dist_info(two, "Demo.Pkg-2.0.dist-info", "Demo.Pkg", "2.0", f"[{GROUP}]\ndemo = demo_second\nonly_in_second = demo_second\n")
    (two / "demo_second.py").write_text("raise RuntimeError('a shadowed distribution is never imported')\n")
    # another distribution of the second folder: an entry point name already taken is skipped
    dist_info(two, "other-0.3.dist-info", "other", "0.3", f"[{GROUP}]\nthird = demo_third\ndemo = demo_second\n")
    (two / "demo_third.py").write_text("")
    # metadata without entry points, and an egg-info file, take part in the first-wins rule too
    dist_info(two, "plain-1.dist-info", "plain", "1", None)
    (two / "shadowed.egg-info").write_text("Metadata-Version: 1.0\nName: shadowed\nVersion: 9\n")
    dist_info(two, "shadowed-1.0.dist-info", "shadowed", "1.0", f"[{GROUP}]\nnever = demo_second\n")
    monkeypatch.syspath_prepend(str(two))
    monkeypatch.syspath_prepend(str(one))
    for m in ("demo_first", "demo_barred", "demo_second", "demo_third"):
        monkeypatch.delitem(sys.modules, m, raising=False)
    return one, two


def test_the_first_distribution_of_a_name_wins(sites):
    got = scanned(GROUP)
    assert got == reference(GROUP)
    assert got == [("demo", "demo_first", "demo-pkg"), ("tool", "demo_first:Tool.inner", "demo-pkg"),
                   ("barred", "demo_barred", "demo-pkg"), ("third", "demo_third", "other"),
                   ("demo", "demo_second", "other")]


def test_loading_skips_blocked_names(sites):
    # (the name `demo` of the distribution `other` is taken by demo-pkg's: test_a_taken_name_is_one_error)
    ep = sites[1] / "other-0.3.dist-info" / "entry_points.txt"
    ep.write_text(ep.read_text().replace("demo = demo_second\n", ""))
    pm = plugins.PluginManager()
    pm.set_blocked("barred")
    assert load_entry_points(pm, GROUP) == 3
    import demo_first
    import demo_third

    assert pm.get_plugin("demo") is demo_first
    assert pm.get_plugin("tool") is demo_first.Tool.inner
    assert pm.get_plugin("third") is demo_third
    assert "demo_barred" not in sys.modules and "demo_second" not in sys.modules
    assert not pm.has_plugin("only_in_second") and not pm.has_plugin("never")
    # the distribution of each, its metadata read only when asked for
    dists = pm.list_plugin_distributions() if hasattr(pluggy.PluginManager, "list_plugin_distributions") \
        else pm._scanned_distinfo
    # the three plugins loaded, in both of pluggy's listings (an empty list would pass the next line)
    assert {p for p, _ in dists} == {p for p, _ in pm.list_plugin_distinfo()} == {demo_first, demo_first.Tool.inner,
                                                                                   demo_third}
    assert all(d._meta is None for _, d in dists)
    info = {p: (d.project_name, d.version) for p, d in pm.list_plugin_distinfo()}
    assert info[demo_first] == ("demo-pkg", "1.0") and info[demo_third] == ("other", "0.3")
    assert plugins.provider_name(pm, demo_third) == "third (other 0.3)"


def test_a_taken_name_is_one_error(sites):
    # pluggy would skip the second `demo` silently: its plugin would not be there, with nothing to say why
    pm = plugins.PluginManager()
    pm.set_blocked("barred")
    with pytest.raises(plugins.PluginError) as e:
        load_entry_points(pm, GROUP)
    assert str(e.value).split("\n") == [
        "error: plugin 'demo' (from other 0.3) cannot be loaded (demo_second): its name is taken by the plugin "
        "'demo' of demo-pkg 1.0; entry points of the group 'serq' need names of their own",
        "(run without it: uninstall other, or ask its authors to rename its entry point)"]
    assert "demo_second" not in sys.modules


def test_an_already_registered_name_is_skipped(sites):
    pm = plugins.PluginManager()
    mine = object()
    pm.register(mine, name="demo")
    pm.set_blocked("barred")
    load_entry_points(pm, GROUP)
    assert pm.get_plugin("demo") is mine
    assert "demo_second" not in sys.modules


def test_serq_disabled_plugins_blocks_a_third_party_plugin(tmp_path, monkeypatch):
    site = tmp_path / "site"
    dist_info(site, "serq_thirdparty-2.5.dist-info", "serq-thirdparty", "2.5", "[serq]\nthirdparty = serq_thirdparty\n")
    (site / "serq_thirdparty.py").write_text("")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "serq_thirdparty", raising=False)
    pm = get_plugin_manager()
    got = {p["name"]: p for p in plugin_info(pm)}
    assert got["thirdparty"]["distribution"] == "serq-thirdparty" and got["thirdparty"]["version"] == "2.5"
    assert got["sim"]["distribution"] == "serq-sim"
    monkeypatch.delitem(sys.modules, "serq_thirdparty")
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", "thirdparty,vllm")
    pm = get_plugin_manager()
    assert not pm.has_plugin("thirdparty") and not pm.has_plugin("vllm") and pm.has_plugin("sim")
    assert "serq_thirdparty" not in sys.modules


def test_a_zip_on_the_path_is_left_to_importlib_metadata(tmp_path, monkeypatch):
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 1.0\n")
        z.writestr("zipped-1.0.dist-info/entry_points.txt", f"[{GROUP}]\nzipped = zipped_plugin\n")
        z.writestr("zipped_plugin.py", "")
    monkeypatch.syspath_prepend(str(archive))
    monkeypatch.delitem(sys.modules, "zipped_plugin", raising=False)
    with pytest.raises(_Unusual):
        entry_points(GROUP)
    pm = plugins.PluginManager()
    assert load_entry_points(pm, GROUP) == 1
    assert pm.get_plugin("zipped") is sys.modules["zipped_plugin"]
    assert {d.project_name for _, d in pm.list_plugin_distinfo()} == {"zipped"}
    assert plugins.find_distribution("zipped").version == "1.0"


def test_metadata_headers():
    d = plugins._headers("Name: a-b\nVersion: 1.2\nClassifier: x\nClassifier: y\nSummary: one\n  two\n\nName: body\n")
    assert d["name"] == "a-b" and d["Name"] == "a-b" and d["VERSION"] == "1.2"
    assert d["Classifier"] == "x" and d["Summary"] == "one\ntwo" and d["Author"] is None
    assert Distribution("/nonexistent.dist-info").version is None


def test_the_command_does_not_import_importlib_metadata(tmp_path):
    probe = ("import sys, runpy\nsys.argv = ['serq', 'plugins']\n"
             "try:\n    runpy.run_module('serq', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print('importlib.metadata' in sys.modules, 'email' in sys.modules)\n")
    import subprocess

    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    *listing, last = r.stdout.splitlines()
    assert last == "False False"
    assert {p["name"] for p in json.loads("\n".join(listing))} >= {"host", "frontend", "sim"}


def test_version_flag_names_the_distribution_version():
    r = run_serq("--version")
    assert r.stdout == f"serq, version {importlib.metadata.version('serq')}\n"


def test_the_importlib_metadata_backports_finder_is_not_unusual(monkeypatch):
    # importing Dask puts the importlib_metadata backport's MetadataPathFinder on sys.meta_path; it reads the
    # same .dist-info folders, so the scan stays on its own path (it fell back, and these tests failed in a
    # suite that had imported Dask first)
    try:
        from importlib_metadata import MetadataPathFinder  # installed with Dask on Python 3.11
    except ImportError:  # Python 3.12+: a class of the same name and module stands in for it
        MetadataPathFinder = type("MetadataPathFinder", (), {"__module__": "importlib_metadata",  # noqa: N806
                                                             "find_distributions": lambda self, *a: iter(())})
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, MetadataPathFinder()])
    assert scanned("serq") == reference("serq")



names = st.text(st.sampled_from("aZ09_-.é:[] \n"), max_size=12)


class _Trail:
    """What load_object imported and looked up, in order."""

    def __init__(self, trail: list[str]):
        self.trail = trail

    def __getattr__(self, name: str):
        self.trail.append(name)
        return self


@settings(max_examples=500, deadline=None, derandomize=True)
@given(names)
def test_names_and_targets_read_as_the_regular_expressions_read_them(text):
    # normalize_name and load_object read plain names with str methods, anything else with the regular
    # expressions they always used (PEP 503's rule; EntryPoint's pattern)
    import importlib
    import re

    assert plugins.normalize_name(text) == re.sub(r"[-_.]+", "-", text).lower().replace("-", "_")
    match = re.match(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$", text)
    trail: list[str] = []
    saved = importlib.import_module
    importlib.import_module = lambda name: trail.append(name) or _Trail(trail)
    try:
        plugins.load_object(text)
    except plugins.BadEntryPoint:  # (its callers name the plugin: test_plugin_authors_entry_points.py)
        assert match is None
        return
    finally:
        importlib.import_module = saved
    assert match is not None
    assert trail == [match.group("module"), *[a for a in (match.group("attr") or "").split(".") if a]]
