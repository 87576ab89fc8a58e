"""Conformance of language.txt §2, Expressions, by hand, at the edge values: "arithmetic, comparisons (0/1),
&&, ||, !, c ? a : b (a non-zero operand is true; only a branch guard is held to 0 or 1)", the functions
"min, max, abs, floor, ceil, sqrt, exp, ln, pow" and the aggregates "max j in n (e), min j in n (e), sum j in
n (e)", over the doubles' signed zeros, infinities and NaN (docs/language.md, Rules chosen where the spec is
silent: `%` is C's fmod, `min`/`max` pass over NaN and keep the first of equal operands, NaN is true, `pow`
is IEEE 754's, `floor`/`ceil` of a value that rounds to zero give 0).

Every expression is written twice in one program: over attributes the session computes (`z = serial -
serial`, 0; `nz = -z`, -0; `i = 1 / z`, inf; `n = z / z`, NaN), so the simulator evaluates it, and over
the constants themselves (`0`, `-0`, `inf`, `0 / 0`), so the linker folds it. Both must give the value
derived in the row's comment, bit for bit (the sign of a zero included: `1 / x` tells -0 from 0), and the
report's JSON must give it as the observe's mean (null for NaN and the infinities, which JSON has not).
The program runs on the tier serQ picks and on the general engine (conform.run: the same JSON reports and
samples).
"""

from __future__ import annotations

import math

import pytest
from conform import report_json, run

INF, NAN = math.inf, math.nan

CASES = [
    # -- arithmetic: every number is a double, so a quotient of whole numbers is not cut to one
    ("7 / 2", 3.5),                          # 3.5, no integer division
    ("(Z + 7) / 2", 3.5),                    # the same computed
    ("8 / 2 / 2", 2.0),                      # left-associative: (8 / 2) / 2
    ("2 - 3 - 4", -5.0),                     # (2 - 3) - 4
    ("7 - 2 * 3 % 4", 5.0),                  # * and % one level, left to right: (2 * 3) % 4 = 2; 7 - 2
    ("-2 * -3", 6.0),                        # unary minus binds tighter than *
    ("1 / Z", INF),                          # IEEE: a positive number over +0
    ("1 / NZ", -INF),                        # over -0
    ("-1 / Z", -INF),
    ("Z / Z", NAN),                          # 0 / 0
    ("0 * I", NAN),                          # 0 · inf
    ("I - I", NAN),
    ("I + 1e308", INF),
    ("1e308 * 10 == I", 1.0),                # a product beyond the doubles is inf (a literal so large is refused)
    ("0.1 + 0.2 == 0.3", 0.0),               # doubles: 0.30000000000000004
    ("Z * -1", -0.0),                        # 0 · -1 is -0
    ("NZ + Z", 0.0),                         # -0 + 0 is +0 under round-to-nearest
    # -- % is the remainder of truncated division, the sign of the dividend
    ("-7 % 3", -1.0),
    ("7 % -3", 1.0),
    ("7.5 % 2", 1.5),
    ("1 % Z", NAN),
    ("5 % I", 5.0),
    ("I % 2", NAN),
    ("NZ % 5", -0.0),                        # fmod keeps the dividend's zero
    # -- comparisons are 0 or 1; -0 equals 0, inf equals itself, NaN compares false except !=
    ("NZ == Z", 1.0),
    ("NZ < Z", 0.0),
    ("NZ <= Z", 1.0),
    ("I > 1e308", 1.0),
    ("-I < -1e308", 1.0),
    ("I == I", 1.0),
    ("I >= I", 1.0),
    ("N == N", 0.0),
    ("N != N", 1.0),
    ("N < 1", 0.0),
    ("N >= 1", 0.0),
    ("3 > 2 > 1", 0.0),                      # (3 > 2) > 1 is 1 > 1
    ("1 + 2 * 3 == 7", 1.0),                 # arithmetic binds tighter than a comparison
    # -- logic and the conditional: a non-zero operand is true, NaN included; ±0 is false
    ("2 && 3", 1.0),                         # 0 or 1, not the operand
    ("0 || -1", 1.0),
    ("N && 1", 1.0),
    ("NZ || Z", 0.0),
    ("!N", 0.0),
    ("!NZ", 1.0),
    ("!0 + 1", 2.0),                         # ! binds tighter than +: (!0) + 1
    ("1 || 0 && 0", 1.0),                    # && binds tighter: 1 || (0 && 0)
    ("Z ? 1 : 2", 2.0),
    ("NZ ? 1 : 2", 2.0),
    ("N ? 1 : 2", 1.0),
    ("-1 ? 1 : 2", 1.0),
    ("0.5 ? 3 : 4", 3.0),                    # a fraction is true outside a guard
    ("Z ? 1 : Z ? 2 : 3", 3.0),              # nests to the right: Z ? 1 : (Z ? 2 : 3)
    # -- min and max: NaN passed over, the first of equal operands kept (its zero's sign)
    ("min(N, 1)", 1.0),
    ("max(1, N)", 1.0),
    ("min(N, N)", NAN),
    ("min(Z, NZ)", 0.0),
    ("min(NZ, Z)", -0.0),
    ("max(NZ, Z)", -0.0),
    ("max(Z, NZ)", 0.0),
    ("min(3, -I, 2)", -INF),
    ("max(3, 7, 2, I)", INF),
    # -- the functions at their edges
    ("abs(NZ)", 0.0),                        # |-0| is +0
    ("abs(-I)", INF),
    ("floor(-2.5)", -3.0),
    ("ceil(-2.5)", -2.0),
    ("floor(2.5)", 2.0),
    ("ceil(2.0000001)", 3.0),
    ("floor(I)", INF),                       # an infinity is itself
    ("ceil(-I)", -INF),
    ("floor(N)", NAN),
    ("ceil(Z - 0.5)", 0.0),                  # serQ's choice: a zero result is +0 (docs/language.md)
    ("floor(NZ)", 0.0),
    ("sqrt(Z - 1)", NAN),
    ("sqrt(NZ)", -0.0),                      # IEEE: sqrt(-0) is -0
    ("sqrt(I)", INF),
    ("ln(Z)", -INF),
    ("ln(NZ)", -INF),
    ("ln(Z - 1)", NAN),
    ("ln(I)", INF),
    ("exp(-I)", 0.0),
    ("exp(Z + 1000)", INF),                  # past the largest double
    ("exp(Z)", 1.0),
    ("pow(Z, Z)", 1.0),                      # IEEE pow(0, 0) = 1
    ("pow(N, 0)", 1.0),                      # pow(x, ±0) = 1 for every x, NaN included
    ("pow(Z, -1)", INF),
    ("pow(NZ, -1)", -INF),                   # -0 to an odd negative power
    ("pow(NZ, -2)", INF),                    # to an even one
    ("pow(-8, 1 / 3)", NAN),                 # a negative base to a power not whole
    ("pow(-2, 3)", -8.0),
    ("pow(2, I)", INF),
    ("pow(0.5, I)", 0.0),
    ("pow(Z + 10, 400)", INF),               # 1e400, past the range
    # -- aggregates, written out with j = 0 … n-1
    ("max j in 3 (j * (2 - j))", 1.0),       # max(0, 1, 0)
    ("min j in 3 (5 - j)", 3.0),             # min(5, 4, 3)
    ("sum j in 4 (j)", 6.0),                 # 0 + 1 + 2 + 3
    ("sum j in 3 (j == 1 ? N : 1)", NAN),    # a sum keeps a NaN term
    ("min j in 3 (j == 0 ? N : 4 - j)", 2.0),  # min passes over it: min(NaN, 3, 2)
]

