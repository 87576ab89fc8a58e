"""An IR file of a long name that serq_ir.load refuses is named in the message as every message names a file
(serq.errors.shown_path: cut around '…' past 240 characters), as its 'cannot read' already was: the
decoding's and the validation's messages printed the name whole (a first line of 711 characters for a file
in a folder of 600)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_ir
from serq.errors import shown_path

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")


def _long(tmp_path: Path) -> Path:
    folder = tmp_path / ("y" * 200) / ("z" * 200) / ("w" * 200)
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize(("data", "head"), [
    (b'{"x": 1}', "error: {shown}: IR version null is not supported (this serq-ir reads version 2) - at '$.version'"),
    (b'\xff\xfe', "{shown}:1:1: error: "),
    (b'{"version": 2, "x": [1,\n 2', "{shown}:2:3: error: "),
])
def test_the_name_is_cut(tmp_path, data, head):
    p = _long(tmp_path) / "p.ir.json"
    p.write_bytes(data)
    shown = shown_path(p)
    assert len(shown) == 240 and "…" in shown
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.load(p)
    message = str(e.value)
    assert message.startswith(head.format(shown=shown)), message[:600]
    assert str(p) not in message
    r = subprocess.run([SERQ, "run", str(p)], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(head.format(shown=shown)), r.stderr[:600]
    assert str(p) not in r.stderr
