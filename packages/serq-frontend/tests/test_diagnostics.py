"""Diagnostics: FILE:LINE:COL: error: MESSAGE, the source line, a caret, notes for expansions; and the
named messages for common mistakes."""

from __future__ import annotations

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from sqhelpers import _pm, compile_src, refused


def test_the_format_of_a_diagnostic(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text("stage svc : fifo;\nsession {\n  run svx (1);\n}\n")
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(f, pm=_pm())
    assert str(info.value).splitlines() == [
        f"{f}:3:7: error: unknown stage `svx` (did you mean `svc`?)",
        "    run svx (1);",
        "        ^",
    ]
    assert info.value.serq_user_error is True


def test_an_error_in_a_definition_names_the_use():
    src = "stage s : fifo;\ndef go(x) {\n  run s (x + nope);\n}\nsession {\n  go(1);\n}\n"
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(src)
    assert str(info.value).splitlines() == [
        "<source>:3:14: error: unknown name `nope`",
        "    run s (x + nope);",
        "               ^",
        "<source>:6:3: note: in the expansion of `go`, used here",
        "    go(1);",
        "    ^",
    ]


def test_an_error_in_a_library_names_each_use(tmp_path):
    (tmp_path / "lib.sq").write_text("def inner(p) { run p (1 + bad); }\ndef outer(p) { inner(p); }\n")
    f = tmp_path / "p.sq"
    f.write_text('use "lib.sq";\nstage s : fifo;\nsession { outer(s); }\n')
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(f, pm=_pm())
    lines = str(info.value).splitlines()
    assert lines[0] == f"{tmp_path / 'lib.sq'}:1:27: error: unknown name `bad`"
    assert lines[3] == f"{tmp_path / 'lib.sq'}:2:16: note: in the expansion of `inner`, used here"
    assert lines[6] == f"{f}:3:11: note: in the expansion of `outer`, used here"


def test_an_error_in_a_queue_entry_names_the_call():
    src = ("queue P : prefill { serve fifo; prefill (p) { run (p + missing); } }\n"
           "session { set x = 1; P.prefill (x); }\n")
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(src)
    lines = str(info.value).splitlines()
    # `missing` is set nowhere: no session attribute, and the words claim none
    assert "`P.prefill` reads `missing`; an entry reads its parameters" in lines[0]


def test_missing_semicolon():
    refused("stage s : fifo;\nsession {\n  set x = 1⟨\n  run s (x);\n}\n", "missing `;` (found `run` next)")
    refused("let a = 1⟨\nlet b = 2;\n", "missing `;`")


def test_unexpected_token_and_character():
    refused("stage s : fifo;\nsession { run s (1) ⟨) ; }", "unexpected `)`")
    refused("session { set x = 1 ⟨$ 2; }", "unexpected character `$`")
    refused("session ⟨{ set x = 1;", "a `}` is missing")


def test_request_inside_server():
    refused("stage s : fifo;\nworkload { session { request; } }\nserver { run s (1); ⟨request; }",
            "`request;` inside server")


def test_turn_and_end_in_a_server():
    refused("stage s : fifo;\nworkload { session { request; } }\nserver { ⟨turn; run s (1); }",
            "`turn;` in a server")
    refused("stage s : fifo;\nworkload { session { request; } }\nserver { run s (1); ⟨end; }",
            "`end;` in a server")


def test_the_two_sides_are_held_to_their_words():
    refused("stage s : fifo;\n⟨server { run s (1); }", "a `server` that is never requested")
    refused("stage s : fifo;\nworkload { session { ⟨request; } }", "`request;` with no `server`")
    refused("stage s : fifo;\nsession { ⟨request; }", "`request;` in a top-level session")
    refused("stage s : fifo;\nsession { run s (1); }\nworkload { session { request; } }\n⟨server { run s (1); }",
            "are exclusive")


def test_unknown_stage_in_a_serving_form():
    refused("stage svc : fifo;\nsession { ⟨decode 3; }", "unknown stage in a serving form: `decode`")


def test_transfer_needs_from_and_to():
    refused("stage link : ps(1);\nsession { transfer (1) ⟨; }", "unexpected `;`")


def test_a_queue_family_call_needs_an_index():
    refused("queue P[2] : prefill { serve fifo; prefill (p) { run (p); } }\nsession { ⟨P.prefill (1); }",
            "`P` is a family of 2; index it")


def test_a_from_on_a_queue_that_leases_nothing():
    src = ("stage nic : delay;\n"
           "queue P : prefill { pool kv { cap 9; } serve fifo; prefill (p) { hold kv (p) { run (p); } } }\n"
           "queue D : decode { pool kv { cap 9; } serve fifo;\n"
           "  decode (p) { run (p); }\n"
           "  decode (p) from src { hold kv (p) { transfer on nic (p) from src to kv (p); } } }\n"
           "session { P.prefill (1); D.decode (1) from ⟨P; }\n")
    refused(src, "`from P`: no entry of `P` leases a pool")


def test_compile_never_raises_anything_else_on_odd_input():
    for src in ["", "}", "session", "let", "def f(", "queue Q : nobody { }", "x pull y share z;",
                "session { max j in 0 (1); }", "session { set x = max j in 0 (1); }",
                "let a = 1e400 * 0;", "session { set x = ~bernoulli(); }"]:
        try:
            compile_src(src)
        except serq_frontend.CompileError as e:
            assert "error:" in str(e)


_DIALECT = {
    "claim": ("pool kv { cap 10; }\nsession { ⟨claim kv (1) { } end; }\n", "`claim` is not part of this language"),
    "fork": ("stage s : delay;\nsession { ⟨fork { run s (1); } end; }\n", "`fork` is not part of this language"),
    "join": ("stage s : delay;\nsession { run s (1); ⟨join; end; }\n", "`join` is not part of this language"),
    "iteration in a step": ("stage e : step { budget 1; cost 1; ⟨iteration { } }\nsession { end; }\n",
                            "`iteration` is not part of this language"),
    "iteration as an item": ("⟨iteration { budget 1; }\n", "`iteration` is not part of this language"),
    "serve only": ("pool kv { cap 9; admit via e; }\nstage e : step { budget 1; cost 1; ⟨serve only decode; }\n"
                   "session { end; }\n", "`serve only` is not part of this language"),
    "serve only in a queue": ("queue Q : prefill { ⟨serve only; prefill (p) { run (p); } }\n",
                              "`serve only` is not part of this language"),
    "state as an item": ("let a = 1;\n⟨state { x = 1; }\n", "`state` is not part of this language"),
    "state as a statement": ("session {\n  ⟨state x = 1;\n  end;\n}\n", "`state` is not part of this language"),
    "while": ("session {\n  set i = 0;\n  ⟨while (i < 3) { set i = i + 1; }\n  end;\n}\n",
              "`while` is not part of this language"),
    "while without a block": ("session { ⟨while (1); end; }\n", "`while` is not part of this language"),
    "fn main": ("// a program\n⟨fn main() {\n  stage svc : delay;\n}\n", "`fn` is not part of this language"),
    "push": ("session { ⟨push x; end; }\n", "`push` is not part of this language"),
    "engine": ("⟨engine e { budget 1; }\n", "`engine` is not part of this language"),
    "pool on": ("stage e : step { budget 1; cost 1; }\n⟨pool kv on e { cap 10; }\n",
                "`pool … on …` is not part of this language"),
    "pool array on": ("stage e[2] : step { budget 1; cost 1; }\n⟨pool kv[2] on e { cap 10; }\n",
                      "`pool … on …` is not part of this language"),
    "cost wrapper": ("pool reqs { cap 2; }\nstage svc : delay;\nsession {\n"
                     "  hold reqs (⟨cost(reqs, 1)) { run svc (2); }\n  end;\n}\n",
                     "`cost(…)` is not part of this language"),
}


@pytest.mark.parametrize("case", list(_DIALECT))
def test_constructs_of_other_dialects_are_named(case):
    src, message = _DIALECT[case]
    refused(src, message)


def test_the_other_dialects_words_are_names_here():
    # none of them is a keyword of this language: as names they compile as before
    words = ["claim", "join", "iteration", "only", "state", "while", "fn", "main"]
    src = "".join(f"let {w} = {i};\n" for i, w in enumerate(words, 1))
    src += ("stage s : delay;\nqueue engine : prefill { serve fifo; prefill (p) { run (p); } }\n"
            "def fork(x) = x + 1;\ndef push(q) { run s (q); }\n"
            "session {\n  set claim2 = state + while + only + fn + main + iteration;\n  push(fork(claim));\n"
            "  engine.prefill(join);\n  end;\n}\n")
    program = compile_src(src)
    assert len(program.stages) == 2


def test_a_missing_use_names_the_library(tmp_path):
    (tmp_path / "mylib.sq").write_text("// a library\ndef go(s, n) { run s (n); }\ndef twice(x) = 2 * x;\n")
    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, _Lib(tmp_path)])
    e = refused("stage s : delay;\nsession { ⟨go(s, 1); end; }\n", "no definition `go`", pm=pm)
    first = str(e).splitlines()[0]
    assert "the library `mylib.sq` defines it" in first and 'use "mylib.sq";' in first
    e = refused("stage s : delay;\nsession { run s (⟨twice(1)); end; }\n", "unknown function `twice`", pm=pm)
    assert "the library `mylib.sq` defines it" in str(e)
    # a name no library defines gets no hint
    e = refused("stage s : delay;\nsession { ⟨gone(s, 1); end; }\n", "no definition `gone`", pm=pm)
    assert "library" not in str(e)


