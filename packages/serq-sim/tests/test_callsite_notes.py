"""A run-time error in a definition's body names the uses that expanded it.

The error is told at the body's statement, then, as a compile-time error there is, one note a use, the
innermost first: ``FILE:LINE:COL: note: in the expansion of `NAME`, used here``, the use's line and a
caret. The IR carries the uses in the span of every node a use expanded (serq_ir.nodes.ExpandedSpan,
``{"file", "line", "col", "via"}``); a span no use expanded is written ``[file, line, col]`` as before.
The expected messages below are read off the programs' text (lines, columns), not off a run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq_ir import nodes as N
from serq_sim.compile import walk
from serq_sim.fast import tier as fast_tier

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples").rglob("*.sq"))

TWICE = """stage s : fifo;
def go(w) { run s (w); }
workload { arrive batch(1); }
session {
  go(1);
  go(serial - 1);
  end;
}
run { horizon 10; }
"""

NESTED = """stage s : fifo;
def inner(w) { run s (w); }
def outer(w) { inner(w); }
workload { arrive batch(1); }
session {
  outer(2);
  outer(serial - 1);
  end;
}
run { horizon 10; }
"""

# vLLM's library with an output of 0 tokens: its decode of o - 1 tokens is a negative work
VLLM_USER = """use "vllm.sq";

pool reqs { cap 4; admit via engine; }
pool kv { cap 1024; block 16; evict lru; preempt lifo; }
stage engine : step {
  budget 64;
  cost 0.01;
  memory kv;
}

workload { arrive batch(1); }

session {
  set t0 = now;
  vllm_request(reqs, kv, engine, 8, 0, t0);
  end;
}

