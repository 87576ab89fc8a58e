"""A file's name whose last part is ``.`` names a folder, and every serq command refuses it where a file is
given, as it refuses a name ending in ``/`` (serq.options.Path, serq.options.folder_ending).

The system reads ``p.sq/.`` as a folder that does not exist (``cat p.sq/.``: "Not a directory"); pathlib,
and so the loaders, read it as ``p.sq``: ``serq check p.sq/.`` said OK, ``serq ir``, ``serq ast`` and ``serq
vllm target`` printed the program's IR, AST and target, ``serq fmt p.sq/.`` formatted ``p.sq``, while ``serq
run p.sq/.`` said "cannot read: Not a directory". Now each is a usage error (status 2) before anything is read
or written.
"""

from __future__ import annotations

import pytest
from serq.options import folder_ending

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); observe x = now; }\nrun { horizon 5; }\n"
UGLY = "stage   s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); observe x = now; }\nrun { horizon 5; }\n"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args, param", [
    (["check", "p.sq/."], "'FILE'"),
    (["ir", "p.sq/."], "'[FILE]'"),
    (["ast", "p.sq/."], "'FILE'"),
    (["fmt", "p.sq/."], "'FILES...'"),
    (["fmt", "--check", "p.sq/./."], "'FILES...'"),
    (["run", "p.sq/."], "'FILE'"),
    (["run", "p.sq", "-o", "r.txt/."], "'-o' / '--output'"),
    (["run", "p.sq", "--records", "sub/r.csv/."], "'--records'"),
    (["sweep", "p.sq", "p.sq/."], "'FILES...'"),
])
def test_a_file_named_with_a_last_part_dot_is_a_usage_error(tmp_path, monkeypatch, capsys, args, param):
    from serq.cli import _main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(UGLY)
    code = _main(args)
    out, err = capsys.readouterr()
    name = next(a for a in args if a.endswith("/."))
    assert code == 2 and out == ""
    assert err.startswith(f"error: invalid value for {param}: '{name}': a name ending in /. names a folder; a "
                          "file is given here (see 'serq "), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]  # nothing written
    assert (tmp_path / "p.sq").read_text() == UGLY  # fmt formatted nothing


@pytest.mark.timeout(60)
def test_a_folder_may_still_be_named_so(tmp_path, monkeypatch, capsys):
    """Where a folder is given (``--dump DIR``), ``DIR/.`` is that folder."""
    from serq.cli import _main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "d").mkdir()
    assert _main(["run", "p.sq", "--dump", "d/.", "--no-progress"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in (tmp_path / "d").iterdir() if p.suffix == ".csv") == ["x.csv"]


def test_folder_ending():
    assert folder_ending("p.sq/") == "/"
    assert folder_ending("p.sq/.") == "/."
    assert folder_ending("a/b/p.sq/.") == "/."
    assert folder_ending("/.") == "/."
    # names of a file (or left to the system: `..`, a name that is only `.`, which click finds a folder)
    for name in ("p.sq", "./p.sq", "a/./p.sq", ".p.sq", "p.sq.", "p.sq/..", ".", "..", "a/.b"):
        assert folder_ending(name) is None, name
