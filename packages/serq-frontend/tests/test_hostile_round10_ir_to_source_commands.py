"""``serq fmt`` and ``serq ast`` given an IR file say it is one, and change nothing.

``serq fmt prog.ir.json`` (or a glob that caught one, ``serq fmt out/*``) said ``prog.ir.json:1:1: error:
unexpected `{` (expected a name)``, a parse error of a file that is no serQ source, and ``serq ast`` the
same; the user had given the IR that ``serq check``, ``serq ir`` and ``serq run`` read. Either command now
refuses an IR file by its name, before it reads any file (serq_frontend.commands), so ``serq fmt a.sq
p.ir.json`` leaves ``a.sq`` as it was too.
"""

from __future__ import annotations

import msgspec
import pytest

OLD = "stage s:fifo;\nworkload{arrive batch(1);}\nsession{run s(1);}\n"


def _serq(capsys, *args: str) -> tuple[int, str, str]:
    from serq.cli import _main

    code = _main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", [["fmt"], ["fmt", "--check"], ["ast"], ["ast", "--desugar"]])
def test_an_ir_file_is_named_as_one(tmp_path, capsys, command):
    from serq_frontend import compile as compile_source

    ir = tmp_path / "p.ir.json"
    ir.write_bytes(msgspec.json.encode(compile_source(source=OLD)))
    before = ir.read_bytes()
    code, out, err = _serq(capsys, *command, str(ir))
    assert code == (2 if "--check" in command else 1) and out == ""  # (fmt --check: 1 is "would reformat")
    assert err == (f"error: {ir}: an IR file, not serQ source: serq {command[0]} reads a program's source (.sq); "
                   "serq check, ir and run read IR files\n")
    assert ir.read_bytes() == before


@pytest.mark.timeout(60)
def test_fmt_of_source_and_an_ir_file_changes_neither(tmp_path, capsys):
    a = tmp_path / "a.sq"
    a.write_text(OLD)
    ir = tmp_path / "p.ir.json"
    ir.write_text("{}")
    code, out, err = _serq(capsys, "fmt", str(a), str(ir))
    assert code == 1 and out == "" and "an IR file, not serQ source" in err
    assert a.read_text() == OLD
