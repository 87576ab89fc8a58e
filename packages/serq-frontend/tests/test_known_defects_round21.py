"""Known defects of the front end, round 21: a caller's `set` that a statement definition overwrites unread.

lib/vllm.sq's `vllm_request` sets `runs`, `known`, `c`, `hit_tokens`, `had`, `t_admit` and `t_first` before it
reads them. A `let` of such a name is refused, but a program could `set runs = 2;` before the call and the
library overwrote it silently: whatever read `runs` after the call read the library's count. Every use of a
statement definition now warns at each `set` of the caller's own text, before the use, of an attribute the
body sets before reading it (serq_frontend.sugar.defs.first_sets), naming the use and the body's setting;
the IR is the same. A body that reads the attribute first (`set n = n + 1`) takes the caller's value, and a
`set` in its branch may not run: no warning (docs/language.md, "Definitions")."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_ir

pytestmark = pytest.mark.timeout(60)

VLLM = """use "vllm.sq";
let bs = 16;
pool reqs { cap 4; admit via engine; }
pool kv { cap 100 * bs; block bs; evict lru; preempt lifo; }
stage engine : step {
  budget 64;
  cost 0.01;
  memory kv;
}
workload { arrive poisson(1); }
session {
  set t0 = now;
BEFORE
  vllm_request(reqs, kv, engine, 10, 5, t0);
  observe r = runs;
  end;
}
run { horizon 10; seed 1; }
"""


def _compile(capsys, src):
    ir = serq_ir.encode_pretty(serq_frontend.compile(source=src), spans=False)
    return ir, capsys.readouterr().err


def _warnings(err):
    return [line for line in err.splitlines() if ": warning: " in line]


def test_a_set_the_library_overwrites_is_told_at_the_set(capsys):
    plain_ir, err = _compile(capsys, VLLM.replace("BEFORE\n", ""))
    assert err == ""
    ir, err = _compile(capsys, VLLM.replace("BEFORE", "  set runs = 2;"))
    lines = err.splitlines()
    assert len(_warnings(err)) == 1
    head = lines[0]
    assert head.startswith("<source>:13:3: warning: `runs` is set here, and the use of `vllm_request` at "
                           "<source>:14:3 sets it again before reading it (")
    # the library's own `set runs = 0;`, its file and line
    library = head.split("before reading it (", 1)[1].split(")", 1)[0]
    path, line, col = library.rsplit(":", 2)
    assert path.endswith("vllm.sq")
    with open(path, encoding="utf-8") as f:
        assert f.read().splitlines()[int(line) - 1][int(col) - 1:].startswith("set runs = 0;")
    assert head.endswith("from that use on it holds `vllm_request`'s value, not this one; give this attribute "
                         "another name")
    assert lines[1:] == ["    set runs = 2;", "    ^"]
    # a warning, not an error: the program compiles, the caller's set one more statement
    assert ir.count('"kind": "Set"') == plain_ir.count('"kind": "Set"') + 1


@pytest.mark.parametrize("name", ["known", "c", "hit_tokens", "had", "runs", "t_admit", "t_first"])
def test_every_attribute_the_library_sets_first_is_told(capsys, name):
    _, err = _compile(capsys, VLLM.replace("BEFORE", f"  set {name} = 1;"))
    assert _warnings(err) and f"`{name}` is set here" in _warnings(err)[0], err


def test_a_set_after_the_use_or_of_another_name_is_not_told(capsys):
    _, err = _compile(capsys, VLLM.replace("BEFORE", "  set mine = 2;").replace(
        "  observe r = runs;", "  observe r = runs;\n  set runs = 7;"))
    assert err == ""


DEFS = """def zero() { set n = 0; }
def bump() { set n = n + 1; }
def maybe() { branch (now > 1) { set n = 0; } }
stage s : delay;
workload { arrive poisson(1); }
session {
BODY
  observe x = n;
  end;
}
run { horizon 10; seed 1; }
"""


@pytest.mark.parametrize("body, told", [
    ("  set n = 5;\n  zero();", True),           # overwritten unread: the 5 is lost
    ("  set n = 5;\n  bump();", False),          # read first: the body takes the caller's 5
    ("  set n = 5;\n  maybe();", False),         # may not run
    ("  zero();\n  zero();", False),             # the first use's set is the definition's, not the caller's
    ("  zero();\n  set n = 5;", False),          # after the use
    ("  branch (now > 1) { set n = 5; }\n  zero();", True),  # a set in a branch before the use
])
def test_a_user_definition_follows_the_same_rule(capsys, body, told):
    _, err = _compile(capsys, DEFS.replace("BODY", body))
    assert bool(_warnings(err)) is told, err
    if told:
        assert "`n` is set here, and the use of `zero` at " in err and "<source>:1:14)" in err


def test_a_definition_body_that_sets_before_its_own_use_is_told_once_at_its_definition(capsys):
    src = DEFS.replace("BODY", "  wrap();").replace("stage s", "def wrap() { set n = 5; zero(); }\nstage s")
    _, err = _compile(capsys, src)
    assert len(_warnings(err)) == 1 and err.startswith("<source>:4:14: warning: `n` is set here"), err