def test_a_missing_use_of_vllm_names_vllm_sq():
    src = ("pool reqs { cap 4; admit via engine; }\npool kv { cap 100; block 16; }\n"
           "stage engine : step { budget 8; cost 1; memory kv; }\n"
           "session {\n  set t0 = now;\n  ⟨vllm_request(reqs, kv, engine, 10, 5, t0);\n  end;\n}\n")
    e = refused(src, "no definition `vllm_request`")
    assert 'the library `vllm.sq` defines it' in str(e) and 'use "vllm.sq";' in str(e)


class _Lib:
    def __init__(self, folder):
        self.folder = folder

    @serq.hookimpl
    def serq_frontend_library_paths(self):
        return [self.folder]


def _raised(f) -> str:
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(f, pm=_pm())
    return str(info.value)


def test_a_quoted_line_cannot_drive_the_terminal(tmp_path):
    # a program someone sent: escape sequences and other control characters on the line an error quotes
    # (and as the character it is about) are shown as escapes in the line and in the message, so
    # the caret stays under its character and nothing reaches the terminal as a command
    f = tmp_path / "p.sq"
    f.write_bytes(b"stage svc : fifo;\nsession {\n  run svx (1); // \x1b]0;title\x07 \x1b[2J\x08\x0b\n}\n")
    msg = _raised(f)
    assert msg.splitlines() == [
        f"{f}:3:7: error: unknown stage `svx` (did you mean `svc`?)",
        "    run svx (1); // \\x1b]0;title\\x07 \\x1b[2J\\x08\\x0b",
        "        ^",
    ]
    (tmp_path / "q.sq").write_bytes(b"let a = 1 \x1b[31m;\n")
    msg = _raised(tmp_path / "q.sq")
    assert msg.splitlines()[0].endswith("error: unexpected character `\\x1b`")
    assert msg.splitlines()[1:] == ["  let a = 1 \\x1b[31m;", "            ^"]
    assert not any(ord(ch) < 32 and ch != "\n" for ch in msg)


