"""serq fit: least squares of measured step times on the step-cost terms, and lib/step_costs.sq."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from serq.cli import main
from serq_sim.fit import fit_steps, kind, read_steps

ROOT = Path(__file__).resolve().parents[3]
#: a known model: the A100 / Qwen3-8B fit's coefficients (examples/replay/a100_step_fit.json)
KNOWN = {"c": 0.013939040298989226, "d": 4.105327226338452e-05, "e": 1.378640351489588e-07,
         "a": 5.1526529093146493e-05, "b": 4.019597527818021e-09}


def generated_steps(n: int, noise: float, seed: int = 1) -> list[dict]:
    """``n`` iterations of decode-only, prefill-only and mixed batches timed by :data:`KNOWN`, each time
    times a factor ``1 + noise * N(0, 1)``."""
    rng = np.random.default_rng(seed)
    steps = []
    for i in range(n):
        k = i % 3
        dec = 0 if k == 1 else int(rng.integers(1, 256))
        kvd = dec * int(rng.integers(100, 4000)) if dec else 0
        pre = 0 if k == 0 else int(rng.integers(16, 2048))
        att = pre * (int(rng.integers(0, 8000)) + pre / 2) if pre else 0
        t = KNOWN["c"] + KNOWN["d"] * dec + KNOWN["e"] * kvd + KNOWN["a"] * pre + KNOWN["b"] * att
        steps.append({"decoders": dec, "kv_decode": kvd, "prefilled": pre, "attention": att,
                      "time": t * (1 + noise * rng.standard_normal())})
    return steps


def serq(argv, capsys) -> tuple[int, str]:
    """``serq ARGV``: its exit status and what it wrote (stdout and stderr)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out + out.err


def write_steps(path: Path, steps: list[dict]) -> Path:
    path.write_text("".join(json.dumps(s) + "\n" for s in steps))
    return path


@pytest.mark.parametrize("noise", [0.0, 0.02])
def test_the_fit_recovers_known_coefficients_within_one_percent(tmp_path, noise):
    fit = fit_steps(read_steps(str(write_steps(tmp_path / "s.jsonl", generated_steps(3000, noise)))))
    for name, value in KNOWN.items():
        assert abs(fit.coefficients[name] / value - 1) < (1e-9 if noise == 0 else 0.01), name
    assert fit.counts == {"decode": 1000, "prefill": 1000, "mixed": 1000, "idle": 0}
    if noise == 0:
        assert max(v for v in fit.mape.values() if v == v) < 1e-9
    else:  # |N(0, 1)| has mean sqrt(2 / pi): the fit's errors are those of the noise
        for k in ("decode", "prefill", "mixed"):
            assert abs(fit.mape[k] - noise * math.sqrt(2 / math.pi)) < 0.002


def test_serq_fit_prints_the_fit_its_mape_by_kind_and_a_definition(tmp_path, capsys):
    steps = write_steps(tmp_path / "s.jsonl", generated_steps(300, 0.0))
    code, out = serq(["fit", str(steps), "--name", "my_gpu"], capsys)
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("fit: 300 steps")
    assert [ln.split()[0] for ln in lines if ln.split() and ln.split()[-1] == "%"] == ["decode", "prefill",
                                                                                        "mixed"]
    definition = lines[-1]
    assert definition.startswith("def my_gpu() = ")
    # the definition is a cost a step stage takes
    prog = tmp_path / "p.sq"
    prog.write_text(definition + "\npool kv { cap 1000; block 16; }\n"
                    "stage e : step { budget 64; cost my_gpu(); memory kv; }\n"
                    "workload { arrive poisson(1); }\n"
                    "session { hold kv (8) { prefill on e (8) growing kv; } }\nrun { horizon 5; }\n")
    assert serq(["check", str(prog)], capsys)[0] == 0
    code, out = serq(["fit", str(steps), "--json"], capsys)
    doc = json.loads(out)
    assert set(doc["sum"]) == set(KNOWN) and doc["n"] == 300 and set(doc["sum_mape"]) == {"decode", "prefill",
                                                                                            "mixed"}


