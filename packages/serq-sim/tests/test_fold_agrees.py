"""Constant folding gives what the simulator computes, on both tiers: every operator and function over
the special values (signed zeros, infinities, NaN, negatives, fractions). A constant subexpression whose
value is NaN (`observe x = 5 % 0;`) is a value where the program keeps one (set, observe, record, gauge):
it links, written out (the IR has no NaN number), and is observed as NaN, as `y % 0` is."""

from __future__ import annotations

import math
import struct

import pytest
import serq_frontend
import serq_sim
from serq_sim import fast

VALUES = ["0", "-0", "1", "-1", "2.5", "-2.5", "3", "0.5", "1e300", "-1e300", "5e-324", "inf", "-inf", "(0 / 0)"]
BINARY = ["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"]
UNARY = ["-{a}", "!{a}", "abs({a})", "floor({a})", "ceil({a})", "sqrt({a})", "exp({a})", "ln({a})",
         "{a} ? 1 : 2", "{a} ? (0 / 0) : 2"]
CALLS = ["min({a}, {b})", "max({a}, {b})", "pow({a}, {b})", "pow({a}, 3)", "pow({a}, -3)", "pow({a}, -0.5)", "pow({a}, 1e300)", "min({a}, {b}, 1)", "max(-1, {a}, {b})"]


def _forms():
    for op in BINARY:
        yield op, f"{{a}} {op} {{b}}"
    for form in UNARY + CALLS:
        yield form, form


def _number(text: str) -> float:
    return math.nan if text == "(0 / 0)" else float(text)


def _fold(form: str, a: float, b: float | None) -> float:
    """What the frontend's folding (serq_frontend.consts) gives for ``form`` over ``a`` and ``b``."""
    from serq_frontend.consts import binary_value, fn_value, truth, unary_value

    if form.startswith("{a} ") and form.endswith(" {b}"):
        return binary_value(form[4:-4], a, b)
    if form in ("-{a}", "!{a}"):
        return unary_value(form[0], a)
    if form == "{a} ? 1 : 2":
        return 1.0 if truth(a) else 2.0
    if form == "{a} ? (0 / 0) : 2":
        return math.nan if truth(a) else 2.0
    name, args = form.split("(", 1)
    values = [{"{a}": a, "{b}": b}.get(x.strip(), None) for x in args.rstrip(")").split(",")]
    return fn_value(name, [float(x.strip()) if v is None else v for x, v in zip(args.rstrip(")").split(","),
                                                                                values)])


def _same(x: float, y: float) -> bool:
    return (x != x and y != y) or struct.pack("<d", x) == struct.pack("<d", y)


@pytest.mark.parametrize("tier", ["fast", "general"])
@pytest.mark.parametrize("name, form", list(_forms()))
def test_folded_and_computed_values_agree(monkeypatch, tier, name, form):
    pairs = [(a, b) for a in VALUES for b in VALUES] if "{b}" in form else [(a, None) for a in VALUES]
    lines = [f"  set v{i} = {v};" for i, v in enumerate(VALUES)]
    for k, (a, b) in enumerate(pairs):
        folded = form.format(a=a, b=b)
        computed = form.format(a=f"v{VALUES.index(a)}", b=None if b is None else f"v{VALUES.index(b)}")
        lines += [f"  observe f{k} = {folded};", f"  observe c{k} = {computed};"]
    src = "stage s : delay;\nworkload { arrive batch(1); }\nsession {\n" + "\n".join(lines) + \
        "\n  run s (1);\n}\nrun { horizon 10; }\n"
    program = serq_frontend.compile(source=src)
    assert fast.exclusion(program) is None
    monkeypatch.setenv("SERQ_SIM_TIER", "" if tier == "fast" else "general")
    report = serq_sim.run(program)
    assert report.tier == tier
    wrong = []
    for k, (a, b) in enumerate(pairs):
        f, c = report.observe(f"f{k}").values[0], report.observe(f"c{k}").values[0]
        v = _fold(form, _number(a), None if b is None else _number(b))
        if not (_same(float(f), float(c)) and _same(v, float(c))):
            wrong.append(f"{form.format(a=a, b=b)}: folded {v!r} (observed {f!r}), computed {c!r}")
    assert not wrong, wrong


def test_a_nan_constant_is_a_value_where_the_program_keeps_one():
    src = ("stage s : delay;\nworkload { arrive batch(2); }\ngauge g = 0 * inf;\nsession {\n  set y = 5;\n"
           "  set n = inf - inf;\n  observe x = 5 % 0;\n  observe z = y % 0;\n  observe m = n;\n"
           "  observe w = (5 % 0) + 1;\n  observe t = (5 % 0) ? 1 : 2;\n  record r { c = 0 / 0; }\n  run s (1);\n}\n"
           "run { horizon 10; }\n")
    program = serq_frontend.compile(source=src)
    for tier in ("", "general"):
        import os

        os.environ["SERQ_SIM_TIER"] = tier
        try:
            report = serq_sim.run(program)
        finally:
            del os.environ["SERQ_SIM_TIER"]
        for name in ("x", "z", "m", "w"):
            assert all(math.isnan(v) for v in report.observe(name).values), (tier, name)
        assert list(report.observe("t").values) == [1.0, 1.0]  # NaN is non-zero, so true
        assert math.isnan(report.result.gauges["g"].mean)
