"""A call of `min` or `max` takes at most 10 000 arguments (serq_frontend.names.MAX_ARGS, serq_ir.rules.MAX_ARGS),
as many as an aggregate writes out: each argument is some 1 KB of the code the simulator generates, so
`max(now + 0, …)` of 100 000 arguments took 24 s and 434 MB to run and an IR file of 26 MB holding a `max`
of 1 000 000, 20 s and 1.2 GB, and an IR file may be 256 MiB. A call beyond it is refused at the call, with
the ways to write it: the max of parts, or `max j in n (…)`, which gives the same value. A call of the wrong
number of arguments in a `let` is told so, as anywhere else (`let x = abs(1, 2);` was "not a constant")."""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_ir
import serq_sim

pytestmark = pytest.mark.timeout(60)

PROGRAM = ("stage s : delay;\nworkload { arrive poisson(1); }\nsession {\n  set x = EXPR;\n  observe o = x;\n"
           "  run s (1);\n}\nrun { horizon 20; seed 5; }\n")


def _refusal(source: str) -> str:
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=source)
    return str(info.value).splitlines()[0]


def _observed(source: str) -> list[float]:
    return serq_sim.run(serq_frontend.compile(source=source)).observe("o").values.tolist()


@pytest.mark.parametrize("fn", ["max", "min"])
def test_ten_thousand_and_one_arguments_are_refused_at_the_call_with_the_ways_to_write_it(fn):
    terms = ", ".join(f"now * {k}" for k in range(10_001))
    assert _refusal(PROGRAM.replace("EXPR", f"{fn}({terms})")) == (
        f"<source>:4:11: error: `{fn}` takes at most 10000 arguments, got 10001; take the {fn} of parts, "
        f"`{fn}({fn}(…), {fn}(…))`, or write `{fn} j in n (…)`")


def test_the_call_written_as_the_message_says_is_its_value():
    # in parts, or as an aggregate, the max of now * 0 … now * 10000 is now * 10000
    halves = f"max(max({', '.join(f'now * {k}' for k in range(5000))}), " \
             f"max({', '.join(f'now * {k}' for k in range(5000, 10_001))}))"
    parts = _observed(PROGRAM.replace("EXPR", halves))
    aggregate = _observed(PROGRAM.replace("EXPR", "max(now * 10000, max j in 10000 (now * j))"))
    direct = _observed(PROGRAM.replace("EXPR", "now * 10000"))
    assert len(parts) > 5 and parts == aggregate == direct


def test_ten_thousand_arguments_are_a_call():
    terms = ", ".join(f"now + {k}" for k in range(10_000))
    values = _observed(PROGRAM.replace("EXPR", f"max({terms})"))
    assert values == _observed(PROGRAM.replace("EXPR", "now + 9999"))


@pytest.mark.parametrize("let, message", [
    ("abs(1, 2)", "`abs` takes one argument, `abs(x)`, and got 2"),
    ("pow(2)", "`pow` takes two arguments, `pow(x, y)`, and got 1"),
    ("max(" + ", ".join(["1"] * 10_001) + ")", "`max` takes at most 10000 arguments, got 10001"),
])
def test_a_let_calling_with_the_wrong_number_of_arguments_is_told_so(let, message):
    first = _refusal(f"let c = {let};\n" + PROGRAM.replace("EXPR", "c"))
    assert first.startswith(f"<source>:1:9: error: {message}"), first


def test_an_ir_file_with_a_call_of_more_arguments_is_refused_at_it(tmp_path, monkeypatch):
    program = serq_frontend.compile(source=PROGRAM.replace("EXPR", "max(now, 1)"))
    data = json.loads(serq_ir.encode(program))
    call = data["session"][0]["value"]
    assert call["kind"] == "Call" and call["fn"] == "max"
    for fn in ("max", "min", "sum"):
        call["fn"], call["args"] = fn, [{"kind": "Ctx", "name": "now"}] * 10_001
        (tmp_path / "p.ir.json").write_text(json.dumps(data))
        monkeypatch.chdir(tmp_path)
        with pytest.raises(serq_ir.IRError) as info:
            serq_ir.load("p.ir.json")
        first = str(info.value).splitlines()[0]
        assert first.startswith("p.ir.json:1:") and first.endswith(
            f": error: `{fn}` takes at most 10000 arguments, and got 10001 - at '$.session[0].value.args'"), first
    call["args"] = call["args"][:10_000]
    (tmp_path / "p.ir.json").write_text(json.dumps(data))
    assert len(serq_ir.load("p.ir.json").session[0].value.args) == 10_000
