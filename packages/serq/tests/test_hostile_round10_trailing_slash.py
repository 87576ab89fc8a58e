"""A file's name that ends in ``/`` names a folder, and every serq command refuses it where a file is given.

The system reads ``p.sq/`` as a folder that does not exist (``cat p.sq/``: "Not a directory"); pathlib, and
so every loader, read it as ``p.sq``. ``serq check p.sq/`` and ``serq run p.sq/`` ran the program, and
``serq sweep p.sq p.sq/`` ran one program as two programs (its check that one file is not given twice, which
refuses ``p.sq ./p.sq``, could not stat ``p.sq/``). Now the type of every file parameter
(serq.options.Path) refuses such a name, a usage error (status 2) before anything is read or written.
"""

from __future__ import annotations

import pytest

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); observe x = now; }\nrun { horizon 5; }\n"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args, param", [
    (["check", "p.sq/"], "'FILE'"),
    (["ir", "p.sq/"], "'[FILE]'"),
    (["fmt", "p.sq/"], "'FILES...'"),
    (["run", "p.sq/"], "'FILE'"),
    (["run", "p.sq", "-o", "r.txt/"], "'-o' / '--output'"),
    (["run", "p.sq", "--records", "r.csv/"], "'--records'"),
    (["sweep", "p.sq", "p.sq/"], "'FILES...'"),
])
def test_a_file_named_with_a_trailing_slash_is_a_usage_error(tmp_path, monkeypatch, capsys, args, param):
    from serq.cli import _main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    code = _main(args)
    out, err = capsys.readouterr()
    name = next(a for a in args if a.endswith("/"))
    assert code == 2 and out == ""
    assert err.startswith(f"error: invalid value for {param}: '{name}': a name ending in / names a folder; a file "
                          "is given here (see 'serq "), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]  # nothing written
