"""An OSError raised in a plugin's own code about a file the user did not name (a loader opening a data
file of its own that is missing) is the plugin's failure, named at its line (docs/hooks.md, "Its code
raises when it is called"); one about a file the command line names (the program the loader was given)
is the user's, said as it is. Before, every OSError with a file name was ``error: FILE: REASON``: a file
the user never named, and no word of the plugin that opened it."""

from __future__ import annotations

from host_helpers import run_serq

PLUGIN = '''
from serq import hookimpl


def load_data(path, options):
    text = open(path).read()
    with open("/nonexistent-serq-plugin-folder/table.csv") as f:  # the plugin's own file, missing
        f.read()
    return text


@hookimpl
def serq_register_loaders(register):
    register(".data", load_data)
'''


def _install(site):
    (site / "osplug.py").write_text(PLUGIN)
    info = site / "osplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: osplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nosplug = osplug\n")


def test_an_os_error_in_a_plugins_code_names_the_plugin_unless_the_file_is_the_users(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _install(site)
    program = tmp_path / "p.data"
    program.write_text("x\n")
    r = run_serq("check", str(program), env={"PYTHONPATH": str(site)})
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert lines[0].startswith("error: plugin 'osplug' (from osplug 1.0) failed in load_data: FileNotFoundError: "), r.stderr
    assert lines[0].endswith(f"at {site / 'osplug.py'}:7"), r.stderr
    assert lines[1] == "(run without it: SERQ_DISABLED_PLUGINS=osplug, or uninstall osplug)"
    # the program the user named, missing: the user's file, said as it is
    missing = tmp_path / "missing.data"
    r = run_serq("check", str(missing), env={"PYTHONPATH": str(site)})
    assert r.returncode == 1
    assert r.stderr == f"error: {missing}: No such file or directory\n", r.stderr
