"""An IR file's declared names are printable text, which the summary CSV report, a records file's header and
a dump's files print as they are: a name that begins with ``=``, ``+``, ``-`` or ``@`` made a CSV cell a
spreadsheet reads as a formula (formula injection: ``{"name": "=HYPERLINK(…)"}`` of an observe is the summary's
cell). Such a name is refused at its JSON path (serq_ir.validate.FORMULA_START); a source's names are
identifiers, which never begin so, and a name holding one of them further in is still taken."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_ir
from serq_ir.validate import FORMULA_START

SOURCE = """stage s : delay;
workload { arrive poisson(1); }
session { set t0 = now; run s (1); observe resp = now - t0; record r { x = now; } }
run { horizon 5; seed 1; }
"""


@pytest.fixture(scope="module")
def ir():
    return json.loads(serq_ir.encode(serq_frontend.compile(source=SOURCE)))


def _renamed(doc: dict, where: str, name: str) -> bytes:
    doc = json.loads(json.dumps(doc))
    if where == "observe":
        doc["observes"][0]["name"] = name
    elif where == "stage":
        doc["stages"][0]["name"] = name
    else:
        doc["records"][0]["columns"][0] = name
    return json.dumps(doc).encode()


@pytest.mark.parametrize("first", list(FORMULA_START))
@pytest.mark.parametrize("where, path", [("observe", "$.observes[0].name"), ("stage", "$.stages[0].name"),
                                         ("column", "$.records[0].columns[0]")])
def test_a_name_that_begins_a_formula_is_refused(ir, first, where, path):
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(_renamed(ir, where, f"{first}1+2"))
    said = str(e.value)
    assert f"the name '{first}1+2' begins with '{first}', which a spreadsheet reads as a formula" in said
    assert path in said


def test_such_characters_inside_a_name_are_taken(ir):
    program = serq_ir.decode(_renamed(ir, "observe", "a=1+2@b"))
    assert program.observes[0].name == "a=1+2@b"


def test_serq_run_of_such_an_ir_file_is_one_error(tmp_path, ir):
    (tmp_path / "bad.ir.json").write_bytes(_renamed(ir, "observe", "=HYPERLINK(\"x\")"))
    r = subprocess.run([str(Path(sys.executable).parent / "serq"), "run", "bad.ir.json", "--no-progress", "--format",
                        "csv"], capture_output=True, text=True, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith("bad.ir.json:") and "begins with '='" in r.stderr and "Traceback" not in r.stderr
