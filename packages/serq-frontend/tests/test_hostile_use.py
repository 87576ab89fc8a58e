"""`use "F";` naming a file the system will not even look up: one located error at the `use`.

A name longer than the system takes (a component past NAME_MAX, a path past PATH_MAX) made the lookup
raise ENAMETOOLONG, which came out as `error: aaaa…(5 MB)….sq: File name too long`: no position in the
program, and the whole name repeated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend

SERQ = str(Path(sys.executable).parent / "serq")
TAIL = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"


@pytest.mark.parametrize("name", ["a" * 300 + ".sq", "a/" * 3000 + "b.sq", "a" * 1_000_000 + ".sq"])
def test_a_use_of_a_name_too_long_to_look_up_is_located_at_the_use(tmp_path, name):
    prog = tmp_path / "p.sq"
    prog.write_text(f'stage t : delay;\nuse "{name}";\n' + TAIL)
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(prog)
    first = str(e.value).splitlines()[0]
    assert first.startswith(f'{prog}:2:1: error: `use "') and first.endswith(": File name too long"), first
    assert "cannot look for" in first and len(first) < 400 + len(str(prog)) * 2, first[:500]


def test_the_command_says_it_once_without_a_traceback(tmp_path):
    (tmp_path / "p.sq").write_text(f'use "{"a" * 5000}.sq";\n' + TAIL)
    for command in ("check", "run", "ir", "ast"):
        r = subprocess.run([SERQ, command, "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
        if command == "ast":  # the AST is the parse: no `use` is looked up
            assert r.returncode == 0, r.stderr
            continue
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        lines = r.stderr.splitlines()
        assert lines[0].startswith('p.sq:1:1: error: `use "aaaa') and len(lines) == 3, r.stderr[:500]
        assert lines[2].strip() == "^"
