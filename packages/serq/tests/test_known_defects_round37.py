"""Known defects, round 37, in serq.

2. Telling where a fault of a large JSON file is (serq.jsonin.value_at: an IR file refused at
   ``$.pools[100000]``, a scenario's request) decoded every array and object before the value with
   ``json.JSONDecoder.raw_decode``, most of the time of the refusal: the elements before are now passed over
   by a scan of brackets and strings that builds nothing (one regular expression for the elements before the
   one on the path). What is checked is that nothing is decoded on the way (the work, not the time), and that
   the offsets are those of the values: each value of documents holding escaped quotes, brackets inside
   strings, unicode, nested and deep arrays, written compact and indented, is found where a copy of the
   document with that value (or key) replaced by a marker puts the marker (what precedes a value is the same
   in both texts).
"""

from __future__ import annotations

import copy
import json

import pytest
from serq.jsonin import located_at, value_at

# ---------------------------------------------------------------- 2. a JSON path located without decoding

MARK = "\u2603MARK\u2603"


def _paths(doc, here=()):
    yield here
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*here, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*here, i))


def _replaced(doc, path, key: bool):
    """``doc`` with the value at ``path`` (with ``key``: the key naming it) replaced by :data:`MARK`, the
    objects' order kept."""
    doc = copy.deepcopy(doc)
    if not path:
        return MARK
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if not key:
        parent[last] = MARK
        return doc
    items = list(parent.items())
    parent.clear()
    parent.update((MARK if k == last else k, v) for k, v in items)
    return doc


def _deep(n: int):
    v: object = ["bottom", {"k": "]}"}]
    for i in range(n):
        v = [i, v] if i % 2 else {"d": v, "e": i}
    return v


DOCS = [
    {"pools": [{"name": f"m{i}", "cap": {"kind": "Num", "value": i}} for i in range(40)], "x": 1},
    {"a\"b": ["[", "]", "{", "}", "\\", "\\\"", ",:", {"q\"[": [1, [2, [3, []]], {}]}],
     "uni": ["é", "日本", "\U0001F600", "\u2028"], "n": [None, True, False, -1.5e-3]},
    [[[]], [[], [[1]]], {"": {"": ""}}, "tail"],
    {"deep": [_deep(30), _deep(5), "after", _deep(40), 7]},
]
FORMS = [dict(), dict(indent=2), dict(separators=(",", ":")), dict(indent="\t", ensure_ascii=False),
         dict(ensure_ascii=False, separators=(" , ", " : "))]


@pytest.mark.parametrize("form", range(len(FORMS)))
@pytest.mark.parametrize("doc", range(len(DOCS)))
def test_every_value_and_key_is_located_where_it_is(doc, form):
    d, fmt = DOCS[doc], FORMS[form]
    text = json.dumps(d, **fmt)
    mark = json.dumps(MARK, **{k: v for k, v in fmt.items() if k == "ensure_ascii"})
    n = 0
    for path in _paths(d):
        want = json.dumps(_replaced(d, path, False), **fmt).index(mark)
        assert value_at(text, path) == want, path
        if path and isinstance(path[-1], str):
            assert value_at(text, path, key=True) == json.dumps(_replaced(d, path, True), **fmt).index(mark), path
        n += 1
    assert n > 10
    # no such value: None
    assert value_at(text, ("no such key",)) is None and value_at(text, (10**6,)) is None


def test_a_large_array_is_passed_over_without_decoding_it(monkeypatch):
    d = {"pools": [{"name": f"m{i}", "size": 1, "s": "a\"]}[,", "n": [[i], {"k": [i]}]} for i in range(3000)]}
    d["pools"].insert(1500, {"name": "deep", "n": _deep(60)})  # (deeper than one match passes over)
    text = json.dumps(d, indent=1)
    calls = []
    real = json.JSONDecoder.raw_decode
    monkeypatch.setattr(json.JSONDecoder, "raw_decode", lambda self, s, idx=0: (s is text and calls.append(idx)) or real(self, s, idx))
    at = value_at(text, ("pools", 3000, "size"))
    assert calls == []  # (before: 3 000 elements decoded)
    monkeypatch.undo()
    want = json.dumps(_replaced(d, ("pools", 3000, "size"), False), indent=1).index(json.dumps(MARK))
    assert at == want
    line = text.count("\n", 0, at) + 1
    assert located_at(text, "p.json", at, "bad").startswith(f"p.json:{line}:")
    for path in [("pools", 1499, "n"), ("pools", 1500, "n"), ("pools", 1501, "s"), ("pools", 0)]:
        assert value_at(text, path) == json.dumps(_replaced(d, path, False), indent=1).index(json.dumps(MARK))


# ---------------------------------------------------------------- 3. what a quoted line shows of bytes


def test_a_quoted_line_shows_each_byte_and_control_as_an_escape():
    from serq.errors import quote_line

    # a NUL, an escape, a byte that is not UTF-8 (read as a lone surrogate), U+0085 (a control whose UTF-8 is
    # two bytes, not the byte 0x85), a zero-width space, a tab: each told apart, on one line
    line = "a\x00b\x1b[1m\udcffc\u0085d\udc85e\u200bf\tg"
    shown, caret = quote_line(line, line.index("c") + 1)
    assert shown == "a\\x00b\\x1b[1m\\xffc\\u0085d\\x85e\\u200bf g"
    assert shown[caret - 1] == "c"  # (the caret moved past the escapes before it)
    assert quote_line(line, 2) == (shown, 2)  # under the escape's backslash
    assert quote_line(line, line.index("\udc85") + 1)[1] == shown.index("\\x85") + 1
    # a line that its escapes make wider than 200 columns: the characters around the caret that fit, cut marked
    nul = "\x00" * 1000
    shown, caret = quote_line(nul, 500)
    assert shown == "..." + "\\x00" * 50 + "..." and shown[caret - 1:].startswith("\\x00")
    assert caret - 1 - 3 == 4 * 25  # 25 escapes before the caret's, 24 after it: 50 in 200 columns
    # printable text, a backslash of the line and U+FFFD of the text are shown as they are
    assert quote_line("x \\x00 \ufffd é", 3) == ("x \\x00 \ufffd é", 3)


def test_a_binary_source_is_quoted_with_its_bytes(tmp_path):
    import subprocess
    import sys

    (tmp_path / "b.sq").write_bytes(b"stage s : delay;\nsession { run s (1\x01 \xff\xfe); end; }\n")
    r = subprocess.run([sys.executable, "-m", "serq", "check", "b.sq"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    # the first byte that is not UTF-8 is the 21st character of line 2 (after "session { run s (1\x01 ")
    assert r.stderr.splitlines() == ["b.sq:2:21: error: the file is not UTF-8 text (byte 0xFF)",
                                     "  session { run s (1\\x01 \\xff\\xfe); end; }",
                                     "  " + " " * len("session { run s (1\\x01 ") + "^"]


def test_a_run_time_error_quotes_a_changed_source_with_its_bytes(tmp_path):
    from serq.errors import source_excerpt

    (tmp_path / "p.sq").write_bytes(b"x\n  \x07run s (\x80);\n")
    shown = "  \\x07run s (\\x80);"
    # column 10 is the "(" (after two spaces, the bell and "run s "): the caret under it, past the escape
    assert source_excerpt(str(tmp_path / "p.sq"), 2, 10) == f"\n  {shown}\n  {' ' * shown.index('(')}^"