run { horizon 100; }
"""

NO_DEFS = """pool p { cap 2; }
stage s : fifo;
workload { arrive poisson(1); }
session {
  hold p (1) {
    run s (~exp(1));
  }
  observe r = now;
  end;
}
run { horizon 10; }
"""


def _write(tmp_path: Path, text: str, name: str = "p.sq") -> Path:
    f = tmp_path / name
    f.write_text(text)
    return f


def _error(path: Path, tier: str, monkeypatch) -> str:
    """The run-time error of the program at ``path`` on ``tier`` (``SERQ_SIM_TIER``)."""
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    program = serq_frontend.compile(path)
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(program)
    return str(e.value)


def _caret(col: int) -> str:
    return "  " + " " * (col - 1) + "^"


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_the_second_use_of_a_definition_is_named_not_the_first(tmp_path, monkeypatch, tier):
    f = _write(tmp_path, TWICE)
    # go(1) runs 1 unit on s from t=0 to t=1; then go(serial - 1) of session 0 runs -1
    assert _error(f, tier, monkeypatch).split("\n") == [
        f"{f}:2:13: error: at t=1, session 0: the run's work is negative (-1)",
        "  def go(w) { run s (w); }", _caret(13),
        f"{f}:6:3: note: in the expansion of `go`, used here",
        "    go(serial - 1);", _caret(3),
    ]


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_a_nested_definition_names_both_uses_the_innermost_first(tmp_path, monkeypatch, tier):
    f = _write(tmp_path, NESTED)
    # outer(2) runs 2 units (t=0 to 2); outer(serial - 1) reaches inner's run with -1
    assert _error(f, tier, monkeypatch).split("\n") == [
        f"{f}:2:16: error: at t=2, session 0: the run's work is negative (-1)",
        "  def inner(w) { run s (w); }", _caret(16),
        f"{f}:3:16: note: in the expansion of `inner`, used here",
        "  def outer(w) { inner(w); }", _caret(16),
        f"{f}:7:3: note: in the expansion of `outer`, used here",
        "    outer(serial - 1);", _caret(3),
    ]


def _place(path: Path, text: str) -> tuple[int, int]:
    """The line and column (1-based) of the first line of ``path`` holding ``text``, at its first
    non-blank character."""
    for no, line in enumerate(path.read_text().split("\n"), 1):
        if text in line:
            return no, len(line) - len(line.lstrip()) + 1
    raise AssertionError(f"{text!r} is not in {path}")


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_vllm_request_with_a_bad_argument_names_the_users_line(tmp_path, monkeypatch, tier):
    import serq_vllm

    lib = Path(serq_vllm.__file__).parent / "lib" / "vllm.sq"
    decode = _place(lib, "decode on engine (o - 1 - (known - prompt))")
    inner_use = _place(lib, "vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, inf);")
    f = _write(tmp_path, VLLM_USER)
    lines = _error(f, tier, monkeypatch).split("\n")
    assert lines[0].startswith(f"{lib}:{decode[0]}:{decode[1]}: error: at t=")
    assert lines[0].endswith(", session 0: the run's work is negative (-1)")
    assert lines[1].strip() == "decode on engine (o - 1 - (known - prompt)) growing kv;"
    assert lines[3:] == [
        f"{lib}:{inner_use[0]}:{inner_use[1]}: note: in the expansion of `vllm_request_at`, used here",
        "    vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, inf);", _caret(inner_use[1]),
        f"{f}:15:3: note: in the expansion of `vllm_request`, used here",
        "    vllm_request(reqs, kv, engine, 8, 0, t0);", _caret(3),
    ]


@pytest.mark.parametrize(("text", "tier"), [(TWICE, "fast"), (NESTED, "fast"), (VLLM_USER, "general")])
def test_the_error_is_the_same_on_both_tiers(tmp_path, monkeypatch, text, tier):
    f = _write(tmp_path, text)
    fast, general = _error(f, "fast", monkeypatch), _error(f, "general", monkeypatch)
    assert fast == general and "note: in the expansion of" in fast
    # where the fast tier takes the program (not a step stage), both tiers ran it
    monkeypatch.setenv("SERQ_SIM_TIER", "fast")
    assert fast_tier(serq_frontend.compile(f)) == tier


def test_the_command_line_prints_the_notes(tmp_path):
    _write(tmp_path, TWICE)
    out = subprocess.run([sys.executable, "-m", "serq", "run", "p.sq", "--no-progress"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.split("\n")[3:6] == ["p.sq:6:3: note: in the expansion of `go`, used here",
                                           "    go(serial - 1);", _caret(3)]


# ---------------------------------------------------------------------------------------------------
# The IR
# ---------------------------------------------------------------------------------------------------


def _spans(obj):
    """Every span value of a decoded IR JSON (dicts and lists)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "span" and (isinstance(v, list) or "via" in v):
                yield v
            else:
                yield from _spans(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _spans(v)


def _fold(obj):
    """The IR JSON with each expanded span written as the span of a node no use expanded."""
    if isinstance(obj, dict):
        if set(obj) == {"file", "line", "col", "via"}:
            return [obj["file"], obj["line"], obj["col"]]
        return {k: _fold(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_fold(v) for v in obj]
    return obj


def test_a_program_without_definitions_writes_its_spans_as_before(tmp_path):
    program = serq_frontend.compile(_write(tmp_path, NO_DEFS))
    data = serq_ir.encode(program)
    spans = list(_spans(json.loads(data)))
    assert len(spans) >= 8 and b'"via"' not in data
    assert all(isinstance(s, list) and len(s) == 3 and isinstance(s[0], str) for s in spans)
    assert serq_ir.encode(serq_ir.decode(data)) == data


def _plain(program: N.Program) -> bytes:
    """``program`` encoded with each expanded span made a plain one (its uses dropped)."""
    raw = msgspec.json.decode(serq_ir.encode(program))
    return serq_ir.encode(msgspec.convert(_fold(raw), N.Program))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_every_example_differs_from_its_ir_without_uses_by_the_uses_alone(example):
    program = serq_frontend.compile(example)
    data = serq_ir.encode(program)
    plain = _plain(program)
    assert b'"via"' not in plain and all(len(s) == 3 for s in _spans(json.loads(plain)))
    assert msgspec.json.encode(_fold(json.loads(data))) == plain
    if b'"via"' not in data:  # no use expanded a node: the IR is the plain one, byte for byte
        assert data == plain
    else:
        assert any(isinstance(s, dict) for s in _spans(json.loads(data)))
    assert serq_ir.encode(serq_ir.decode(data, name=example.name)) == data
    assert b'"via"' not in serq_ir.encode(serq_ir.strip_spans(program))


def test_the_nodes_of_one_expansion_share_one_tuple_of_uses(tmp_path):
    program = serq_frontend.compile(_write(tmp_path, NESTED))
    spans = [x.span for x in walk(program.session) if isinstance(getattr(x, "span", None),
                                                                                   N.ExpandedSpan)]
    by_uses: dict = {}
    for s in spans:
        by_uses.setdefault(s.via, []).append(id(s.via))
    # outer expanded twice (lines 6 and 7), inner once in each: two expansions, each one tuple for its nodes
    # (the run and its stage's reference)
    assert sorted(tuple((u.name, u.line) for u in v) for v in by_uses) == [
        (("inner", 3), ("outer", 6)), (("inner", 3), ("outer", 7))]
    assert all(len(ids) == 2 and len(set(ids)) == 1 for ids in by_uses.values())


# ---------------------------------------------------------------------------------------------------
# A hostile IR file
# ---------------------------------------------------------------------------------------------------


def _expanded_ir(tmp_path) -> dict:
    return json.loads(serq_ir.encode(serq_frontend.compile(_write(tmp_path, TWICE))))


def _first_expanded(obj):
    if isinstance(obj, dict):
        if isinstance(obj.get("span"), dict):
            return obj
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            found = _first_expanded(v)
            if found is not None:
                return found
    return None


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s.update(via=[]), r"a list of at least 1 item is wanted - at '\$\.session\[0\]\.span\.via'"),
    (lambda s: s.update(via=5), r"a list is wanted, not a whole number - at '\$\.session\[0\]\.span\.via'"),
    (lambda s: s["via"][0].__setitem__(2, 0), r"a whole number at least 1 is wanted - at '\$\.session\[0\]\.span\.via\[0\]\[2\]'"),
    (lambda s: s["via"][0].__setitem__(3, -4), r"a whole number at least 1 is wanted - at '\$\.session\[0\]\.span\.via\[0\]\[3\]'"),
    (lambda s: s["via"][0].__setitem__(0, 7), r"a string is wanted, not a whole number - at '\$\.session\[0\]\.span\.via\[0\]\[0\]'"),
    (lambda s: s["via"][0].pop(), r"a list of 4 items is wanted - at '\$\.session\[0\]\.span\.via\[0\]'"),
    (lambda s: s["via"][0].append(1), r"a list of 4 items is wanted - at '\$\.session\[0\]\.span\.via\[0\]'"),
    (lambda s: s.pop("via"), r"the field 'via' is missing - at '\$\.session\[0\]\.span'"),
    (lambda s: s.update(more=1), r"Object contains unknown field 'more' - at '\$\.session\[0\]\.span\.more'"),
])
def test_a_malformed_via_is_refused_at_its_path(tmp_path, change, message):
    ir = _expanded_ir(tmp_path)
    change(_first_expanded(ir)["span"])
    f = tmp_path / "h.ir.json"
    f.write_text(json.dumps(ir))
    with pytest.raises(serq_ir.IRError, match=message):
        serq_ir.load(f)