@pytest.mark.parametrize("text, message", [
    # (a value's fault at its line and column, the line quoted with a caret: the value, the key, the step)
    ('{"decoders": 1}\n', "s.jsonl:1:1: error: the step has no time"),
    ('{"decoders": -1, "time": 1}\n', "s.jsonl:1:14: error: decoders is -1"),
    ('{"decoder": 1, "time": 1}\n', "s.jsonl:1:2: error: unknown key 'decoder'"),
    ('{"decoders": 1, "time": 0}\n', "s.jsonl:1:25: error: time is 0"),
    ("\n", "s.jsonl: error: no steps"),
    ('{"decoders": 1, "kv_decode": 5, "time": 1}\n' * 3, "s.jsonl: error: no step has prefilled > 0"),
    # a line nested past json.loads' recursion was a RecursionError traceback, then told without a column:
    # at the value's start, its line quoted (the first 200 characters, ... after them)
    pytest.param('{"decoders": 1, "time": 0.1}\n' + "[" * 100_000 + "]" * 100_000 + "\n",
                 "s.jsonl:2:1: error: not a step: JSON nested too deeply\n  " + "[" * 200 + "...\n  ^", id="deep"),
    # an integer beyond a float's range (an OverflowError traceback), one past Python's int-parsing limit
    pytest.param('{"decoders": 1' + "0" * 400 + ', "time": 1}\n',
                 "s.jsonl:1:14: error: the integer 100000000000...000000 (401 digits) is beyond the range",
                 id="huge-int"),
    pytest.param('{"decoders": 1, "time": 1' + "0" * 5000 + '}\n', "s.jsonl:1:25: error: the integer",
                 id="5000-digits"),
    # docs/step-costs.md: blank lines are skipped, and a file of them alone has no steps
    pytest.param("\n  \n\t\n", "s.jsonl: error: no steps", id="blank-lines-only"),
])
def test_a_bad_step_trace_is_one_message(tmp_path, capsys, text, message):
    (tmp_path / "s.jsonl").write_text(text)
    code, out = serq(["fit", str(tmp_path / "s.jsonl")], capsys)
    assert code == 1 and message in out and "Traceback" not in out and out.count("error:") == 1, out


def _json_error(text: str) -> json.JSONDecodeError:
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return e
    raise AssertionError(f"{text!r} is JSON")


_TRAILING = _json_error('\t{"decoders": 1,\t"time": 1,}')


@pytest.mark.parametrize("data, message", [
    # a line that is not JSON, or a byte that is not UTF-8: at its line and column, quoted with a caret
    # (it was "s.jsonl:2: error: not a JSON object (Expecting value: line 1 column 1 (char 0))")
    (b'{"decoders": 1, "time": 0.1}\nnot json\n',
     "s.jsonl:2:1: error: not a JSON object: Expecting value\n  not json\n  ^"),
    # (the words and the column are the interpreter's json module's: 'Expecting property name enclosed in
    # double quotes' at the brace, column 28, on Python 3.11; 'Illegal trailing comma before end of object' at
    # the comma, column 27, on 3.13)
    (b'{"decoders": 1, "time": 0.1}\r\n\r\n\t{"decoders": 1,\t"time": 1,}\r\n',
     f's.jsonl:3:{_TRAILING.colno}: error: not a JSON object: {_TRAILING.msg}\n'
     f'   {{"decoders": 1, "time": 1,}}\n  {" " * (_TRAILING.colno - 1)}^'),
    (b'{"decoders": 2, "time": 0.\xff1}\n',
     's.jsonl:1:27: error: the file is not UTF-8 text (byte 0xFF)\n  {"decoders": 2, "time": 0.\\xff1}\n'
     '                            ^'),
    # a byte-order mark is skipped (the columns count from the character after it)
    (b'\xef\xbb\xbf{"decoders": 2, "time": x}\n',
     's.jsonl:1:25: error: not a JSON object: Expecting value\n  {"decoders": 2, "time": x}\n'
     '                          ^'),
])
def test_a_step_trace_that_is_not_json_is_told_at_its_line_and_column(tmp_path, capsys, data, message):
    (tmp_path / "s.jsonl").write_bytes(data)
    code, out = serq(["fit", str(tmp_path / "s.jsonl")], capsys)
    assert code == 1 and out.rstrip("\n").endswith(message) and "Traceback" not in out, out