def test_a_long_line_is_quoted_around_its_caret(tmp_path):
    # a line of a megabyte: the diagnostic quotes 200 characters of it around the caret, `...` at each cut
    f = tmp_path / "p.sq"
    f.write_text("stage svc : fifo;\nsession {" + " " * 500_000 + "run svx (1); // " + "x" * 500_000 + "\n}\n")
    lines = _raised(f).splitlines()
    assert lines[0] == f"{f}:2:500014: error: unknown stage `svx` (did you mean `svc`?)"
    assert len(lines) == 3 and len(lines[1]) == 2 + 3 + 200 + 3
    shown, caret = lines[1][2:], lines[2].index("^") - 2
    assert shown.startswith("...") and shown.endswith("...")
    assert shown[caret: caret + 3] == "svx"


def test_a_long_token_is_quoted_in_part():
    msg = refused_text("let a = 1 " + "9" * 100_000 + ";")
    assert "unexpected `" + "9" * 40 + "...`" in msg.splitlines()[0] and len(msg) < 1000


def refused_text(src: str) -> str:
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(src)
    return str(info.value)



@pytest.mark.parametrize("body, part", [
    ("session { hold kvv (1) { run engine(1); } }", "unknown pool `kvv` (did you mean `kv`?)"),
    ("session { hold kv (1) { run engin(1); } }", "unknown stage `engin` (did you mean `engine`?)"),
    ("session { set x = flor(2.5); run engine(x); }", "unknown function `flor` (did you mean `floor`?)"),
    ("session { set x = 2; run engine(xx); }", "unknown name `xx` (did you mean `x`?)"),
    ("def serve_it(n) { run engine(n); }\nsession { serve_itt(1); }",
     "no definition `serve_itt` (did you mean `serve_it`?)"),
    ("session { run engine(zzz); }", "unknown name `zzz`"),
])
def test_an_unknown_name_gets_the_closest_known_one(tmp_path, body, part):
    # a misspelt pool, stage, function, name or definition: the closest of those the program knows there
    f = tmp_path / "p.sq"
    f.write_text("pool kv { cap 10; }\nstage engine : fifo;\nlet lam = 1;\nworkload { arrive poisson(lam); }\n"
                 + body + "\n")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(f)
    msg = str(e.value).splitlines()[0]
    assert msg.endswith(part) and ("did you mean" in part or "did you mean" not in msg), msg


def test_a_constant_that_reads_an_unknown_name_gets_the_closest_let(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text("stage s : fifo;\nlet lam = 1;\nworkload { arrive poisson(lamb); }\nsession { run s(1); }\n")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(f)
    assert str(e.value).splitlines()[0].endswith("it reads `lamb` (did you mean `lam`?)"), str(e.value)
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(f, sets={"lan": 2.0})
    assert "sets['lan']: the program has no `let lan` (did you mean `lam`?)" in str(e.value), str(e.value)


def test_a_call_with_the_wrong_number_of_arguments_shows_the_parameters(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text("stage s : fifo;\ndef serve_it(n, m) { run s(n + m); }\nworkload { arrive poisson(1); }\n"
                 "session { serve_it(1); }\n")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(f)
    assert str(e.value).splitlines()[0].endswith("error: `serve_it` takes two arguments, `serve_it(n, m)`, and got 1")


def test_a_library_that_is_not_there_gets_the_closest_one(tmp_path):
    f = tmp_path / "p.sq"
    (tmp_path / "mylib.sq").write_text("def one() = 1;\n")
    f.write_text('use "mylb.sq";\nstage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s(1); }\n')
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(f)
    assert str(e.value).splitlines()[0].endswith("(did you mean `mylib.sq`?)"), str(e.value)