def test_a_malformed_via_is_one_message_on_the_command_line(tmp_path):
    ir = _expanded_ir(tmp_path)
    _first_expanded(ir)["span"]["via"][0][1] = None
    (tmp_path / "h.ir.json").write_text(json.dumps(ir))
    out = subprocess.run([sys.executable, "-m", "serq", "run", "h.ir.json", "--no-progress"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith("h.ir.json:1:") and "a string is wanted, not null" in out.stderr


def test_a_use_in_a_file_that_is_no_source_is_named_not_quoted(tmp_path):
    ir = _expanded_ir(tmp_path)
    for node in ir["session"]:
        if isinstance(node.get("span"), dict):
            node["span"]["via"] = [["g\x1b[2J", "/etc/passwd", 1, 1]]
    program = serq_ir.decode(json.dumps(ir))
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(program)
    lines = str(e.value).split("\n")
    assert lines[3:] == ["/etc/passwd:1:1: note: in the expansion of `g\\x1b[2J`, used here"]


def test_a_span_of_four_items_is_refused_at_its_path(tmp_path):
    # a span is [file, line, col] or the object form; as an array-like struct, a fourth item was refused with
    # "Expected 'array' of at most length 3" at '$', no place in the file
    ir = _expanded_ir(tmp_path)
    ir["stages"][0]["span"].append(9)
    f = tmp_path / "h.ir.json"
    f.write_text(json.dumps(ir))
    with pytest.raises(serq_ir.IRError, match=r"a list of 3 items is wanted - at '\$\.stages\[0\]\.span'"):
        serq_ir.load(f)


def test_the_files_the_spans_name_include_the_uses_and_the_bodies(tmp_path):
    # serq run refuses to write over them (serq_sim.cli): a library whose every node a use expanded was
    # missing from them, and `serq run p.sq -o lib.sq` wrote over the library
    from serq_ir.analysis import span_files

    (tmp_path / "lib.sq").write_text("def go(w) { run s (w); }\n")
    f = _write(tmp_path, 'use "lib.sq";\n' + TWICE.replace("def go(w) { run s (w); }\n", ""))
    assert sorted(span_files(serq_frontend.compile(f))) == sorted([str(f), str(tmp_path / "lib.sq")])
