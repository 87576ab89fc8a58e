"""What a plugin's sugar layer writes to standard output while ``serq ast`` or ``serq fmt`` parses a program (its
builder's or its rewrite's ``print``, an ``os.write(1, …)``) goes to standard error, as it does while a loader
compiles (test_known_defects_round51_loader_fd): ``serq ast``'s standard output is the JSON alone and ``serq
fmt``'s the files it lists. Before, ``serq ast --desugar p.sq`` began with the plugin's lines, and its output
was no JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PLUGIN = """
import os
from serq import hookimpl
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer


def chat(ctx, pos, children):
    print("building")
    os.write(1, b"fd building\\n")
    return A.SRun([A.Var([("s", None)], pos)], "plain", A.Num(1.0, pos), pos)


def rewrite(module, ctx):
    print("desugaring")
    os.write(1, b"fd desugaring\\n")
    return A.Module(list(module.items), module.file)


@hookimpl
def serq_frontend_register_sugar(register):
    register(SugarLayer("chatty", '%extend stmt: "chat" ";" -> s_chat\\n', {"s_chat": chat}, rewrite))
"""

SOURCE = "stage s : delay;\nworkload { arrive batch(1); }\nsession { chat; run s (1); }\n"


@pytest.fixture
def site(tmp_path):
    site = tmp_path / "site"
    info = site / "serq_chatty51-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-chatty51\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nchatty51 = chatty51\n")
    (site / "chatty51.py").write_text(PLUGIN)
    return {**os.environ, "PYTHONPATH": str(site), "SERQ_COMPILE_CACHE": "0"}


def serq(env, cwd, *args):
    return subprocess.run([sys.executable, "-m", "serq", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("desugar", [[], ["--desugar"]], ids=["parsed", "desugared"])
def test_serq_ast_writes_the_json_alone(tmp_path, site, desugar):
    (tmp_path / "p.sq").write_text(SOURCE)
    r = serq(site, tmp_path, "ast", *desugar, "p.sq")
    assert r.returncode == 0, r.stderr
    items = json.loads(r.stdout)
    assert [s["node"] for s in items[2]["body"]] == ["SRun", "SRun"]
    said = ["building", "fd building"] + (["desugaring", "fd desugaring"] if desugar else [])
    assert r.stderr.splitlines() == said


def test_serq_fmt_lists_the_files_alone(tmp_path, site):
    (tmp_path / "p.sq").write_text(SOURCE.replace("stage s : delay;", "stage s:delay;"))
    r = serq(site, tmp_path, "fmt", "p.sq")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "reformatted p.sq\n"
    assert (tmp_path / "p.sq").read_text() == SOURCE
    assert set(r.stderr.splitlines()) == {"building", "fd building"}
    r = serq(site, tmp_path, "fmt", "--check", "p.sq")
    assert (r.returncode, r.stdout) == (0, "")