COMPUTED = {"Z": "z", "NZ": "nz", "I": "i", "N": "n"}
FOLDED = {"Z": "0", "NZ": "(-0)", "I": "inf", "N": "(0 / 0)"}


def _written(expr: str, names: dict) -> str:
    # NZ before Z, which it contains
    for k in ("NZ", "Z", "I", "N"):
        expr = expr.replace(k, names[k])
    return expr


def _program() -> str:
    lines = [f"  observe c{k} = {_written(e, COMPUTED)};\n  observe f{k} = {_written(e, FOLDED)};"
             for k, (e, _v) in enumerate(CASES)]
    return ("stage d : delay;\nworkload { arrive batch(1); }\nsession {\n"
            "  set z = serial - serial;\n  set nz = -z;\n  set i = 1 / z;\n  set n = z / z;\n"
            + "\n".join(lines) + "\n  run d (1);\n}\nrun { horizon 2; }\n")


@pytest.fixture(scope="module")
def outcome():
    with pytest.MonkeyPatch.context() as mp:
        r, obs = run(_program(), mp)
    return report_json(r)["observes"], obs


def _same(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


@pytest.mark.parametrize("k", range(len(CASES)), ids=[e for e, _v in CASES])
def test_an_expression_at_its_edge_values(outcome, k):
    js, obs = outcome
    want = CASES[k][1]
    for way in ("c", "f"):
        (_s, t, got), = obs[f"{way}{k}"]
        assert t == 0.0 and _same(got, want), (way, CASES[k][0], got, want)
        mean = js[f"{way}{k}"]["mean"]
        assert mean == (want if math.isfinite(want) else None), (way, mean)
