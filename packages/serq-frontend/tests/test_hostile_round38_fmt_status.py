"""serq fmt's statuses as docs/language.md states them (0 all in form, 1 some would be reformatted with
--check, or an error without it, 2 a usage error or an error with --check), and its layout of comments at odd places: after the last token with
no line end, inside an expression, `//` in a string, with CRLF line ends and tabs. Each is a fixed point and
keeps the IR (without spans) of the text it was given."""

from __future__ import annotations

import subprocess

import pytest
import serq_frontend
import serq_ir
from serq_frontend.fmt import format_source
from sqhelpers import SERQ

BODY = ("stage svc : fifo;\nworkload { arrive poisson(1); }\n"
        "session { set t0 = now; run svc (1); observe response = now - t0; end; }\nrun { horizon 10; }\n")


def run(*args, cwd):
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_the_statuses(tmp_path):
    (tmp_path / "good.sq").write_text(format_source(BODY))
    (tmp_path / "loose.sq").write_text(BODY.replace("stage svc : fifo;", "stage   svc:fifo;"))
    (tmp_path / "bad.sq").write_text("let x = ;\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    r = run("fmt", "--check", "good.sq", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    r = run("fmt", "--check", "good.sq", "loose.sq", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (1, "would reformat loose.sq\n", "")
    r = run("fmt", "--check", "loose.sq", "bad.sq", cwd=tmp_path)
    assert (r.returncode, r.stdout) == (2, "") and r.stderr.startswith("bad.sq:1:9: error: unexpected `;`")
    r = run("fmt", "loose.sq", "bad.sq", cwd=tmp_path)
    assert (r.returncode, r.stdout) == (1, "") and r.stderr.startswith("bad.sq:1:9: error:")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing written
    for args in (("fmt", "--check"), ("fmt", "--check", "good.sq", "--nope")):
        r = run(*args, cwd=tmp_path)
        assert (r.returncode, r.stdout) == (2, "") and r.stderr.startswith("error: ")
    r = run("fmt", "loose.sq", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "reformatted loose.sq\n", "")
    assert (tmp_path / "loose.sq").read_text() == format_source(BODY)


ODD = {
    "last comment, no line end": BODY + "// the end",
    "code then comment, no line end": BODY.rstrip("\n") + "  // the end",
    "comment inside an expression": BODY.replace("now - t0;", "now -  // less\n  t0;"),
    "comment between a call's arguments": BODY.replace("poisson(1)", "poisson(  // rate\n1)"),
    "// in a string": BODY.replace("arrive poisson(1); }", 'trace "a//b.csv"; }  // c'),
    "CRLF": BODY.replace("\n", "\r\n"),
    "CRLF and no last line end": BODY.replace("\n", "\r\n").rstrip("\r\n") + " // x",
    "tabs": BODY.replace("set t0", "\tset\tt0").replace("{ arrive", "{\n\t\tarrive"),
}


def ir(text: str) -> bytes:
    return serq_ir.encode_pretty(serq_frontend.compile(source=text), spans=False)


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_comments_and_line_ends(name):
    text = ODD[name]
    once = format_source(text)
    assert format_source(once) == once
    assert ir(once) == ir(text)
    assert "\r\n" in once if "\r\n" in text else "\r" not in once
    assert once.endswith("\r\n" if "\r\n" in text else "\n") and "\t" not in once
    for comment in ("// the end", "// less", "// rate", "// c", "// x"):
        assert (comment in once) == (comment in text)
    if "trace" in text:
        assert 'workload { trace "a//b.csv"; }  // c\n' in once
