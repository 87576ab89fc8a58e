"""Environment variables of many values are said in one message of a bounded width.

`SERQ_DISABLED_PLUGINS` naming 20 000 plugins that none is called gave 20 000 warnings, one a line, before
every command's output, and a name of 100 000 characters was printed whole; it is now one warning naming the
first five (each cut as a message cuts a name) and how many more. A `SERQ_PATH` of 9 000 folders made a
missing library's error one line of 134 000 characters listing them all; it now lists the first eight and
how many more.
"""

from __future__ import annotations

from host_helpers import run_serq

PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"
TAIL = ", which no installed plugin is called (`serq plugins` lists their names)\n"


def test_many_disabled_names_no_plugin_has_are_one_warning(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    names = ",".join(f"p{i}" for i in range(20_000))
    r = run_serq("check", "p.sq", env={"SERQ_DISABLED_PLUGINS": names + ",sim"}, cwd=tmp_path)
    # sim is blocked (check needs only the frontend); the others are said once, sorted, five and the count
    assert r.returncode == 0 and r.stdout.startswith("OK: 0 pool(s), 1 stage(s)"), r.stderr
    assert r.stderr == "warning: SERQ_DISABLED_PLUGINS names 'p0', 'p1', 'p10', 'p100', 'p1000' and 19995 more" + TAIL


def test_a_few_and_long_disabled_names(tmp_path):
    r = run_serq("plugins", env={"SERQ_DISABLED_PLUGINS": "zz, aa,zz,mm"}, cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "warning: SERQ_DISABLED_PLUGINS names 'aa', 'mm' and 'zz'" + TAIL
    r = run_serq("plugins", env={"SERQ_DISABLED_PLUGINS": "y" * 100_000}, cwd=tmp_path)
    assert r.returncode == 0
    # cut to 120 characters as a message cuts a name it quotes: its first 60, an ellipsis, its last 59
    assert r.stderr == f"warning: SERQ_DISABLED_PLUGINS names '{'y' * 59}…{'y' * 58}'" + TAIL


def test_a_library_no_folder_of_a_long_serq_path_has(tmp_path):
    (tmp_path / "p.sq").write_text('use "nolib.sq";\n' + PROGRAM)
    folders = [f"/nq{i}" for i in range(6_000)]  # (folders that do not exist; the variable's value < 128 KiB)
    r = run_serq("check", "p.sq", env={"SERQ_PATH": ":".join(folders)}, cwd=tmp_path)
    assert r.returncode == 1
    first = r.stderr.splitlines()[0]
    listed = ", ".join(folders[:7])
    # the program's folder, then SERQ_PATH's; the library folders of the installed parts after those
    assert first.startswith(f'p.sq:1:1: error: `use "nolib.sq"`: no such library (looked in ., {listed} and '), first
    assert first.endswith(" more folders)"), first
    assert len(first) < 2_000
