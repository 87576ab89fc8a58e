"""A knob written as a definition is given with --def, a let with --set: examples/single-turn/vllm_bursts.sq
writes its on/off rate as `def rate() = …` beside `let peak`, and a user sweeping the load wrote `--set rate=1`
(and `--def peak=8`), which said only `the program has no `let rate`` (`no expression definition `peak``). Each
now says what the name is and the option that takes it, in the form the caller used (`--def rate` on the
command line, `defs['rate']` from Python); a name that is neither is told as before."""

from __future__ import annotations

import pytest
import serq_frontend

pytestmark = pytest.mark.timeout(60)

SRC = """let peak = 6;
let base = 0.5;

def rate() = now < 5 ? peak : base;

stage svc : delay;

workload {
  arrive poisson(peak);
}

session {
  branch with (1 - rate() / peak) {
    end;
  }
  run svc (1);
}

run { horizon 10; }
"""


def refusal(**kw) -> str:
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=SRC, **kw)
    return str(e.value)


def test_a_definition_given_to_set_says_def():
    msg = refusal(sets={"rate": 1})
    assert msg.endswith("sets['rate']: the program has no `let rate`; `rate` is an expression definition: give its "
                        "body with defs['rate']"), msg


def test_a_let_given_to_def_says_set():
    msg = refusal(defs={"peak": "8"})
    assert msg.endswith("defs['peak']: the program has no expression definition `peak`; `peak` is a `let`: give its "
                        "value with sets['peak']"), msg


def test_other_names_are_told_as_before():
    assert refusal(sets={"pek": 1}).endswith("sets['pek']: the program has no `let pek` (did you mean `peak`?)")
    assert refusal(defs={"rat": "1"}).endswith("defs['rat']: the program has no expression definition `rat` (did you "
                                               "mean `rate`?)")
    # (a stage's name says what it is since test_hostile_round47_set_names)
    assert refusal(sets={"svc": 1}).endswith("sets['svc']: the program has no `let svc`; `svc` is a stage, not a "
                                             "`let`, whose value alone is given so: a stage's setting is given "
                                             "through a let it reads (`let c = 2;` and `fifo(c)`)")


def test_the_command_line_names_its_options(tmp_path, capsys):
    from serq.cli import _main

    p = tmp_path / "p.sq"
    p.write_text(SRC)
    assert _main(["check", str(p), "--set", "rate=1"]) == 1
    assert capsys.readouterr().err == (f"{p}: error: --set rate: the program has no `let rate`; `rate` is an expression "
                                       "definition: give its body with --def rate\n")
    assert _main(["check", str(p), "--def", "peak=8"]) == 1
    assert capsys.readouterr().err == (f"{p}: error: --def peak: the program has no expression definition `peak`; "
                                       "`peak` is a `let`: give its value with --set peak\n")


def test_a_program_of_no_definition_says_set_too():
    # (the defs layer does not run for a program without def or use: the refusal is made after the layers)
    src = SRC.replace("def rate() = now < 5 ? peak : base;\n", "").replace("1 - rate() / peak", "0")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=src, defs={"base": "1"})
    assert str(e.value).endswith("defs['base']: the program has no expression definition `base`; `base` is a `let`: "
                                 "give its value with sets['base']"), str(e.value)
