"""Diagnostics: FILE:LINE:COL: error: MESSAGE, the source line, a caret, notes for expansions; and the
named messages for common mistakes."""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import _pm, compile_src, refused


def test_the_format_of_a_diagnostic(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text("stage svc : fifo;\nsession {\n  run svx (1);\n}\n")
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(f, pm=_pm())
    assert str(info.value).splitlines() == [
        f"{f}:3:7: error: unknown stage `svx`",
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
    assert "reads `missing`, a session attribute set outside the queue" in lines[0]


def test_missing_semicolon():
    refused("stage s : fifo;\nsession {\n  set x = 1⟨\n  run s (x);\n}\n", "missing `;` (found `run` next)")
    refused("let a = 1⟨\nlet b = 2;\n", "missing `;`")


def test_unexpected_token_and_character():
    refused("stage s : fifo;\nsession { run s (1) ⟨) ; }", "unexpected `)`")
    refused("session { set x = 1 ⟨$ 2; }", "unexpected character `$`")
    refused("session { set x = 1;⟨", "a `}` is missing")


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