@pytest.mark.parametrize("name", ["let", "session", "exp", "queue", "now", "decoders", "serial", "inf", "member"])
def test_a_name_the_language_keeps_is_refused_as_the_profile_name(tmp_path, capsys, name):
    # it printed `def let() = …;`, which no program compiles
    import serq_frontend
    from serq_frontend.diagnostics import CompileError

    with pytest.raises(CompileError):
        serq_frontend.compile(source=f"def {name}() = 1;\n")
    steps = write_steps(tmp_path / "s.jsonl", generated_steps(30, 0.0))
    code, out = serq(["fit", str(steps), "--name", name], capsys)
    assert code == 2 and f"invalid value for --name: '{name}' is a word of the language" in out, out


def test_the_profile_printed_compiles(tmp_path, capsys):
    import serq_frontend

    steps = write_steps(tmp_path / "s.jsonl", generated_steps(30, 0.0))
    code, out = serq(["fit", str(steps), "--name", "my_gpu"], capsys)
    assert code is None or code == 0, out
    definition = out.rstrip().splitlines()[-1]
    assert definition.startswith("def my_gpu() = ")
    serq_frontend.compile(source=definition + "\n")


def test_batch_kinds():
    assert [kind(3, 0), kind(0, 5), kind(3, 5), kind(0, 0)] == ["decode", "prefill", "mixed", "idle"]


def test_the_a100_profile_is_the_testbed_fit():
    """lib/step_costs.sq's a100_qwen3_8b_fit(c) holds the fit's d, e, a, b to the last digit; the fit's
    c, and a100_qwen3_8b() all five as the examples have written them (within 0.2 %)."""
    import serq_frontend

    fit = json.loads((ROOT / "examples/replay/a100_step_fit.json").read_text())["sum"]

    def coefficients(cost: str) -> dict[str, float]:
        src = (f'use "step_costs.sq";\npool kv {{ cap 100; block 16; }}\nstage e : step {{ budget 64; cost {cost}; '
               "memory kv; }\nworkload { arrive poisson(1); }\nsession { hold kv (1) { prefill on e (1) "
               "growing kv; } }\nrun { horizon 1; }\n")
        prog = serq_frontend.compile(source=src)
        out, e = {}, prog.stages[0].kind.cost
        for name in ("b", "a", "e", "d"):  # ((((c + d x) + e y) + a z) + b w)
            out[name] = e.rhs.lhs.value
            e = e.lhs
        out["c"] = e.value
        return out

    exact = coefficients("a100_qwen3_8b_fit(0.013939040298989226)")
    assert exact == fit
    rounded = coefficients("a100_qwen3_8b()")
    for k in fit:
        assert abs(rounded[k] / fit[k] - 1) < 2e-3, k


def test_values_too_large_to_fit_are_one_message(tmp_path, capsys):
    # finite values whose squares overflow: the fit cannot be computed in floating point (numpy warned and
    # the message blamed linearly dependent terms)
    steps = generated_steps(30, 0.0)
    steps[0]["attention"] = 1e300
    code, out = serq(["fit", str(write_steps(tmp_path / "s.jsonl", steps))], capsys)
    assert code == 1 and out == f"{tmp_path / 's.jsonl'}: error: the values of attention are too large to fit " \
                                "(their squares overflow a float)\n", out
