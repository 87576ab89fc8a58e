"""A plugin author's entry point gone wrong, as the distribution ships it (a ``*.dist-info`` with its
``entry_points.txt`` on ``PYTHONPATH``): every mistake is one message naming the plugin (or, when no
plugin can be named, the distribution), status 1, no traceback (docs/hooks.md)."""

from __future__ import annotations

import zipfile

import pytest
from host_helpers import run_serq

pytestmark = pytest.mark.timeout(120)

MODULE = "from serq import hookimpl\nok = 1\n"
HINT = "(run without it: SERQ_DISABLED_PLUGINS=author, or uninstall authorplug)"


def _site(tmp_path, lines: str):
    site = tmp_path / "site"
    info = site / "authorplug-0.2.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: authorplug\nVersion: 0.2\n")
    (info / "entry_points.txt").write_text(f"[console_scripts]\nbroken line of another group\n[serq]\n{lines}\n")
    (site / "author_mod.py").write_text(MODULE)
    return site


def _one_message(r, first: str, second: str) -> None:
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [first, second], r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize(("line", "value"), [("author = author mod", "author mod"),
                                             ("author = author_mod:", "author_mod:"),
                                             ("author =", "")])
def test_a_value_that_names_no_module_names_the_plugin(tmp_path, line, value):
    r = run_serq("--version", env={"PYTHONPATH": str(_site(tmp_path, line))})
    _one_message(r, f"error: plugin 'author' (from authorplug 0.2) cannot be loaded ({value}): its entry point's "
                    f"value {value!r} is not `module` or `module:attribute`", HINT)


def test_an_attribute_the_module_lacks_is_not_put_at_a_line_of_serq(tmp_path):
    r = run_serq("--version", env={"PYTHONPATH": str(_site(tmp_path, "author = author_mod:nope"))})
    _one_message(r, "error: plugin 'author' (from authorplug 0.2) cannot be loaded (author_mod:nope): "
                    "AttributeError: module 'author_mod' has no attribute 'nope'", HINT)


@pytest.mark.parametrize("line", ["author author_mod", "= author_mod"])
def test_a_line_that_is_no_entry_point_names_the_distribution(tmp_path, line):
    site = _site(tmp_path, line)
    r = run_serq("run", "x.sq", env={"PYTHONPATH": str(site)})
    path = site / "authorplug-0.2.dist-info" / "entry_points.txt"
    _one_message(r, f"error: the entry points of authorplug 0.2 cannot be read ({path}): the line {line!r} of its "
                    "[serq] section is not `name = value`", "(run without it: uninstall authorplug)")


def test_a_bad_line_of_another_group_is_not_serqs_to_judge(tmp_path):
    r = run_serq("--version", env={"PYTHONPATH": str(_site(tmp_path, "author = author_mod"))})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("serq, version")


def test_through_importlib_metadata_too(tmp_path):
    """A zip file on the path sends the search to ``importlib.metadata``, whose own parse of the bad line is
    a TypeError: one message all the same."""
    site = _site(tmp_path, "author author_mod")
    zipped = tmp_path / "empty.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("nothing.txt", "")
    r = run_serq("--version", env={"PYTHONPATH": f"{zipped}:{site}"})
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 2, r.stderr
    assert lines[0].startswith("error: the installed distributions' entry points cannot be read: TypeError")
    assert lines[1].startswith("(a distribution's entry_points.txt is not `name = value` lines")


LAZY = '''from serq import hookimpl
from serq.cli import LazyCommand


@hookimpl
def serq_register_commands(register):
    register(LazyCommand("authorcmd", "author cmd"))
'''


def test_a_lazy_command_whose_target_names_no_module(tmp_path):
    site = _site(tmp_path, "author = author_mod")
    (site / "author_mod.py").write_text(LAZY)
    r = run_serq("authorcmd", env={"PYTHONPATH": str(site)})
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[0] == ("error: the command 'authorcmd' (registered by author (authorplug 0.2)) "
                                        "cannot be loaded: its target 'author cmd' is not `module` or "
                                        "`module:attribute`")
