"""An index on a pool or stage declared without a size (docs/language.md, "A pool or stage reference"):
`prefill on engine[0]` beside `stage engine : step` ran on `engine` without a word, the index taken for a
family of one's member, and so did `hold reqs[0] (1)` beside `pool reqs`. The index 0, a constant, is read
as the one pool or stage, as before, and told as a warning at the index (language.txt does not make it an
error, and programs wrote it); any other index, or one computed, is the program's mistake, told at the index.
A family of one (`stage engine[1]`, `pool kv[N]` with N = 1) still takes its member's index."""

from __future__ import annotations

import pytest
from sqhelpers import commands_refuse_and_leave, compile_src, ir_bytes, told

pytestmark = pytest.mark.timeout(60)


def program(size: str = "", session: str = "prefill on engine (10); decode on engine (5);") -> str:
    return (f"pool reqs{size} {{ cap 8; admit via engine; }}\n"
            f"pool kv{size} {{ cap 4000; block 16; }}\n"
            f"stage engine{size} : step {{ budget 256; cost 1; memory kv; }}\n"
            "workload { arrive poisson(1); }\n"
            "session {\n"
            f"  hold reqs{'[0]' if size else ''} (1), kv{'[0]' if size else ''} (16) {{ {session} }}\n"
            "}\n"
            "run { horizon 50; }\n")


STAGE = ("`engine[…]`: `engine` is one stage, not a family (declared without a size), and takes no index; "
         "name it `engine`, or declare a family, `stage engine[N] : …;`")
POOL = ("`{0}[…]`: `{0}` is one pool, not a family (declared without a size), and takes no index; name it `{0}`, "
        "or declare a family, `pool {0}[N] {{ … }}`")


@pytest.mark.parametrize("session", [
    "prefill on engine[⟨1] (10); decode on engine (5);",       # a serving form's `on`
    "run engine[⟨1] prefill (10); decode on engine (5);",      # the kernel's run
    "prefill on engine (10); decode on engine[⟨1 + 1] (5);",   # a constant index that is no number
    "set j = 0; prefill on engine[⟨j] (10); decode on engine (5);",  # a computed one
    "observe b = budget_left(engine[⟨1]); prefill on engine (10); decode on engine (5);",
    "observe m = member(engine[⟨1]); prefill on engine (10); decode on engine (5);",
])
def test_an_index_on_a_stage_declared_without_a_size_is_told_at_the_index(session):
    assert told(program(session=session)) == STAGE


@pytest.mark.parametrize("src, name", [
    (program().replace("hold reqs (1)", "hold reqs[⟨1] (1)"), "reqs"),
    (program().replace("kv (16) {", "kv[⟨2] (16) {"), "kv"),
    (program().replace("prefill on engine (10);", "observe u = used(kv[⟨1]); prefill on engine (10);"), "kv"),
    # a declaration's own reference, and a constant (blocksize is folded as the linker reads it)
    (program().replace("memory kv;", "memory kv[⟨1];"), "kv"),
    (program().replace("admit via engine;", "admit via engine[⟨1];"), "engine"),
    ("let B = blocksize(kv[⟨1]);\n" + program(), "kv"),
    (program().replace("gauge", "").replace("run {", "gauge g = used(kv[⟨1]);\nrun {"), "kv"),
])
def test_an_index_on_a_pool_declared_without_a_size_is_told_alike(src, name):
    said = told(src)
    assert said == (STAGE if name == "engine" else POOL.format(name))


def test_a_queue_declared_without_a_size_names_its_own_stage_without_an_index():
    src = ("queue D : decode {\n"
           "  pool kv { cap 100; }\n"
           "  serve fifo;\n"
           "  nic ps(1);\n"
           "  decode (p) { hold kv (p) { run D.nic[⟨1] (1); run (p); } }\n"
           "}\n"
           "workload { arrive poisson(1); }\n"
           "session { D.decode (4); }\n"
           "run { horizon 10; }\n")
    assert told(src) == ("`D.nic[…]`: `D.nic` is one stage, not a family (declared without a size), and takes "
                         "no index; name it `D.nic`, or declare the queue a family, `queue D[N] …`")


def test_a_family_of_one_still_takes_its_members_index():
    # `[1]` declared: the index goes away, as before (the IR of the program naming no member)
    one = program("[1]", "prefill on engine[0] (10); decode on engine[0] (5);")
    plain = program("[1]").replace("hold reqs[0] (1), kv[0] (16)", "hold reqs (1), kv (16)")
    assert ir_bytes(compile_src(one)) == ir_bytes(compile_src(plain))


def test_the_command_exits_1_with_the_message_and_no_traceback(tmp_path):
    data = program(session="prefill on engine[1] (10); decode on engine (5);").encode()
    commands_refuse_and_leave(tmp_path, data, "p.sq:6:46: error: " + STAGE, commands=(("check",),))


def test_a_familys_index_that_is_nan_is_still_told_as_naming_no_member():
    src = program("[2]").replace("prefill on engine (10);", "observe u = used(kv[⟨0 / 0]); prefill on engine (10);")
    assert told(src) == "`kv[NaN]`: `kv` has members 0 … 1"


WARNED = ("`{0}[0]`: `{0}` is one {1}, not a family (declared without a size): the index is read as `{0}` itself; "
          "name it `{0}`, or declare a family, {2}")


@pytest.mark.parametrize("old, new, name", [
    ("prefill on engine (10);", "prefill on engine[⟨0] (10);", "engine"),
    ("decode on engine (5);", "decode on engine[⟨1 - 1] (5);", "engine"),  # a constant that folds to 0
    ("hold reqs (1)", "hold reqs[⟨0] (1)", "reqs"),
    ("memory kv;", "memory kv[⟨0];", "kv"),
    ("admit via engine;", "admit via engine[⟨0];", "engine"),
    ("prefill on engine (10);", "observe u = used(kv[⟨0]) + blocksize(kv[0]); prefill on engine (10);", "kv"),
])
def test_the_index_0_is_read_as_the_one_pool_or_stage_and_told_as_a_warning(capsys, old, new, name):
    from sqhelpers import located

    plain = program()
    marked = plain.replace(old, new)
    assert marked != plain
    text, line, col = located(marked)
    got = compile_src(text)
    err = capsys.readouterr().err
    kind, how = ("stage", "`stage engine[N] : …;`") if name == "engine" else ("pool", f"`pool {name}[N] {{ … }}`")
    first, source, caret = err.splitlines()[:3]
    assert first == f"<source>:{line}:{col}: warning: " + WARNED.format(name, kind, how)
    assert source == "  " + text.splitlines()[line - 1] and caret == " " * (col + 1) + "^"
    # once, however often the place is read, and the program the name alone gives
    assert err.count("warning:") == (2 if "blocksize" in new else 1)
    same = plain.replace(old, new.replace("⟨", "").replace("[0]", "").replace("[1 - 1]", ""))
    assert ir_bytes(got) == ir_bytes(compile_src(same))
